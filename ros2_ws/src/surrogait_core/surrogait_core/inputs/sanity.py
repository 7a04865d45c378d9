"""Run-time input checks on the LowState stream, each issue named by its cause.

- `lowstate_rate_low`: the stream's rate over the last complete window is below what the policy's
  contract needs (`stream_stats.required_lowstate_rate_hz`);
- `foot_force_stuck`: a foot sensor reads exactly one value for `foot_stuck_s` while its leg moves
  (joint speeds summed over the leg above `leg_moving_joint_vel` for `foot_stuck_moving_s` of that time):
  a dead or disconnected sensor, or a source with no foot sensors at all (all four stuck at 0);
- `imu_quaternion_norm`: the orientation quaternion's norm is off 1 (a dead IMU often sends zeros);
- `imu_gravity_norm`: the accelerometer's mean over `gravity_time_constant_s` (the mean specific force
  of a robot that does not fly away is gravity) is off `gravity_mps2`;
- `imu_gravity_direction`: that mean points away from the gravity the quaternion implies, averaged the same
  way (a robot that rolls 20° in a tenth of a second moves the quaternion at once and the 1 s mean of the
  accelerometer only slowly: compared with the quaternion of the moment, that lag once latched a monitor on a
  Go2 stumbling after a host stall, with an IMU that agreed with itself).

A sample judged after a gap in the stream (a host stall, lost packets) stands for its own moment in the means,
not for the whole gap (`max_sample_weight_s`).

Checks on one sample are a few vector operations; the means are exponential, so nothing is stored.
What a node does with an issue (adapt, refuse, damp) is the node's decision (docs/robot.md, table
"Inputs the stack checks").
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from surrogait_core.wire.go2_wire import LowStateView

RATE_LOW = "lowstate_rate_low"
FOOT_STUCK = "foot_force_stuck"
IMU_QUAT_NORM = "imu_quaternion_norm"
IMU_GRAVITY_NORM = "imu_gravity_norm"
IMU_GRAVITY_DIRECTION = "imu_gravity_direction"
IMU_CAUSES = (IMU_QUAT_NORM, IMU_GRAVITY_NORM, IMU_GRAVITY_DIRECTION)
FEET = ("FR", "FL", "RR", "RL")


@dataclasses.dataclass(frozen=True)
class SanityConfig:
    min_rate_hz: float = 100.0  # required_lowstate_rate_hz(contract's control period)
    gravity_mps2: float = 9.81
    gravity_norm_tolerance_mps2: float = 2.0
    gravity_direction_tolerance_rad: float = 0.35
    gravity_time_constant_s: float = 1.0
    quat_norm_tolerance: float = 0.05
    imu_persist_s: float = 0.05  # a quaternion off this long is an issue (one glitch is not)
    check_feet: bool = True  # False where the robot has no foot sensors (foot_force_units none)
    foot_stuck_s: float = 2.0
    foot_stuck_moving_s: float = 1.0
    leg_moving_joint_vel: float = 1.0  # rad/s, |dq| summed over the leg's three joints
    # Samples closer together than this are skipped (the checks judge seconds, a 500 Hz stream need not be seen
    # whole): keeps the monitor's 200 Hz checks and the estimator's 500 Hz stream cheap.
    min_interval_s: float = 0.015
    max_sample_weight_s: float = 0.05

    def __post_init__(self) -> None:
        if self.foot_stuck_moving_s > self.foot_stuck_s:
            raise ValueError("foot_stuck_moving_s cannot exceed foot_stuck_s")
        for name in ("min_rate_hz", "gravity_mps2", "gravity_time_constant_s", "foot_stuck_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


@dataclasses.dataclass(frozen=True)
class InputIssue:
    cause: str
    detail: str
    values: dict[str, Any]


def projected_gravity_from_quat(quat_wxyz: np.ndarray) -> np.ndarray:
    """The unit vector of gravity in the body frame for a (normalised here) w, x, y, z quaternion."""
    w, x, y, z = np.asarray(quat_wxyz, dtype=np.float64) / max(float(np.linalg.norm(quat_wxyz)), 1e-9)
    # third row of the body-to-world rotation, negated: R^T (0, 0, -1)
    return -np.array([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])


class InputSanity:
    def __init__(self, config: SanityConfig = SanityConfig()):
        self.config = config
        self._issues: dict[str, InputIssue] = {}
        self._last_t: float | None = None
        self._accel_mean: np.ndarray | None = None
        self._gravity_mean: np.ndarray | None = None  # the quaternion's "up" in the body frame, averaged alike
        self._accel_weight = 0.0  # seconds of data in the mean, saturating at the time constant
        self._quat_bad_since: float | None = None
        self._feet = StuckFeet(config)

    # -- inputs --------------------------------------------------------------------------------------
    def on_state(self, state: LowStateView, t_s: float) -> None:
        """One LowState at (host or robot) time `t_s` (skipped if within `min_interval_s` of the last one judged)."""
        if self._last_t is not None and 0.0 <= t_s - self._last_t < self.config.min_interval_s:
            return
        dt = 0.0 if self._last_t is None else min(max(t_s - self._last_t, 0.0), 0.1)
        self._last_t = t_s
        self._check_quaternion(state.quat_wxyz, t_s)
        self._check_gravity(state.accel_b, state.quat_wxyz, dt)
        if self.config.check_feet:
            issue = self._feet.update(state.foot_force, state.joint_vel, t_s, dt)
            if issue is None:
                self._issues.pop(FOOT_STUCK, None)
            else:
                self._issues[FOOT_STUCK] = issue

    def on_rate(self, rate_hz: float | None) -> None:
        """The stream's rate over its latest complete window (`SampleRate.last_rate_hz`)."""
        if rate_hz is None:
            return
        if rate_hz < self.config.min_rate_hz:
            self._issues[RATE_LOW] = InputIssue(
                RATE_LOW, f"rt/lowstate arrives at {rate_hz:.0f} Hz, below the {self.config.min_rate_hz:.0f} Hz "
                "the policy needs (two samples a control period); check the link and the robot's load",
                {"rate_hz": round(rate_hz, 1), "min_rate_hz": self.config.min_rate_hz})
        else:
            self._issues.pop(RATE_LOW, None)

    # -- output --------------------------------------------------------------------------------------
    def issues(self) -> dict[str, InputIssue]:
        """The issues present now, by cause."""
        return dict(self._issues)

    def has(self, *causes: str) -> bool:
        return any(c in self._issues for c in causes)

    # -- checks --------------------------------------------------------------------------------------
    def _check_quaternion(self, quat: np.ndarray, t_s: float) -> None:
        norm = float(math.sqrt(float(np.dot(quat, quat)))) if np.all(np.isfinite(quat)) else math.nan
        if math.isfinite(norm) and abs(norm - 1.0) <= self.config.quat_norm_tolerance:
            self._quat_bad_since = None
            self._issues.pop(IMU_QUAT_NORM, None)
            return
        if self._quat_bad_since is None:
            self._quat_bad_since = t_s
        if t_s - self._quat_bad_since >= self.config.imu_persist_s:
            self._issues[IMU_QUAT_NORM] = InputIssue(
                IMU_QUAT_NORM, f"the IMU quaternion's norm is {norm:.3f}, not 1 (± {self.config.quat_norm_tolerance}):"
                " the IMU is not delivering an orientation", {"norm": norm})

    def _check_gravity(self, accel: np.ndarray, quat: np.ndarray, dt: float) -> None:
        cfg = self.config
        if not (np.all(np.isfinite(accel)) and np.all(np.isfinite(quat))):
            return
        # The accelerometer reads the reaction to gravity: up in the body frame, so minus the gravity direction.
        up_b = -projected_gravity_from_quat(quat) if IMU_QUAT_NORM not in self._issues else None
        if self._accel_mean is None:
            self._accel_mean = np.array(accel, dtype=np.float64)
            self._gravity_mean = up_b
            return
        weight_s = min(dt, cfg.max_sample_weight_s)
        self._accel_weight = min(self._accel_weight + weight_s, cfg.gravity_time_constant_s)
        alpha = weight_s / cfg.gravity_time_constant_s
        self._accel_mean += alpha * (accel - self._accel_mean)
        if up_b is not None:
            self._gravity_mean = up_b if self._gravity_mean is None else \
                self._gravity_mean + alpha * (up_b - self._gravity_mean)
        if self._accel_weight < cfg.gravity_time_constant_s:
            return  # judge a full time constant of data only
        norm = float(np.linalg.norm(self._accel_mean))
        if abs(norm - cfg.gravity_mps2) > cfg.gravity_norm_tolerance_mps2:
            self._issues[IMU_GRAVITY_NORM] = InputIssue(
                IMU_GRAVITY_NORM, f"the accelerometer's mean is {norm:.2f} m/s², not gravity ({cfg.gravity_mps2} ± "
                f"{cfg.gravity_norm_tolerance_mps2}): a dead or miscalibrated accelerometer", {"norm_mps2": norm})
        else:
            self._issues.pop(IMU_GRAVITY_NORM, None)
        expected_norm = 0.0 if self._gravity_mean is None else float(np.linalg.norm(self._gravity_mean))
        if norm > 1e-3 and expected_norm > 1e-3 and IMU_QUAT_NORM not in self._issues:
            cos = np.dot(self._accel_mean / norm, self._gravity_mean / expected_norm)
            angle = float(math.acos(float(np.clip(cos, -1.0, 1.0))))
            if angle > cfg.gravity_direction_tolerance_rad:
                self._issues[IMU_GRAVITY_DIRECTION] = InputIssue(
                    IMU_GRAVITY_DIRECTION, f"the accelerometer's gravity is {math.degrees(angle):.0f}° away from the "
                    "quaternion's: the IMU's orientation and its accelerometer disagree", {"angle_rad": angle})
            else:
                self._issues.pop(IMU_GRAVITY_DIRECTION, None)


