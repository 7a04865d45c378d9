"""One synchronous sample of the proprioceptive sensors, and why a sample is refused.

The estimator never lets a bad number into the filter: one NaN in a Kalman update poisons
the state and the covariance for good. A refused sample is counted under a reason, the filter
skips it, and the next good sample goes on from the last good state (with a longer dt).
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class ProprioSample:
    """IMU (body frame) + encoders (SDK order) + foot forces (FR, FL, RR, RL) at `time_s`.
    Any field may be None when its source did not deliver."""

    time_s: float
    quat_wxyz: np.ndarray | None
    gyro_b: np.ndarray | None  # rad/s
    accel_b: np.ndarray | None  # m/s^2, specific force (reads +g up at rest)
    joint_pos: np.ndarray | None  # rad
    joint_vel: np.ndarray | None  # rad/s
    foot_force: np.ndarray | None

    @classmethod
    def from_lowstate(cls, view, time_s: float | None = None) -> ProprioSample:
        """From a `go2_wire.LowStateView`; time from its millisecond tick unless given."""
        return cls(
            time_s=view.tick_ms * 1e-3 if time_s is None else time_s,
            quat_wxyz=view.quat_wxyz,
            gyro_b=view.gyro_b,
            accel_b=view.accel_b,
            joint_pos=view.joint_pos,
            joint_vel=view.joint_vel,
            foot_force=view.foot_force,
        )


# Rejection reasons (diagnostic keys).
IMU_MISSING = "imu_missing"
IMU_NAN = "imu_nan"
IMU_QUAT_NOT_UNIT = "imu_quat_not_unit"
ENCODER_MISSING = "encoder_missing"
ENCODER_NAN = "encoder_nan"
FOOT_FORCE_MISSING = "foot_force_missing"
FOOT_FORCE_NAN = "foot_force_nan"
TIME_NOT_ADVANCING = "time_not_advancing"
REJECTION_REASONS = (IMU_MISSING, IMU_NAN, IMU_QUAT_NOT_UNIT, ENCODER_MISSING, ENCODER_NAN,
                     FOOT_FORCE_MISSING, FOOT_FORCE_NAN, TIME_NOT_ADVANCING)


def _missing(x, size: int) -> bool:
    return x is None or np.shape(x) != (size,)


def check_sample(sample: ProprioSample, num_joints: int, quat_norm_tolerance: float = 0.05) -> str | None:
    """The first reason to refuse `sample`, or None when every number is usable."""
    imu = (sample.quat_wxyz, sample.gyro_b, sample.accel_b)
    if any(_missing(x, n) for x, n in zip(imu, (4, 3, 3), strict=True)):
        return IMU_MISSING
    if not np.isfinite(np.concatenate(imu)).all():
        return IMU_NAN
    if abs(float(np.linalg.norm(sample.quat_wxyz)) - 1.0) > quat_norm_tolerance:
        return IMU_QUAT_NOT_UNIT  # an all-zero quaternion is how a dead IMU often shows up
    if _missing(sample.joint_pos, num_joints) or _missing(sample.joint_vel, num_joints):
        return ENCODER_MISSING
    if not np.isfinite(np.concatenate((sample.joint_pos, sample.joint_vel))).all():
        return ENCODER_NAN
    if _missing(sample.foot_force, 4):
        return FOOT_FORCE_MISSING
    if not np.isfinite(sample.foot_force).all():
        return FOOT_FORCE_NAN
    if not np.isfinite(sample.time_s):
        return TIME_NOT_ADVANCING
    return None


class TickClock:
    """Seconds from the robot's 32-bit millisecond `tick`, unwrapped.

    Uses tick differences only, so a wrap after ~49 days is seamless; a tick that jumps back
    (the robot or simulator restarted) reads as a long gap forward, which the estimator treats
    as lost data and recovers from, instead of refusing every later sample as "from the past".
    """

    _WRAP = 1 << 32

    def __init__(self) -> None:
        self._last_tick: int | None = None
        self._time_s = 0.0

    def time_s(self, tick_ms: int) -> float:
        tick = int(tick_ms) % self._WRAP
        if self._last_tick is not None:
            self._time_s += ((tick - self._last_tick) % self._WRAP) * 1e-3
        self._last_tick = tick
        return self._time_s
