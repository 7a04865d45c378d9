"""Foot-force units and the per-robot calibration of raw sensor counts."""

import numpy as np
import pytest

from surrogait_core.inputs.foot_force import (
    ALL_ZERO_S,
    CalibrationError,
    FootForceCalibration,
    FootForceSource,
    calibration_path,
    load_calibration,
    serial_name,
    standing_foot_loads_n,
    standing_step,
    unloaded_step,
)

OFFSET = np.array([21.0, 17.0, 24.0, 19.0])
COUNTS_PER_N = np.array([1.35, 1.5, 1.25, 1.45])
SERIAL = (0x32474F53, 1)
RNG = np.random.default_rng(1)


def raw(load_n, n=200):
    return OFFSET + COUNTS_PER_N * np.asarray(load_n) + RNG.normal(0.0, 0.8, (n, 4))


def test_standing_loads_split_the_weight_by_where_the_centre_of_mass_is():
    feet = np.array([[0.2, -0.15, 0.0], [0.2, 0.15, 0.0], [-0.2, -0.15, 0.0], [-0.2, 0.15, 0.0]])
    level = standing_foot_loads_n(15.0, np.zeros(3), feet)
    np.testing.assert_allclose(level, np.full(4, 15.0 * 9.81 / 4))
    forward = standing_foot_loads_n(15.0, np.array([0.05, 0.0, 0.0]), feet)
    assert forward.sum() == pytest.approx(15.0 * 9.81) and forward[0] > forward[2]
    with pytest.raises(CalibrationError, match="not over the feet"):
        standing_foot_loads_n(15.0, np.array([0.5, 0.0, 0.0]), feet)


def test_the_two_steps_recover_each_foots_offset_and_gain():
    loads = np.array([35.0, 35.0, 39.0, 39.0])
    cal = unloaded_step(raw(np.zeros(4)), "go2", serial_name(SERIAL))
    np.testing.assert_allclose(cal.offset_counts, OFFSET, atol=0.3)
    assert not cal.complete
    cal = standing_step(cal, raw(loads), loads)
    np.testing.assert_allclose(cal.newtons_per_count, 1.0 / COUNTS_PER_N, rtol=0.02)
    np.testing.assert_allclose(cal.newtons(OFFSET + COUNTS_PER_N * 60.0), np.full(4, 60.0), rtol=0.02)


def test_a_foot_that_moves_during_the_unloaded_step_or_is_not_loaded_standing_is_refused():
    moving = raw(np.zeros(4))
    moving[:, 2] += np.linspace(0, 200, len(moving))
    with pytest.raises(CalibrationError, match="keep the robot still"):
        unloaded_step(moving, "go2", "x")
    cal = unloaded_step(raw(np.zeros(4)), "go2", "x")
    with pytest.raises(CalibrationError, match="standing on all four feet"):
        standing_step(cal, raw([35.0, 35.0, 0.0, 39.0]), np.full(4, 37.0))


def test_stored_per_robot_and_checked_at_load(tmp_path):
    loads = np.full(4, 37.0)
    cal = standing_step(unloaded_step(raw(np.zeros(4)), "go2", serial_name(SERIAL)), raw(loads), loads)
    path = cal.save(calibration_path(tmp_path, "go2", SERIAL))
    assert path.name == f"go2-{serial_name(SERIAL)}.json"
    loaded, problem = load_calibration(tmp_path, "go2", SERIAL)
    assert problem == "" and loaded == cal
    other, problem = load_calibration(tmp_path, "go2", (1, 2))
    assert other is None and "no foot-force calibration" in problem
    FootForceCalibration(**{**cal.__dict__, "serial": "someone_else"}).save(calibration_path(tmp_path, "go2", (3, 4)))
    wrong, problem = load_calibration(tmp_path, "go2", (3, 4))
    assert wrong is None and "calibrate this robot" in problem
    bad = FootForceCalibration("go2", serial_name((5, 6)), (1.0, 2.0, 3.0, 4.0), (0.5, -1.0, 0.5, 0.5))
    bad.save(calibration_path(tmp_path, "go2", (5, 6)))
    assert "redo the standing step" in load_calibration(tmp_path, "go2", (5, 6))[1]
    calibration_path(tmp_path, "go2", (7, 8)).write_text("{not json")
    assert "calibrate again" in load_calibration(tmp_path, "go2", (7, 8))[1]


def test_the_estimators_foot_forces_are_usable_only_when_they_mean_something(tmp_path):
    walking = np.tile([0.5, 3.0, 4.0], 4)
    newtons = FootForceSource("newtons", "go2")
    assert newtons.newtons(np.array([40.0, 3.0, 0.0, 55.0]), walking, 0.0) is not None
    # all four at exactly 0 for a second: a source without foot sensors
    silent = FootForceSource("newtons", "go2")
    for k in range(int(ALL_ZERO_S / 0.002) + 2):
        out = silent.newtons(np.zeros(4), walking, k * 0.002)
    assert out is None and "no foot force" in silent.reason
    assert silent.newtons(np.array([5.0, 3.0, 7.0, 2.0]), walking, 1.5) is not None, "readings again: usable again"
    # raw counts: none without this robot's complete calibration
    source = FootForceSource("raw", "go2", tmp_path)
    source.on_robot(SERIAL)
    assert source.newtons(OFFSET + 50, walking, 0.0) is None and "no foot-force calibration" in source.reason
    cal = unloaded_step(raw(np.zeros(4)), "go2", serial_name(SERIAL))
    source.set_calibration(cal)
    assert source.newtons(OFFSET + 50, walking, 0.01) is None and "standing step not done" in source.reason
    source.set_calibration(standing_step(cal, raw(np.full(4, 37.0)), np.full(4, 37.0)))
    np.testing.assert_allclose(source.newtons(OFFSET + COUNTS_PER_N * 70, walking, 0.02), np.full(4, 70.0), rtol=0.03)
    assert FootForceSource("none", "go2").newtons(np.ones(4), walking, 0.0) is None
