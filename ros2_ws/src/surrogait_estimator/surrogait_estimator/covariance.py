"""nav_msgs/Odometry covariance arrays (6x6 row-major, [x y z rotX rotY rotZ]) from an estimate."""

from __future__ import annotations

import numpy as np

from surrogait_core.estimator import Estimate


def pose_covariance(est: Estimate, orientation_std_rad: float) -> list[float]:
    """Position block from the filter (odom frame); orientation taken from the IMU, with a fixed std."""
    cov = np.zeros((6, 6))
    cov[0:3, 0:3] = est.position_cov_w
    cov[3:6, 3:6] = np.eye(3) * orientation_std_rad**2
    return cov.reshape(-1).tolist()


def twist_covariance(est: Estimate, gyro_std_radps: float) -> list[float]:
    """Linear block from the filter rotated into base_link; angular from the gyro's noise."""
    cov = np.zeros((6, 6))
    cov[0:3, 0:3] = est.base_lin_vel_cov_b
    cov[3:6, 3:6] = np.eye(3) * gyro_std_radps**2
    return cov.reshape(-1).tolist()
