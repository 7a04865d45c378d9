"""Safety thresholds: a plain dataclass whose defaults are derived from the robot spec.

Every number here is either a fraction/margin applied to a limit read from the robot's MJCF
(`RobotSpec`) or from the policy file's contract (soft joint range), or a time expressed in
control periods (the contract's). YAML may override any field
(`thresholds_from_params`); unknown or malformed keys are refused with a clear message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from surrogait_core.policy.contract import PolicyContract
from surrogait_core.robot_spec import RobotSpec


class ThresholdError(ValueError):
    """A safety parameter is unknown or malformed; the message names it and says what to do."""


@dataclasses.dataclass(frozen=True)
class SafetyThresholds:
    # Limits from the spec (SDK joint order).
    joint_pos_lower: np.ndarray  # rad, the hard range (the joint's stops)
    joint_pos_upper: np.ndarray  # rad
    joint_vel_limit: np.ndarray  # rad/s
    joint_torque_limit: np.ndarray  # N·m
    standing_base_height_m: float
    # From the policy file's contract: the soft range training kept the joints in and the policy
    # node clips targets to. Without a contract (unit tests) it is the hard range.
    soft_joint_pos_lower: np.ndarray | None = None  # rad
    soft_joint_pos_upper: np.ndarray | None = None  # rad

    # The policy's contract's control_dt_s, never typed in YAML; without a contract (unit tests), the
    # contract's default.
    control_period_s: float = PolicyContract.control_dt_s
    # Joint position: a standing/walking robot faults this far from its soft limit towards the hard
    # one (0: at the soft limit, 1: at the stop). Strictly between the two, so a policy that honours its
    # contract (targets clipped to the soft range, joints overshooting them a little) never trips it.
    joint_pos_fault_fraction: float = 0.75
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
    # Stale robot state, in control periods (judged only while the motors are driven): 50 ms is 25
    # missed samples of the robot's 500 Hz stream, above the 44 ms whole-machine stalls seen on a
    # shared 2-core rehearsal host, and it fires before the policy node's own 60 ms time-out.
    stale_state_periods: float = 2.5
    # Silent command stream: no LowCmd for this many of the stream's own periods (measured on the
    # wire: 2 ms at 500 Hz, 20 ms at 50 Hz), and never less than policy_silent_min_s, which covers
    # a stall of the writer on a loaded computer (up to 31 ms seen in 60 rehearsal sessions on a
    # shared 2-core host) while a dead policy is still damped within 60 ms.
    policy_silent_periods: float = 3.0
    policy_silent_min_s: float = 0.04
    # Stalled policy: while walking, the stream goes on but its targets have not changed for this
    # many control periods (a network's output on live sensor data changes every step).
    policy_stalled_periods: float = 3.0
    # The monitor's own stall: a gap between its checks longer than this (it checks at 200 Hz) means it was
    # descheduled, alone or with the whole host (a hypervisor pausing every vCPU: 108 ms seen on a shared
    # 2-core CI machine). It cannot have watched the wire meanwhile, so silence and staleness are timed from
    # its return; half the silence floor, so a policy stalled with it still has 20 ms to write again.
    monitor_stall_s: float = 0.02
    # The estimator's height is used only while its reported standard deviation is below this
    # (an estimate still converging, or one that fell behind, says so); else leg kinematics.
    estimator_height_max_std_m: float = 0.05
    # The monitor writes damping itself when nobody else damps within this many periods.
    damping_grace_periods: float = 2.0
    # Damping gain of the monitor's own damping LowCmds, N·m·s/rad. Default: the largest kd for
    # which kd·|dq| stays within every motor's torque limit up to its velocity limit.
    damping_kd: float = 0.0  # set by default_thresholds()
    # rt/lowstate as an input (input_watch): the stream must bring this many samples per control period (a
    # fault while the motors are driven below it: 100 Hz for a 50 Hz policy; the Go2 sends 500, some
    # simulators 200); the accelerometer's one-second mean must be gravity within this much, and point where
    # the IMU's quaternion says gravity is within this angle (a fault while the robot is meant to stand).
    lowstate_min_samples_per_period: float = 2.0
    imu_gravity_norm_tolerance_mps2: float = 2.0
    imu_gravity_direction_tolerance_rad: float = 0.35
    # Reset is allowed only when the robot lies still: every joint and the base gyro below these.
    reset_max_joint_vel: float = 0.3  # rad/s
    reset_max_gyro: float = 0.3  # rad/s

    @property
    def stale_state_s(self) -> float:
        return self.stale_state_periods * self.control_period_s

    def policy_silent_s(self, stream_period_s: float | None = None) -> float:
        """Silence threshold for a stream of this period (None: not measured yet, the control period)."""
        period = self.control_period_s if stream_period_s is None else stream_period_s
        return max(self.policy_silent_periods * period, self.policy_silent_min_s)

    @property
    def policy_stalled_s(self) -> float:
        return self.policy_stalled_periods * self.control_period_s

    def soft_joint_pos_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper), rad: the soft range the policy's targets are clipped to (the hard range without one)."""
        soft_lo = self.joint_pos_lower if self.soft_joint_pos_lower is None else self.soft_joint_pos_lower
        soft_hi = self.joint_pos_upper if self.soft_joint_pos_upper is None else self.soft_joint_pos_upper
        return soft_lo, soft_hi

    def joint_pos_fault_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper), rad: where the joint-position rule faults, between the soft and hard limits."""
        f = self.joint_pos_fault_fraction
        soft_lo, soft_hi = self.soft_joint_pos_limits()
        return soft_lo + f * (self.joint_pos_lower - soft_lo), soft_hi + f * (self.joint_pos_upper - soft_hi)

    @property
    def damping_grace_s(self) -> float:
        return self.damping_grace_periods * self.control_period_s

    @property
    def min_lowstate_rate_hz(self) -> float:
        return self.lowstate_min_samples_per_period / self.control_period_s

    @property
    def min_base_height_m(self) -> float:
        return self.min_base_height_fraction * self.standing_base_height_m


# Fields YAML may set (the limit arrays come from the spec and the policy's contract, never from
# YAML, and so does the control period).
TUNABLE_FIELDS = tuple(
    f.name for f in dataclasses.fields(SafetyThresholds) if f.type in ("float", float)
    and f.name not in ("standing_base_height_m", "control_period_s")
)


def default_thresholds(spec: RobotSpec, contract: PolicyContract | None = None) -> SafetyThresholds:
    """Thresholds for `spec` with the defaults above: limits and heights from its MJCF, control
    period and soft joint range from the policy's contract (None: 20 ms and the hard range)."""
    damping_kd = float(np.min(spec.joint_torque_limit / spec.joint_vel_limit))
    target_margin = float(0.25 * np.min(spec.joint_torque_limit) / spec.nominal_kp)
    soft: dict[str, Any] = {}
    if contract is not None:
        if tuple(contract.joint_names) != tuple(spec.joint_names):
            raise ThresholdError(f"the policy's joint order {contract.joint_names} is not the {spec.name}'s "
                                 f"{spec.joint_names}")
        soft = {"soft_joint_pos_lower": np.asarray(contract.soft_joint_pos_lower, dtype=np.float64),
                "soft_joint_pos_upper": np.asarray(contract.soft_joint_pos_upper, dtype=np.float64),
                "control_period_s": float(contract.control_dt_s)}
    return SafetyThresholds(
        joint_pos_lower=spec.joint_pos_lower.copy(),
        joint_pos_upper=spec.joint_pos_upper.copy(),
        joint_vel_limit=spec.joint_vel_limit.copy(),
        joint_torque_limit=spec.joint_torque_limit.copy(),
        standing_base_height_m=spec.standing_base_height_m,
        damping_kd=damping_kd,
        target_limit_margin_rad=target_margin,
        **soft,
    )


