"""The differentiable rollout: MuJoCo's values, the surrogate's gradients.

`SurrogateRollout(env, surrogate, gradient_decay)` steps a `LocomotionEnv` with actions that
carry gradients. Each step the surrogate predicts the next state from the previous (aligned)
state and the joint targets; the state is then aligned to MuJoCo and its carried gradient decayed:

    x_{t+1} = x_sur + (x_sim - x_sur).detach()          # value: MuJoCo's; gradient: the surrogate's
    x_{t+1} = g x_{t+1} + (1 - g) x_{t+1}.detach()      # gradients shrink by g per step

Both are implemented in the algebraically equal form x_sim + g (x_sur - x_sur.detach()), whose
value is bit-for-bit MuJoCo's (x_sur - x_sur.detach() is exactly zero in floating point).

Rewards and observations are computed from x_{t+1}, so d(reward)/d(policy parameters) flows
through the surrogate, the leg kinematics and the observation builder. Robots that reset get a
fresh detached state (gradients cut at resets); `detach_state()` cuts them at window ends.
"""

from __future__ import annotations

import torch

from surrogait_train.env import LocomotionEnv
from surrogait_train.state import RobotState
from surrogait_train.surrogate import RobotDynamics, Surrogate


class SurrogateRollout:
    def __init__(self, env: LocomotionEnv, surrogate: Surrogate, gradient_decay: float = 0.6):
        self.env = env
        self.surrogate = surrogate
        self.decay = gradient_decay

    def _align(
        self,
        prev: RobotState,
        joint_targets: torch.Tensor,
        sim: RobotState,
        touch: torch.Tensor,
        dynamics: RobotDynamics,
    ) -> RobotState:
        sur = self.surrogate(prev, joint_targets, touch, dynamics)
        g = self.decay
        return sur.map(lambda s, x: x.detach() + g * (s - s.detach()), sim)

    def step(self, actions: torch.Tensor):
        return self.env._step(actions, self._align)

    def detach_state(self) -> None:
        """Cut gradients between windows (the state values are kept)."""
        self.env.state = self.env.state.detach()
        self.env.last_action = self.env.last_action.detach()
