"""Consistent synthetic proprioception for a robot whose base motion is known exactly.

The base moves at a constant world velocity with a constant orientation; the feet follow a
trot (stance feet fixed in the world, swing feet arcing to the next foothold) or all stand.
Joint angles come from inverse kinematics of the same model the estimator uses, joint
velocities from the leg Jacobians, the IMU reads the true (zero) rotation rate and the
specific force of an unaccelerated body, each with Gaussian noise.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from surrogait_core.estimator import ProprioSample
from surrogait_core.estimator.estimator import rotation_from_quat_wxyz
from surrogait_core.estimator.leg_kinematics import LegKinematics
from surrogait_core.robot_spec import RobotSpec

GRAVITY = 9.81
# Nominal foot positions under the base (yaw-aligned frame, m), SDK leg order FR, FL, RR, RL.
NOMINAL_FEET_XY = np.array([[0.19, -0.14], [0.19, 0.14], [-0.19, -0.14], [-0.19, 0.14]])
TROT_OFFSETS = np.array([0.0, 0.5, 0.5, 0.0])  # diagonal pairs FR+RL, FL+RR


@dataclasses.dataclass
class SensorNoise:
    accel: float = 0.1  # m/s^2
    gyro: float = 0.01  # rad/s
    joint_pos: float = 0.002  # rad
    joint_vel: float = 0.05  # rad/s
    foot_force: float = 2.0  # N


def quat_from_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (np.cos(roll / 2), np.sin(roll / 2), np.cos(pitch / 2), np.sin(pitch / 2),
                              np.cos(yaw / 2), np.sin(yaw / 2))
    return np.array([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy])


class SyntheticRobot:
    def __init__(
        self,
        spec: RobotSpec,
        base_vel_w: np.ndarray = (0.0, 0.0, 0.0),
        height_m: float = 0.28,
        quat_wxyz: np.ndarray = (1.0, 0.0, 0.0, 0.0),
        trot: bool = False,
        period_s: float = 0.5,
        swing_height_m: float = 0.06,
        dt_s: float = 0.002,
        noise: SensorNoise | None = None,
        seed: int = 0,
    ):
        self.spec = spec
        self.kin = LegKinematics(spec)
        self.v_w = np.asarray(base_vel_w, dtype=np.float64)
        self.p0_w = np.array([0.0, 0.0, height_m])
        self.quat = np.asarray(quat_wxyz, dtype=np.float64)
        self.rot_wb = rotation_from_quat_wxyz(self.quat)
        yaw = np.arctan2(self.rot_wb[1, 0], self.rot_wb[0, 0])
        c, s = np.cos(yaw), np.sin(yaw)
        nominal_xy = NOMINAL_FEET_XY @ np.array([[c, s], [-s, c]])  # rotate rows by yaw
        self.nominal_w = np.column_stack([nominal_xy, np.full(4, spec.foot_radius_m - height_m)])
        self.trot, self.period, self.duty, self.swing_h = trot, period_s, 0.5, swing_height_m
        self.dt = dt_s
        self.noise = noise or SensorNoise()
        self.rng = np.random.default_rng(seed)
        self._q = spec.default_joint_pos.copy()
        self.weight_n = spec.total_mass_kg * GRAVITY

    def base_pos_w(self, t: float) -> np.ndarray:
        return self.p0_w + self.v_w * t

    def _foothold(self, leg: int, cycle: int) -> np.ndarray:
        t_mid = (cycle - TROT_OFFSETS[leg] + self.duty / 2) * self.period
        return self.base_pos_w(t_mid) * np.array([1, 1, 0]) + self.nominal_w[leg] + np.array([0, 0, self.p0_w[2]])

    def feet_w(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """World foot positions (4, 3) and stance mask at time t."""
        if not self.trot:
            return self.base_pos_w(t) + self.nominal_w, np.ones(4, dtype=bool)
        feet, stance = np.empty((4, 3)), np.empty(4, dtype=bool)
        for leg in range(4):
            cyc = t / self.period + TROT_OFFSETS[leg]
            n, phase = int(np.floor(cyc)), cyc - np.floor(cyc)
            if phase < self.duty:
                feet[leg], stance[leg] = self._foothold(leg, n), True
            else:
                s = (phase - self.duty) / (1 - self.duty)
                a, b = self._foothold(leg, n), self._foothold(leg, n + 1)
                feet[leg] = a + s * (b - a) + np.array([0, 0, self.swing_h * np.sin(np.pi * s)])
                stance[leg] = False
        return feet, stance

    def feet_b(self, t: float) -> np.ndarray:
        feet_w, _ = self.feet_w(t)
        return (feet_w - self.base_pos_w(t)) @ self.rot_wb  # rows: R^T (f - p)

    def sample(self, t: float) -> ProprioSample:
        n = self.noise
        rng = self.rng
        r_b = self.feet_b(t)
        eps = 1e-6
        rdot_b = (self.feet_b(t + eps) - self.feet_b(t - eps)) / (2 * eps)
        self._q = self.kin.joints_for_feet(r_b, self._q)
        jac = self.kin.foot_jacobians(self._q)
        dq = np.concatenate([np.linalg.solve(jac[leg], rdot_b[leg]) for leg in range(4)])
        _, stance = self.feet_w(t)
        force = np.where(stance, self.weight_n / max(1, int(stance.sum())), 0.0)
        accel_b = self.rot_wb.T @ np.array([0.0, 0.0, GRAVITY])  # unaccelerated base: specific force = -g
        return ProprioSample(
            time_s=t,
            quat_wxyz=self.quat.copy(),
            gyro_b=rng.normal(0.0, n.gyro, 3),
            accel_b=accel_b + rng.normal(0.0, n.accel, 3),
            joint_pos=self._q + rng.normal(0.0, n.joint_pos, 12),
            joint_vel=dq + rng.normal(0.0, n.joint_vel, 12),
            foot_force=force + rng.normal(0.0, n.foot_force, 4),
        )

    def base_lin_vel_b(self) -> np.ndarray:
        return self.rot_wb.T @ self.v_w