class StuckFeet:
    """Foot sensors that read one value for `foot_stuck_s` while their leg moves (`SanityConfig`)."""

    def __init__(self, config: SanityConfig = SanityConfig()):
        self.config = config
        self._value = np.full(4, np.nan)
        self._since = np.zeros(4)
        self._moving_s = np.zeros(4)

    def update(self, foot_force: np.ndarray, joint_vel: np.ndarray, t_s: float, dt: float) -> InputIssue | None:
        cfg = self.config
        changed = foot_force != self._value
        self._value = np.array(foot_force, dtype=np.float64)
        self._since = np.where(changed, t_s, self._since)
        leg_speed = np.abs(np.asarray(joint_vel, dtype=np.float64)).reshape(4, 3).sum(axis=1)
        moving_dt = np.where(leg_speed > cfg.leg_moving_joint_vel, dt, 0.0)
        self._moving_s = np.where(changed, 0.0, self._moving_s + moving_dt)
        stuck = (t_s - self._since >= cfg.foot_stuck_s) & (self._moving_s >= cfg.foot_stuck_moving_s)
        if not np.any(stuck):
            return None
        feet = [f"{FEET[i]} at {self._value[i]:g}" for i in np.flatnonzero(stuck)]
        return InputIssue(
            FOOT_STUCK, f"foot sensor(s) {', '.join(feet)} unchanged for ≥ {cfg.foot_stuck_s:g} s while the leg moves: "
            "dead sensor, or a source without foot sensors; contact comes from the gait schedule and leg kinematics",
            {"feet": [FEET[i] for i in np.flatnonzero(stuck)], "values": self._value[stuck].tolist()})