def thresholds_from_params(spec: RobotSpec, params: Mapping[str, Any],
                           contract: PolicyContract | None = None) -> SafetyThresholds:
    """Spec- and contract-derived defaults overridden by `params` (e.g. the node's YAML); validates each value."""
    if "control_period_s" in params:
        raise ThresholdError("safety parameter 'control_period_s' is no longer set in YAML: the monitor reads the "
                             "control period from the policy file's contract (parameter policy_path); remove it")
    unknown = sorted(set(params) - set(TUNABLE_FIELDS))
    if unknown:
        raise ThresholdError(f"unknown safety parameter(s) {unknown}; known: {', '.join(TUNABLE_FIELDS)}")
    values: dict[str, float] = {}
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
            raise ThresholdError(f"safety parameter {name!r} must be a finite number >= 0, got {value!r}")
        values[name] = float(value)
    out = dataclasses.replace(default_thresholds(spec, contract), **values)
    if out.damping_kd <= 0:
        raise ThresholdError("safety parameter 'damping_kd' must be > 0: damping needs kd > 0")
    if not 0.0 < out.joint_pos_fault_fraction < 1.0:
        raise ThresholdError(f"safety parameter 'joint_pos_fault_fraction' must be in (0, 1), strictly between "
                             f"the soft and the hard joint limit; got {out.joint_pos_fault_fraction}")
    return out
