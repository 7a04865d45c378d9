"""When the estimator's height may be used: the verdict behind odometry pose.covariance[14].

Agreed with the safety monitor: the z variance is the filter's own while the estimate is converged
and healthy, and at least 1 m^2 ("do not use") whenever it is not.
"""

import dataclasses
import math

import numpy as np
import pytest

from estimator.synthetic_robot import SyntheticRobot
from surrogait_core.estimator import EstimatorConfig, StateEstimator, TrustConfig, assess_height
from surrogait_core.estimator.trust import FilterStatus
from surrogait_core.robot_spec import load_robot_spec

DT = 0.002
HEALTHY = FilterStatus(initialized=True, finite=True, samples_since_reset=5000, since_trouble_s=10.0, trouble="",
                       nis_per_dof=0.05, z_var_m2=1e-6, latency_s=0.003)


@pytest.fixture(scope="module")
def spec():
    return load_robot_spec("go2")


def test_a_converged_healthy_filter_publishes_its_own_z_variance():
    trust = assess_height(HEALTHY, TrustConfig())
    assert trust.trusted and trust.reason == ""
    assert trust.reported_z_var_m2 == HEALTHY.z_var_m2


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"initialized": False}, "no valid sample yet"),
        ({"finite": False}, "not finite"),
        ({"z_var_m2": math.nan}, "not finite"),
        ({"samples_since_reset": 20}, "converging: 20 of 100 samples"),
        ({"since_trouble_s": 0.1, "trouble": "a 0.20 s gap in the samples"}, "settling: 0.10 s since a 0.20 s gap"),
        ({"nis_per_dof": 40.0}, "innovation too large"),
        ({"latency_s": 0.08}, "behind the stream: estimate 80 ms old"),
    ],
    ids=["no-sample", "not-finite", "nan-variance", "too-few-samples", "recent-gap", "diverged", "stale"],
)
def test_an_unconverged_or_unhealthy_estimate_publishes_at_least_1_m2_and_says_why(change, reason):
    trust = assess_height(dataclasses.replace(HEALTHY, **change), TrustConfig())
    assert not trust.trusted
    assert reason in trust.reason
    assert trust.reported_z_var_m2 >= 1.0


def test_an_untrusted_variance_is_never_smaller_than_the_filters_own():
    trust = assess_height(dataclasses.replace(HEALTHY, z_var_m2=2.5, latency_s=1.0), TrustConfig())
    assert trust.reported_z_var_m2 == 2.5


def test_trust_settings_are_checked():
    with pytest.raises(ValueError, match="max_latency_s"):
        TrustConfig(max_latency_s=0.0)


def _step(est, robot, t0, duration_s):
    for k in range(int(round(duration_s / DT))):
        est.step(robot.sample(t0 + k * DT))


def test_a_just_started_estimator_is_untrusted_until_converged_then_reports_the_filter_variance(spec):
    robot = SyntheticRobot(spec, height_m=0.28, seed=3)
    est = StateEstimator(spec, EstimatorConfig(rolling_feet=False))
    assert not est.height_trust().trusted  # nothing seen yet
    est.step(robot.sample(0.0))
    first = est.height_trust()
    assert not first.trusted and "converging" in first.reason and first.reported_z_var_m2 >= 1.0
    _step(est, robot, DT, 0.3)  # 150 samples: enough of them, but not 0.5 s of robot time yet
    assert "settling" in est.height_trust().reason
    _step(est, robot, 0.3 + DT, 0.5)
    trust = est.height_trust(latency_s=0.004)
    assert trust.trusted, trust.reason
    assert trust.reported_z_var_m2 == pytest.approx(est.last_estimate.position_cov_w[2, 2])
    assert math.sqrt(trust.reported_z_var_m2) < 0.01  # standing on four feet: the height is well known
    assert abs(est.last_estimate.height_m - 0.28) < 0.01
    assert not est.height_trust(latency_s=0.2).trusted  # the same estimate, published late


def test_after_a_long_gap_the_height_is_untrusted_for_the_settling_time(spec):
    robot = SyntheticRobot(spec, height_m=0.28, seed=5)
    est = StateEstimator(spec, EstimatorConfig(rolling_feet=False))
    _step(est, robot, 0.0, 1.0)
    assert est.height_trust().trusted
    _step(est, robot, 1.2, 0.1)  # 0.2 s without samples, then 0.1 s of them
    trust = est.height_trust()
    assert not trust.trusted and "gap" in trust.reason
    _step(est, robot, 1.3, 0.5)
    assert est.height_trust().trusted


def test_a_refused_sample_makes_the_height_untrusted_for_the_settling_time(spec):
    robot = SyntheticRobot(spec, height_m=0.28, seed=6)
    est = StateEstimator(spec, EstimatorConfig(rolling_feet=False))
    _step(est, robot, 0.0, 1.0)
    bad = dataclasses.replace(robot.sample(1.0), accel_b=np.full(3, np.nan))
    assert est.step(bad) is None
    assert "imu_nan" in est.height_trust().reason
