"""Left-right mirror symmetry of a quadruped policy: its observation and action reflected in the sagittal plane.

A quadruped is its own mirror image (y -> -y in the body frame): a state mirrored is a state the robot can
be in, and the right answer to it is the mirrored answer. A policy trained without being told so can
still settle on a lopsided gait (one leg swinging twice as fast as its mirror twin), which the safety
monitor then catches as that leg's overspeed. The symmetry loss (`LearnerConfig.symmetry`) asks the
actor for  pi(mirror_obs(o)) = mirror_action(pi(o)), as legged-robot RL commonly does. It is a loss, not a
network built symmetric, because robots are only nearly symmetric (the Go1 model's base centre of mass
sits 2 mm left of centre).

What a reflection does, term by term (SDK leg order FR, FL, RR, RL):
- vectors (linear velocity, gravity direction): y changes sign;
- angular velocity, a pseudovector: x and z change sign, y stays;
- command (vx, vy, yaw rate): vy and yaw rate change sign;
- joints: FR <-> FL and RR <-> RL; hip angles change sign (their axis is x), thigh and calf keep it
  (their axis is y, which a pseudovector keeps);
- gait clock (sin of the 4 legs' phases, then cos) and gait parameters' per-leg phase offsets: the legs swap.
  A mirrored trot is a trot half a period on; a mirrored gallop leads with the other foreleg.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from surrogait_core.policy.contract import PolicyContract
from surrogait_core.robot_spec import SDK_LEG_ORDER

MIRROR_LEG = {"FR": "FL", "FL": "FR", "RR": "RL", "RL": "RR"}
_VECTOR = ((0, 1.0), (1, -1.0), (2, 1.0))  # (source index, sign) per output component
_PSEUDOVECTOR = ((0, -1.0), (1, 1.0), (2, -1.0))
_COMMAND = ((0, 1.0), (1, -1.0), (2, -1.0))  # vx, vy, yaw rate


@dataclasses.dataclass(frozen=True)
class Mirror:
    """mirrored[..., i] = sign[i] * x[..., index[i]]: a signed permutation (its own inverse)."""

    index: np.ndarray  # (size,) int
    sign: np.ndarray  # (size,) float, +-1

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        index = torch.as_tensor(self.index, device=x.device)
        return x[..., index] * torch.as_tensor(self.sign, dtype=x.dtype, device=x.device)

    def numpy(self, x: np.ndarray) -> np.ndarray:
        return x[..., self.index] * self.sign


def joint_mirror(joint_names: tuple[str, ...]) -> Mirror:
    """The reflection of per-joint values ("FR_hip", ... in any order): legs swap, hips change sign."""
    index, sign = [], []
    for name in joint_names:
        leg, _, joint = name.partition("_")
        if leg not in MIRROR_LEG:
            raise ValueError(f"joint {name!r}: expected a leg prefix FR_, FL_, RR_ or RL_ to mirror it")
        index.append(joint_names.index(f"{MIRROR_LEG[leg]}_{joint}"))
        sign.append(-1.0 if joint == "hip" else 1.0)
    return Mirror(np.array(index), np.array(sign))


def _leg_swap(per_leg_blocks: int) -> list[tuple[int, float]]:
    """Blocks of 4 per-leg values in SDK leg order, legs swapped."""
    swap = [SDK_LEG_ORDER.index(MIRROR_LEG[leg]) for leg in SDK_LEG_ORDER]
    return [(4 * b + swap[i], 1.0) for b in range(per_leg_blocks) for i in range(4)]


def observation_mirror(contract: PolicyContract) -> Mirror:
    """The reflection of the contract's observation vector (term scales and clips are symmetric: they commute)."""
    joints = joint_mirror(contract.joint_names)
    joint_rule = list(zip(joints.index.tolist(), joints.sign.tolist(), strict=True))
    rules: dict[str, list[tuple[int, float]]] = {
        "base_lin_vel_b": list(_VECTOR),
        "base_ang_vel_b": list(_PSEUDOVECTOR),
        "projected_gravity_b": list(_VECTOR),
        "command": list(_COMMAND),
        "joint_pos_rel": joint_rule,
        "joint_vel": joint_rule,
        "last_action": joint_rule,
        "gait_clock": _leg_swap(2),  # sin of the 4 legs' phases, then cos
        "gait_params": [(0, 1.0), (1, 1.0)] + [(2 + i, s) for i, s in _leg_swap(1)],  # period, duty, offsets
    }
    index, sign, start = [], [], 0
    for term in contract.observation:
        if term.name not in rules:
            raise ValueError(f"observation term {term.name!r} has no mirror rule; known: {sorted(rules)}")
        rule = rules[term.name]
        if len(rule) != term.size:
            raise ValueError(f"observation term {term.name!r} has size {term.size}; its mirror rule covers {len(rule)}")
        index += [start + i for i, _ in rule]
        sign += [s for _, s in rule]
        start += term.size
    return Mirror(np.array(index), np.array(sign))


def action_mirror(contract: PolicyContract) -> Mirror:
    """The reflection of an action. Actions map to targets as offset + scale * a, so mirroring actions
    mirrors targets only where the default pose and the scales are themselves mirror-symmetric."""
    joints = joint_mirror(contract.joint_names)
    offset, scale = np.asarray(contract.action.offset), np.asarray(contract.action.scale)
    if not (np.allclose(joints.numpy(offset), offset, atol=1e-6) and np.allclose(scale[joints.index], scale)):
        raise ValueError(
            f"robot {contract.robot!r}: the action's offset (default pose) or scale is not left-right symmetric "
            "(hips opposite, thighs and calves equal), so a mirrored action is not a mirrored target; "
            "train without learner.symmetry or make the default pose symmetric"
        )
    return joints


def mirror_difference(
    actor: torch.nn.Module, obs: torch.Tensor, obs_mirror: Mirror, act_mirror: Mirror
) -> torch.Tensor:
    """The actor's answer to the mirrored observations minus its mirrored answer, (..., actions) in action
    units; zero for a symmetric policy, differentiable in the actor's parameters."""
    return actor(obs_mirror(obs)) - act_mirror(actor(obs))


def left_right_imbalance(value_by_joint: dict[str, float]) -> tuple[float, str]:
    """max over joints of value / value of its mirror twin (e.g. RMS speeds; >= 1, 1 = symmetric), and that joint."""
    ratio, joint = 1.0, ""
    for name, value in value_by_joint.items():
        leg, _, rest = name.partition("_")
        twin = value_by_joint.get(f"{MIRROR_LEG.get(leg, leg)}_{rest}", value)
        if twin > 0 and value / twin > ratio:
            ratio, joint = value / twin, name
    return ratio, joint
