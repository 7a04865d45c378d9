"""Safety thresholds: a plain dataclass whose defaults are derived from the robot spec.

Every number here is either a fraction/margin applied to a limit read from the robot's MJCF
(`RobotSpec`), or a time expressed in control periods. YAML may override any field
(`thresholds_from_params`); unknown or malformed keys are refused with a clear message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from surrogait_core.robot_spec import RobotSpec


class ThresholdError(ValueError):
    """A safety parameter is unknown or malformed; the message names it and says what to do."""


@dataclasses.dataclass(frozen=True)
class SafetyThresholds:
    # Limits from the spec (SDK joint order).
    joint_pos_lower: np.ndarray  # rad
    joint_pos_upper: np.ndarray  # rad
    joint_vel_limit: np.ndarray  # rad/s
    joint_torque_limit: np.ndarray  # N·m
    standing_base_height_m: float

    control_period_s: float = 0.02
    # Joint position: a standing/walking robot must stay this far inside its limits.
    joint_pos_margin_rad: float = 0.05
    # Joint velocity: fault above this fraction of the motor's rated velocity limit. At 1.0: beyond
    # what the motor can do, the joint is being driven by the world (a fall), not by the motor;
    # the shipped (preliminary, jerky) trot reaches 0.9 of the knee's limit in normal walking.
    joint_vel_fraction: float = 1.0
    # Estimated torque: fault when held at or above this fraction of the limit for longer
    # than tau_est_persist_s (a motor saturated that long cannot hold what it is told).
    tau_est_fraction: float = 0.95
    tau_est_persist_s: float = 0.1
    # Commanded torque kp·(q*−q)+kd·(dq*−dq)+τff of a stiff command, against this multiple of the
    # limit. Above 1 the driver clips it; far above, the command is nonsense (a target far away).
    commanded_torque_factor: float = 1.5
    # Commanded targets may not leave [lower − margin, upper + margin]. Default: the overshoot at
    # which the nominal kp pushes a joint into its stop with a quarter of the weakest motor's
    # torque (≈ 0.15 rad on the Go2). Policies without target clipping overshoot a little (the
    # shipped one by 0.12 rad at the knee), and a stand-up starts from joints resting on their stops.
    target_limit_margin_rad: float = 0.0  # set by default_thresholds()
    # A target may not move faster than target_jump_factor × the joint's velocity limit between
    # consecutive stiff commands (per control period). 3: three times what the motor can follow,
    # a glitch rather than a gait (the shipped trot steps a knee target by up to 2.05× that, 0.82 rad
    # in one period); the torque rules bound what any target can do to the motors.
    target_jump_factor: float = 3.0
    # Base attitude (from the IMU quaternion), rad.
    max_roll_rad: float = 0.6
    max_pitch_rad: float = 0.6
    # Base too low while standing/walking: below this fraction of the standing height.
    min_base_height_fraction: float = 0.6
    # Stale robot state / silent policy, in control periods.
    stale_state_periods: float = 3.0
    policy_silent_periods: float = 3.0
    # The monitor writes damping itself when nobody else damps within this many periods.
    damping_grace_periods: float = 2.0
    # Damping gain of the monitor's own damping LowCmds, N·m·s/rad. Default: the largest kd for
    # which kd·|dq| stays within every motor's torque limit up to its velocity limit.
    damping_kd: float = 0.0  # set by default_thresholds()
    # Reset is allowed only when the robot lies still: every joint and the base gyro below these.
    reset_max_joint_vel: float = 0.3  # rad/s
    reset_max_gyro: float = 0.3  # rad/s

    @property
    def stale_state_s(self) -> float:
        return self.stale_state_periods * self.control_period_s

    @property
    def policy_silent_s(self) -> float:
        return self.policy_silent_periods * self.control_period_s

    @property
    def damping_grace_s(self) -> float:
        return self.damping_grace_periods * self.control_period_s

    @property
    def min_base_height_m(self) -> float:
        return self.min_base_height_fraction * self.standing_base_height_m


# Fields YAML may set (the limit arrays come from the spec, never from YAML).
TUNABLE_FIELDS = tuple(
    f.name for f in dataclasses.fields(SafetyThresholds) if f.type in ("float", float)
    and f.name != "standing_base_height_m"
)


def default_thresholds(spec: RobotSpec, control_period_s: float = 0.02) -> SafetyThresholds:
    """Thresholds for `spec` with the defaults above (limits and heights from its MJCF)."""
    damping_kd = float(np.min(spec.joint_torque_limit / spec.joint_vel_limit))
    target_margin = float(0.25 * np.min(spec.joint_torque_limit) / spec.nominal_kp)
    return SafetyThresholds(
        joint_pos_lower=spec.joint_pos_lower.copy(),
        joint_pos_upper=spec.joint_pos_upper.copy(),
        joint_vel_limit=spec.joint_vel_limit.copy(),
        joint_torque_limit=spec.joint_torque_limit.copy(),
        standing_base_height_m=spec.standing_base_height_m,
        control_period_s=control_period_s,
        damping_kd=damping_kd,
        target_limit_margin_rad=target_margin,
    )


def thresholds_from_params(spec: RobotSpec, params: Mapping[str, Any]) -> SafetyThresholds:
    """Spec-derived defaults overridden by `params` (e.g. the node's YAML); validates each value."""
    unknown = sorted(set(params) - set(TUNABLE_FIELDS))
    if unknown:
        raise ThresholdError(f"unknown safety parameter(s) {unknown}; known: {', '.join(TUNABLE_FIELDS)}")
    values: dict[str, float] = {}
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
            raise ThresholdError(f"safety parameter {name!r} must be a finite number >= 0, got {value!r}")
        values[name] = float(value)
    base = default_thresholds(spec, values.pop("control_period_s", 0.02))
    if base.control_period_s <= 0:
        raise ThresholdError("safety parameter 'control_period_s' must be > 0 (the policy's control period)")
    out = dataclasses.replace(base, **values)
    if out.damping_kd <= 0:
        raise ThresholdError("safety parameter 'damping_kd' must be > 0: damping needs kd > 0")
    return out
