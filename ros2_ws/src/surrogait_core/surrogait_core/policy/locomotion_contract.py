"""The default contract of a surrogait locomotion policy for a robot spec.

Defaults live in one place each: the contract's own fields (control period, gait, command ranges)
in `PolicyContract`, the soft joint range's fraction in the trainer's config
(`EnvConfig.soft_joint_range_fraction`), which passes it here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from surrogait_core.policy.contract import ActionSpec, CommandRanges, GaitSpec, PolicyContract
from surrogait_core.policy.observation import default_observation_terms
from surrogait_core.robot_spec import RobotSpec

ACTION_SCALE = 0.25  # rad per unit action around the default pose


def soft_joint_range(lower: np.ndarray, upper: np.ndarray, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """The hard range [lower, upper] (rad) shrunk about its centre to `fraction` of its width.

    As legged_gym's `soft_dof_pos_limit`: joint targets stay this far inside the stops.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"soft joint range fraction must be in (0, 1), got {fraction}")
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    centre, half = 0.5 * (lower + upper), 0.5 * (upper - lower) * fraction
    return centre - half, centre + half


def make_locomotion_contract(
    spec: RobotSpec,
    soft_joint_range_fraction: float,
    gait: GaitSpec | None = None,
    command_ranges: CommandRanges | None = None,
    with_base_lin_vel: bool = False,
    control_dt_s: float | None = None,
    kp: float | Sequence[float] | None = None,
    kd: float | Sequence[float] | None = None,
    gaits: Sequence[GaitSpec] = (),
) -> PolicyContract:
    """The contract for `spec`: its default pose and joint order, the soft range `soft_joint_range_fraction`
    of its joint range. None takes the contract's default (gait, command ranges, control period) or the
    spec's nominal gain (kp, kd); a gain is one value for every joint or one per joint (SDK order).
    `gaits`: a multi-gait policy (the gait's parameters become inputs; `gait` is the first of them)."""
    if gaits:
        gait = gaits[0]
    n = spec.num_joints
    default_pose = tuple(float(x) for x in spec.default_joint_pos)
    soft_lower, soft_upper = soft_joint_range(spec.joint_pos_lower, spec.joint_pos_upper, soft_joint_range_fraction)
    given = {"gait": gait, "command_ranges": command_ranges, "control_dt_s": control_dt_s}
    return PolicyContract(
        robot=spec.name,
        joint_names=spec.joint_names,
        observation=default_observation_terms(with_base_lin_vel, multi_gait=bool(gaits)),
        action=ActionSpec(scale=(ACTION_SCALE,) * n, offset=default_pose),
        kp=_per_joint("kp", kp, spec.nominal_kp, n),
        kd=_per_joint("kd", kd, spec.nominal_kd, n),
        default_joint_pos=default_pose,
        soft_joint_pos_lower=tuple(float(x) for x in soft_lower),
        soft_joint_pos_upper=tuple(float(x) for x in soft_upper),
        gaits=tuple(gaits),
        **{name: value for name, value in given.items() if value is not None},
    )


def _per_joint(name: str, gain: float | Sequence[float] | None, nominal: float, n: int) -> tuple[float, ...]:
    values = np.atleast_1d(np.asarray(nominal if gain is None else gain, dtype=np.float64))
    if values.size == 1:
        values = np.full(n, values[0])
    if values.shape != (n,):
        raise ValueError(f"{name} must be one value or {n} values (one per joint, SDK order), got {values.size}")
    return tuple(float(x) for x in values)
