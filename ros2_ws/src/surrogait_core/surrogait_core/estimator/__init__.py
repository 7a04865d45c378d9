"""ROS-free state estimator: leg kinematics (Pinocchio), contacts, and a linear Kalman filter."""

from surrogait_core.estimator.backlog import CatchUpBudget, SampleAge
from surrogait_core.estimator.contact import ContactConfig, ContactDetector
from surrogait_core.estimator.estimator import Estimate, EstimatorConfig, EstimatorHealth, StateEstimator
from surrogait_core.estimator.kalman import KalmanConfig, LegOdometryKF
from surrogait_core.estimator.samples import ProprioSample, check_sample
from surrogait_core.estimator.trust import HeightTrust, TrustConfig, assess_height

__all__ = [
    "CatchUpBudget", "ContactConfig", "ContactDetector", "Estimate", "EstimatorConfig", "EstimatorHealth",
    "HeightTrust", "KalmanConfig", "LegOdometryKF", "ProprioSample", "SampleAge", "StateEstimator", "TrustConfig",
    "assess_height", "check_sample",
]
