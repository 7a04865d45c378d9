"""Keeping up with the 500 Hz stream: after a stall the newest samples are processed, older ones skipped
and counted, and the filter bridges the skipped span with the true dt from the robot's tick."""

import numpy as np
import pytest

from estimator.synthetic_robot import SyntheticRobot
from surrogait_core.estimator import CatchUpBudget, EstimatorConfig, SampleAge, StateEstimator
from surrogait_core.robot_spec import load_robot_spec

DT = 0.002


def test_the_newest_samples_that_fit_in_the_budget_are_processed():
    budget = CatchUpBudget(budget_s=0.01, initial_cost_s=0.001)
    assert budget.plan(0) == 0
    assert budget.plan(4) == 4  # a small backlog: all of it
    assert budget.plan(64) == 10  # 10 ms at 1 ms a sample
    for _ in range(50):
        budget.record(10, 0.040)  # descheduled: 4 ms of wall time a sample
    assert budget.plan(64) == 2
    for _ in range(50):
        budget.record(1, 1.0)  # however slow, the newest sample is always processed
    assert budget.plan(64) == 1


def test_sample_age_on_a_shared_clock_and_on_an_offset_clock():
    for robot_clock_ahead_s in (0.0, 123.4, -5.0):  # rehearsal: same clock; a robot: any offset
        age = SampleAge()
        now = 1000.0
        for _ in range(100):  # taken as they arrive, 0.2 ms after being written
            now += DT
            assert age.at_take(now - 0.0002 + robot_clock_ahead_s, now, DT) == pytest.approx(0.0, abs=1e-6)
        now += 0.08  # descheduled for 80 ms: the newest sample waiting was written 30 ms ago
        assert age.at_take(now - 0.0302 + robot_clock_ahead_s, now, 0.08) == pytest.approx(0.030, abs=1e-6)


def test_a_sample_is_never_older_than_the_previous_take():
    age = SampleAge()
    age.at_take(10.0, 10.0, None)
    # A writer clock that jumped back 1 s: the reader was emptied 20 ms ago, so the sample is at most that old.
    assert age.at_take(9.0, 10.02, 0.02) == pytest.approx(0.02)


@pytest.fixture(scope="module")
def spec():
    return load_robot_spec("go2")


def test_skipped_samples_are_counted_apart_from_lost_ones_and_the_filter_bridges_them(spec):
    robot = SyntheticRobot(spec, base_vel_w=(0.4, 0.0, 0.0), height_m=0.28, trot=True, seed=8)
    est = StateEstimator(spec, EstimatorConfig(rolling_feet=False))
    skipped = 0
    out = []
    for k in range(1500):  # 3 s, of which only every 8th sample is processed after the first second
        if k > 500 and k % 8:
            est.note_skipped(1)
            skipped += 1
            continue
        out.append(est.step(robot.sample(k * DT)))
    health = est.health()
    assert health.skipped_samples == skipped and health.dropped_samples == 0
    assert health.long_gaps == 0  # 16 ms steps are not gaps
    late = out[-100:]
    vel = np.array([e.base_lin_vel_b for e in late])
    assert np.abs(vel.mean(axis=0) - robot.base_lin_vel_b()).max() < 0.03
    assert abs(np.mean([e.height_m for e in late]) - 0.28) < 0.01
    assert est.height_trust().trusted
