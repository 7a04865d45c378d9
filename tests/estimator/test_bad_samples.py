"""NaN / missing IMU and encoder samples: refused, counted by reason, and the filter recovers."""

import dataclasses

import numpy as np
import pytest

from estimator.synthetic_robot import SyntheticRobot
from surrogait_core.estimator import EstimatorConfig, ProprioSample, StateEstimator, check_sample
from surrogait_core.estimator import samples as S
from surrogait_core.estimator.samples import TickClock
from surrogait_core.robot_spec import load_robot_spec

DT = 0.002
# The synthetic feet are points fixed on the ground in stance (no rolling sphere): the matching model.
POINT_FEET = EstimatorConfig(rolling_feet=False)


@pytest.fixture(scope="module")
def spec():
    return load_robot_spec("go2")


def _good(spec) -> ProprioSample:
    return SyntheticRobot(spec).sample(0.0)


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"accel_b": np.array([np.nan, 0.0, 9.81])}, S.IMU_NAN),
        ({"gyro_b": np.array([0.0, np.inf, 0.0])}, S.IMU_NAN),
        ({"quat_wxyz": None}, S.IMU_MISSING),
        ({"gyro_b": np.zeros(2)}, S.IMU_MISSING),
        ({"quat_wxyz": np.zeros(4)}, S.IMU_QUAT_NOT_UNIT),
        ({"joint_pos": None}, S.ENCODER_MISSING),
        ({"joint_vel": np.zeros(11)}, S.ENCODER_MISSING),
        ({"joint_pos": np.full(12, np.nan)}, S.ENCODER_NAN),
        ({"foot_force": None}, S.FOOT_FORCE_MISSING),
        ({"foot_force": np.array([1.0, np.nan, 0.0, 0.0])}, S.FOOT_FORCE_NAN),
    ],
)
def test_each_kind_of_bad_sample_has_its_reason(spec, change, reason):
    assert check_sample(_good(spec), 12) is None
    assert check_sample(dataclasses.replace(_good(spec), **change), 12) == reason


def _corrupt(s: ProprioSample, k: int) -> ProprioSample:
    """Cycle through the faults a real robot shows: NaN IMU, NaN encoders, dead IMU, missing encoders."""
    kind = k % 4
    if kind == 0:
        return dataclasses.replace(s, accel_b=np.full(3, np.nan))
    if kind == 1:
        q = s.joint_pos.copy()
        q[4] = np.nan
        return dataclasses.replace(s, joint_pos=q)
    if kind == 2:
        return dataclasses.replace(s, quat_wxyz=np.zeros(4))
    return dataclasses.replace(s, joint_vel=None)


def test_bad_samples_are_rejected_reported_and_the_filter_recovers(spec):
    robot = SyntheticRobot(spec, base_vel_w=(0.4, 0.0, 0.0), trot=True, seed=5)
    est = StateEstimator(spec, POINT_FEET)
    bad_window = range(1000, 1100)  # 0.2 s of garbage, after 2 s of good data
    levels, est_after = [], []
    for k in range(2500):
        s = robot.sample(k * DT)
        if k in bad_window:
            assert est.step(_corrupt(s, k)) is None
        else:
            e = est.step(s)
            assert e is not None and np.all(np.isfinite(e.position_w)) and np.all(np.isfinite(e.base_lin_vel_b))
            if k > 1300:
                est_after.append(e)
        levels.append(est.health().level)
    health = est.health()
    assert health.rejected == {
        **dict.fromkeys(S.REJECTION_REASONS, 0),
        S.IMU_NAN: 25, S.ENCODER_NAN: 25, S.IMU_QUAT_NOT_UNIT: 25, S.ENCODER_MISSING: 25,
    }
    assert health.accepted == 2400
    # The 0.2 s hole reads as one long gap (the velocity is re-learnt from the legs), WARN meanwhile.
    assert health.long_gaps == 1
    assert health.dropped_samples == 0  # the hole is the 100 refused samples, counted as such, not as lost
    assert levels[999] == "OK" and levels[1050] == "WARN"  # WARN as soon as samples are refused
    assert levels[1101] == "WARN" and levels[-1] == "OK"
    vel = np.array([e.base_lin_vel_b for e in est_after])
    assert np.abs(vel.mean(axis=0) - [0.4, 0.0, 0.0]).max() < 0.01
    assert np.all(np.isfinite(est.kf.P))
    assert abs(est_after[-1].height_m - 0.28) < 0.005


def test_isolated_nan_samples_do_not_disturb_the_estimate(spec):
    """Single bad samples (a 4 ms hole) keep integrating normally: no gap, no velocity reset."""
    robot = SyntheticRobot(spec, base_vel_w=(0.3, 0.1, 0.0), trot=True, seed=6)
    est = StateEstimator(spec, POINT_FEET)
    out = []
    for k in range(1500):
        s = robot.sample(k * DT)
        e = est.step(_corrupt(s, k) if k % 50 == 25 else s)
        if e is not None and k > 500:
            out.append(e.base_lin_vel_b)
    assert est.health().rejected_total == 30 and est.health().long_gaps == 0
    np.testing.assert_allclose(np.mean(out, axis=0), [0.3, 0.1, 0.0], atol=0.01)


def test_repeated_or_backwards_time_is_rejected(spec):
    est = StateEstimator(spec, POINT_FEET)
    s = _good(spec)
    assert est.step(dataclasses.replace(s, time_s=1.0)) is not None
    assert est.step(dataclasses.replace(s, time_s=1.0)) is None
    assert est.step(dataclasses.replace(s, time_s=0.5)) is None
    assert est.health().rejected[S.TIME_NOT_ADVANCING] == 2
    assert est.step(dataclasses.replace(s, time_s=1.002)) is not None


def test_tick_clock_unwraps_and_turns_a_restart_into_a_gap():
    clock = TickClock()
    t = [clock.time_s(tick) for tick in (2**32 - 4, 2**32 - 2, 0, 2)]
    np.testing.assert_allclose(np.diff(t), [0.002, 0.002, 0.002])
    t_restart = clock.time_s(0)  # the robot restarted: tick went back to 0
    assert t_restart - t[-1] > 1e6  # a huge forward gap, never "time going backwards"
