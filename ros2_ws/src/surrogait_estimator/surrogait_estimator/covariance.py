"""nav_msgs/Odometry covariance arrays (6x6 row-major, [x y z rotX rotY rotZ]) from an estimate."""

from __future__ import annotations

import numpy as np

from surrogait_core.estimator import Estimate

Z_VARIANCE_INDEX = 14  # pose.covariance[14] = var(z): the height's, read by the safety monitor


def pose_covariance(est: Estimate, orientation_std_rad: float, z_var_m2: float | None = None) -> list[float]:
    """Position block from the filter (odom frame); orientation taken from the IMU, with a fixed std.
    `z_var_m2`, the trust verdict's `reported_z_var_m2`, replaces the height variance: the filter's own, or
    >= 1 m^2 when the height must not be used (never smaller than the filter's, so the matrix stays valid)."""
    cov = np.zeros((6, 6))
    cov[0:3, 0:3] = est.position_cov_w
    if z_var_m2 is not None:
        cov[2, 2] = max(cov[2, 2], z_var_m2)
    cov[3:6, 3:6] = np.eye(3) * orientation_std_rad**2
    return cov.reshape(-1).tolist()


def twist_covariance(est: Estimate, gyro_std_radps: float) -> list[float]:
    """Linear block from the filter rotated into base_link; angular from the gyro's noise."""
    cov = np.zeros((6, 6))
    cov[0:3, 0:3] = est.base_lin_vel_cov_b
    cov[3:6, 3:6] = np.eye(3) * gyro_std_radps**2
    return cov.reshape(-1).tolist()
