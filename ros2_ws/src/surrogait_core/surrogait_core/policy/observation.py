"""The observation builder shared by training, evaluation and the policy node.

It knows nothing of where values come from: callers pass each term's raw value (SDK joint
order, body frame) and the builder applies the contract's scale and clip and concatenates
in the contract's order. It works on numpy arrays and, for the trainer, on torch tensors
(both have `.clip`), so the gradients of a differentiable rollout flow through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from surrogait_core.policy.contract import ObsTerm, PolicyContract

# Raw terms a policy may ask for; each is (..., size) in the frames named.
KNOWN_TERMS: dict[str, str] = {
    "base_lin_vel_b": "base linear velocity in the body frame, m/s (from the state estimator)",
    "base_ang_vel_b": "base angular velocity in the body frame (IMU gyroscope), rad/s",
    "projected_gravity_b": "unit gravity direction in the body frame",
    "command": "velocity command (vx m/s, vy m/s, yaw rate rad/s), body frame",
    "joint_pos_rel": "joint position minus the contract's default_joint_pos, rad, SDK order",
    "joint_vel": "joint velocity, rad/s, SDK order",
    "last_action": "the policy's previous (clipped) action",
    "gait_clock": "sin and cos of each leg's gait phase",
    "gait_params": "the gait's period (s), duty factor and 4 phase offsets (cycles): a multi-gait policy's choice",
}


# The state estimator's base velocity, where a contract asks for it (first in the standard observation; appended by
# the trainer's env.observe_base_lin_vel)
BASE_LIN_VEL_TERM = ObsTerm("base_lin_vel_b", 3, scale=2.0, source="estimator")


def default_observation_terms(with_base_lin_vel: bool = False, multi_gait: bool = False) -> tuple[ObsTerm, ...]:
    """The standard observation of a surrogait locomotion policy (`multi_gait`: and the gait's parameters)."""
    terms = [
        ObsTerm("base_ang_vel_b", 3, scale=0.25),
        ObsTerm("projected_gravity_b", 3),
        ObsTerm("command", 3, source="command"),
        ObsTerm("joint_pos_rel", 12),
        ObsTerm("joint_vel", 12, scale=0.05),
        ObsTerm("last_action", 12, source="policy"),
        ObsTerm("gait_clock", 8, source="gait_clock"),
    ]
    if with_base_lin_vel:
        terms.insert(0, BASE_LIN_VEL_TERM)
    if multi_gait:
        terms.append(ObsTerm("gait_params", 6, scale=2.0, source="gait"))
    return tuple(terms)


class ObservationBuilder:
    def __init__(self, contract: PolicyContract):
        unknown = [t.name for t in contract.observation if t.name not in KNOWN_TERMS]
        if unknown:
            raise ValueError(f"contract asks for unknown observation terms {unknown}; known: {sorted(KNOWN_TERMS)}")
        self.terms = contract.observation
        self.size = contract.obs_size

    def build(self, raw: Mapping[str, Any]) -> Any:
        """Scale, clip and concatenate the raw term values (numpy or torch, batched or not)."""
        parts = []
        for term in self.terms:
            if term.name not in raw:
                raise KeyError(f"observation term {term.name!r} was not provided")
            value = raw[term.name]
            if value.shape[-1] != term.size:
                raise ValueError(
                    f"observation term {term.name!r} has size {value.shape[-1]}, contract says {term.size}"
                )
            parts.append((value * term.scale).clip(-term.clip, term.clip))
        if isinstance(parts[0], np.ndarray):
            return np.concatenate(parts, axis=-1).astype(np.float32)
        import torch

        return torch.cat(parts, dim=-1)


def projected_gravity(quat_wxyz: np.ndarray) -> np.ndarray:
    """World gravity direction (0, 0, -1) expressed in the body frame of orientation q."""
    w, x, y, z = np.moveaxis(np.asarray(quat_wxyz, dtype=np.float64), -1, 0)
    # third row of R(q), negated: R^T · (0, 0, -1)
    return -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)
