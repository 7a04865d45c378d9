"""ROS-free state estimator: leg kinematics (Pinocchio), contacts, and a linear Kalman filter."""

from surrogait_core.estimator.contact import ContactConfig, ContactDetector
from surrogait_core.estimator.estimator import Estimate, EstimatorConfig, EstimatorHealth, StateEstimator
from surrogait_core.estimator.kalman import KalmanConfig, LegOdometryKF
from surrogait_core.estimator.samples import ProprioSample, check_sample

__all__ = [
    "ContactConfig", "ContactDetector", "Estimate", "EstimatorConfig", "EstimatorHealth", "KalmanConfig",
    "LegOdometryKF", "ProprioSample", "StateEstimator", "check_sample",
]
