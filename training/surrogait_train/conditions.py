"""Evaluation conditions: one fixed way the world differs from the training simulator.

`evaluate_policy(path, condition=...)` runs the eval's episodes under a condition; the robustness
matrix (`ROBUSTNESS_MATRIX`, run by bench/robustness.py and `surrogait-train eval --condition NAME`)
is the fixed set every shipped policy is measured against.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from surrogait_train.randomization import RobotVariation, delay_steps


@dataclasses.dataclass(frozen=True)
class EvalCondition:
    name: str = "nominal"
    friction: float | None = None  # foot-ground sliding friction; None = the model's own
    added_base_mass_kg: float = 0.0
    kp_scale: float = 1.0  # motor strength: the robot's kp is the contract's times this
    kd_scale: float = 1.0
    action_delay_s: float = 0.0  # new joint targets reach the motors this late (physics-step resolution)
    lateral_push_m_s: float = 0.0  # base-velocity kicks to the robot's left, then its right, at push_times_s
    push_times_s: tuple[float, ...] = (4.0, 7.0)
    command_flip_period_s: float = 0.0  # vy and yaw-rate commands change sign every this many seconds (0: never)
    model_variant: str = ""  # surrogait_train.model_variants
    joint_damping: float | None = None  # N m s/rad on every leg joint; None = the model's own
    joint_friction_loss: float | None = None  # N m

    def variation(self, num_robots: int, model_friction: float, physics_dt_s: float) -> RobotVariation | None:
        """The robots' physical parameters under this condition (None: the model as it is)."""
        physical = (self.friction, self.added_base_mass_kg, self.kp_scale, self.kd_scale, self.action_delay_s,
                    self.joint_damping, self.joint_friction_loss)
        if physical == (None, 0.0, 1.0, 1.0, 0.0, None, None):
            return None
        v = RobotVariation.nominal(num_robots, model_friction if self.friction is None else self.friction)
        v.added_base_mass_kg[:] = self.added_base_mass_kg
        v.kp_scale[:] = self.kp_scale
        v.kd_scale[:] = self.kd_scale
        v.action_delay_steps[:] = delay_steps(self.action_delay_s, physics_dt_s)
        if self.joint_damping is not None:
            v.joint_damping[:] = self.joint_damping
        if self.joint_friction_loss is not None:
            v.joint_friction_loss[:] = self.joint_friction_loss
        return v

    def commands_at(self, commands: np.ndarray, t_s: float) -> np.ndarray:
        """The commands (N, 3) in force at time t_s of the episode."""
        if self.command_flip_period_s <= 0 or int(t_s // self.command_flip_period_s) % 2 == 0:
            return commands
        return commands * np.array([1.0, -1.0, -1.0])

    def push_at_step(self, step: int, control_dt_s: float) -> float:
        """The lateral kick (m/s, + = left) applied at this control step, 0 if none."""
        for i, t in enumerate(self.push_times_s):
            if self.lateral_push_m_s and step == int(round(t / control_dt_s)):
                return self.lateral_push_m_s * (1.0 if i % 2 == 0 else -1.0)
        return 0.0


NOMINAL = EvalCondition()

ROBUSTNESS_MATRIX: tuple[EvalCondition, ...] = (
    NOMINAL,
    EvalCondition("friction 0.25", friction=0.25),
    EvalCondition("+3 kg", added_base_mass_kg=3.0),
    EvalCondition("-1 kg", added_base_mass_kg=-1.0),
    EvalCondition("kp x 0.8", kp_scale=0.8),
    EvalCondition("delay 10 ms", action_delay_s=0.010),
    EvalCondition("delay 20 ms", action_delay_s=0.020),
    EvalCondition("push 0.6 m/s", lateral_push_m_s=0.6),
    EvalCondition("flipping vy, yaw", command_flip_period_s=2.0),
    EvalCondition("other contact model", model_variant="other_contact_model"),
    # MuJoCo Menagerie's Go2 and Go1 damp every leg joint 20x more than ours (2 against 0.1 N m s/rad)
    EvalCondition("damped joints", joint_damping=2.0, joint_friction_loss=0.3),
)


# Harder than the matrix, used to choose among checkpoints that meet it (surrogait_bringup/policies/README.md): a
# stronger kick at other times, and two perturbations at once.
BEYOND_THE_MATRIX: tuple[EvalCondition, ...] = (
    EvalCondition("push 0.8 m/s at 3 s and 6.5 s", lateral_push_m_s=0.8, push_times_s=(3.0, 6.5)),
    EvalCondition("delay 20 ms, friction 0.4", friction=0.4, action_delay_s=0.02),
    EvalCondition("+3 kg, kp and kd x 0.8", added_base_mass_kg=3.0, kp_scale=0.8, kd_scale=0.8),
)


def condition_by_name(name: str) -> EvalCondition:
    for c in (*ROBUSTNESS_MATRIX, *BEYOND_THE_MATRIX):
        if c.name == name:
            return c
    names = ", ".join(repr(c.name) for c in (*ROBUSTNESS_MATRIX, *BEYOND_THE_MATRIX))
    raise ValueError(f"unknown condition {name!r}; the robustness matrix has: {names}")
