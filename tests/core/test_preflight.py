"""The pre-flight before stand-up: a healthy robot passes; each failure case refuses, naming what failed and the fix."""

import dataclasses

import numpy as np
import pytest

from surrogait_core.inputs.foot_force import FootForceCalibration
from surrogait_core.inputs.preflight import FOLDED_JOINT_POS, PreflightLimits, PreflightRecorder, run_preflight
from surrogait_core.wire.go2_lowstate_layout import LowStateHealth
from surrogait_core.wire.go2_wire import Gamepad, LowStateView

LIMITS = PreflightLimits(min_rate_hz=100.0, max_gap_ms=50.0)
HEALTHY = LowStateHealth(95.0, 0.0, 29.0, np.full(12, 32.0), np.zeros(12), (1, 2))
RNG = np.random.default_rng(0)


def lying(**changes) -> LowStateView:
    base = LowStateView(
        tick_ms=0, quat_wxyz=np.array([1.0, 0.0, 0.0, 0.0]), gyro_b=np.zeros(3), accel_b=np.array([0.0, 0.0, 9.81]),
        joint_pos=FOLDED_JOINT_POS + np.tile([0.4, -0.25, -0.07], 4), joint_vel=np.zeros(12),
        joint_tau_est=np.zeros(12), foot_force=np.array([5.0, 5.0, 4.0, 5.0]), gamepad=Gamepad(frozenset(), 0, 0, 0, 0))
    return dataclasses.replace(base, **changes)


def capture(state_fn=lying, rate_hz=500.0, seconds=1.0, gap_at=None, gap_s=0.0, crc_bad=0, health=HEALTHY,
            delay_spread_s=0.0, tick=True):
    """A second of rt/lowstate as the policy node's capture records it."""
    recorder = PreflightRecorder(seconds)
    n = int(rate_hz * seconds)
    t = 0.0
    for k in range(n):
        t += 1.0 / rate_hz + (gap_s if k == gap_at else 0.0)
        state = dataclasses.replace(state_fn(), tick_ms=int(t * 1000) if tick else 0,
                                    accel_b=state_fn().accel_b + RNG.normal(0, 0.05, 3))
        delay = 0.0002 + (RNG.uniform(0, delay_spread_s) if delay_spread_s else 0.0)
        recorder.add(state, 100.0 + t + delay, 1e9 + t, delay, crc_ok=k >= crc_bad, health=health)
    return recorder.capture()


def failed(report) -> set[str]:
    return {row.check for row in report.failed}


def test_a_healthy_lying_robot_passes_every_check():
    report = run_preflight(capture(), LIMITS)
    assert report.passed, report.table()
    assert {r.check for r in report.rows} == {
        "lowstate", "encoders", "imu_quaternion", "imu_gravity", "imu_level", "foot_sensors", "lowstate_rate",
        "lowstate_crc", "lowstate_clock", "link_latency", "battery", "motor_temperature"}
    assert report.summary().startswith("pre-flight passed")


@pytest.mark.parametrize(("name", "make", "check", "fix"), [
    ("no stream", lambda: PreflightRecorder(1.0).capture(), "lowstate", "network_interface"),
    ("standing, not lying", lambda: capture(lambda: lying(joint_pos=np.tile([0.0, 0.8, -1.5], 4))), "encoders",
     "lay the robot down folded"),
    ("a leg stuck under the body",
     lambda: capture(lambda: lying(joint_pos=FOLDED_JOINT_POS + np.r_[0, 0, 0.6, np.zeros(9)])), "encoders",
     "StandDown"),
    ("dead IMU quaternion", lambda: capture(lambda: lying(quat_wxyz=np.zeros(4))), "imu_quaternion", "restart"),
    ("accelerometer reads no gravity", lambda: capture(lambda: lying(accel_b=np.zeros(3))), "imu_gravity",
     "does not read gravity"),
    ("robot on its side", lambda: capture(lambda: lying(quat_wxyz=np.array([np.cos(0.6), np.sin(0.6), 0, 0]),
                                                        accel_b=9.81 * np.array([0, np.sin(1.2), np.cos(1.2)]))),
     "imu_level", "flat ground"),
    ("accelerometer and quaternion disagree", lambda: capture(lambda: lying(
        quat_wxyz=np.array([np.cos(0.15), np.sin(0.15), 0, 0]))), "imu_level", "disagree"),
    ("a trapped foot", lambda: capture(lambda: lying(foot_force=np.array([5.0, 120.0, 4.0, 5.0]))), "foot_sensors",
     "trapped"),
    ("a slow stream", lambda: capture(rate_hz=60.0), "lowstate_rate", "too slow"),
    ("a 120 ms gap", lambda: capture(gap_at=200, gap_s=0.12), "lowstate_rate", "uneven"),
    ("samples failing their CRC", lambda: capture(crc_bad=3), "lowstate_crc", "allow_lowstate_without_crc"),
    ("a flat battery", lambda: capture(health=dataclasses.replace(HEALTHY, battery_soc_pct=8.0)), "battery", "charge"),
    ("a sagging battery", lambda: capture(health=dataclasses.replace(HEALTHY, power_v=23.5)), "battery", "charge"),
    ("a hot motor", lambda: capture(health=dataclasses.replace(
        HEALTHY, motor_temperature_c=np.r_[np.full(5, 35.0), 78.0, np.full(6, 35.0)])), "motor_temperature", "cool"),
    ("an uneven link", lambda: capture(delay_spread_s=0.03), "link_latency", "Wi-Fi"),
])
def test_each_failure_refuses_with_its_cause_and_fix(name, make, check, fix):
    report = run_preflight(make(), LIMITS)
    assert not report.passed and check in failed(report), f"{name}: {report.table()}"
    assert fix in report.summary() and check in report.summary()
    assert f"fix {check}:" in report.table()


def test_raw_foot_sensors_need_this_robots_calibration():
    raw_lying = lambda: lying(foot_force=np.array([27.0, 24.0, 30.0, 26.0]))  # noqa: E731  (offset + a little load)
    missing = run_preflight(capture(raw_lying), LIMITS, foot_force_units="raw", calibration_problem="no file x.json")
    assert failed(missing) == {"foot_sensors"} and "calibrate_feet_unloaded" in missing.summary()
    cal = FootForceCalibration("go2", "x", (21.0, 17.0, 24.0, 19.0), (0.74, 0.67, 0.8, 0.69))
    assert run_preflight(capture(raw_lying), LIMITS, foot_force_units="raw", calibration=cal).passed
    drifted = dataclasses.replace(cal, offset_counts=(21.0, 17.0, 24.0, -80.0))
    report = run_preflight(capture(raw_lying), LIMITS, foot_force_units="raw", calibration=drifted)
    assert failed(report) == {"foot_sensors"} and "recalibrate" in report.summary()


def test_allowed_crc_failures_pass_and_say_so_and_a_frozen_tick_is_a_warning_not_a_failure():
    report = run_preflight(capture(crc_bad=500, tick=False), dataclasses.replace(LIMITS, allow_without_crc=True))
    assert report.passed, report.table()
    rows = {r.check: r for r in report.rows}
    assert "simulators only" in rows["lowstate_crc"].measured
    assert "tick frozen" in rows["lowstate_clock"].measured


def test_a_link_without_battery_or_stamps_reports_na_and_the_dry_run_skips_the_folded_envelope():
    recorder = PreflightRecorder(1.0)
    for k in range(50):  # the Go1's socket drained once a control period: 10 samples a take, no stamps
        recorder.add(lying(tick_ms=20 * k), 0.02 * k, received=10)
    report = run_preflight(recorder.capture(), LIMITS, robot="go1")
    rows = {r.check: r for r in report.rows}
    assert report.passed, report.table()
    assert rows["battery"].status == "n/a" and rows["link_latency"].status == "n/a"
    assert "jitter not measurable" in rows["lowstate_rate"].measured
    hanging = capture(lambda: lying(joint_pos=np.tile([0.9, 0.7, -2.3], 4)))
    assert not run_preflight(hanging, LIMITS).passed
    assert run_preflight(hanging, dataclasses.replace(LIMITS, folded_envelope=False)).passed
