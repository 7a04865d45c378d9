"""The safety monitor judges rt/lowstate as an input: faults for a slow stream or a bad IMU when they matter,
named input events (not faults) for what the stack adapts to, and no verdict on a sample failing its CRC."""

import dataclasses

import numpy as np
from safety_helpers import CONTRACT, SPEC, lying_q, state, stiff

from surrogait_core.safety import SafetyMonitor, default_thresholds

TH = default_thresholds(SPEC, CONTRACT)
RNG = np.random.default_rng(2)


def live(t, **changes):
    return dataclasses.replace(state(**changes), tick_ms=int(round(t * 1000)), gyro_b=RNG.normal(0, 0.01, 3))


def run(m, t0, t1, rate_hz=500.0, crc_ok=True, make=live, cmd=True, **changes):
    """Polls at 200 Hz taking what a `rate_hz` stream sent since the last poll; stiff commands at 50 Hz."""
    results = []
    for k in range(int(round((t1 - t0) / 0.005))):
        t = t0 + k * 0.005
        received = int((k + 1) * rate_hz * 0.005) - int(k * rate_hz * 0.005)
        if received:
            m.on_lowstate(make(t, **changes), t, received, crc_ok)
        if cmd and k % 4 == 0:
            m.on_lowcmd(stiff(), t)
        results.append(m.check(t))
    return results


def events(results, kind):
    return [e for r in results for e in r.events if e.event == kind]


def standing(t0=0.0):
    m = SafetyMonitor(TH)
    m.on_policy_state("READY", t0)
    return m


def test_a_healthy_stream_raises_nothing():
    results = run(standing(), 0.0, 3.0, rate_hz=500.0)  # 600 Hz counted: plenty
    assert not any(r.latched or r.events for r in results)


def test_a_slow_stream_is_a_fault_while_the_motors_are_driven_and_named():
    results = run(standing(), 0.0, 3.0, rate_hz=60.0)  # 60 Hz
    faults = events(results, "fault")
    assert results[-1].latched and faults[0].cause == "lowstate_rate_low" and "60 Hz" in faults[0].detail


def test_a_slow_stream_to_a_robot_lying_passive_is_an_input_event_not_a_fault():
    m = SafetyMonitor(TH)
    results = run(m, 0.0, 3.0, rate_hz=60.0, cmd=False, q=lying_q())
    assert not any(r.latched for r in results)
    assert [e.cause for e in events(results, "input")] == ["lowstate_rate_low"]


def test_an_accelerometer_that_dies_while_walking_is_a_fault():
    m = standing()
    run(m, 0.0, 1.0, rate_hz=500.0)
    later = run(m, 1.0, 3.5, make=lambda t: dataclasses.replace(live(t), accel_b=np.zeros(3)))
    faults = events(later, "fault")
    assert later[-1].latched and faults[0].cause == "imu_gravity_norm"


def test_a_frozen_tick_is_named_once_and_is_not_a_fault():
    m = standing()
    results = run(m, 0.0, 2.0, make=lambda t: dataclasses.replace(live(t), tick_ms=0))
    assert not any(r.latched for r in results)
    frozen = events(results, "input")
    assert [e.cause for e in frozen] == ["lowstate_clock_frozen"] and "never advanced" in frozen[0].detail
    assert "adapts" in frozen[0].action


def test_samples_failing_their_crc_are_not_judged_and_a_stream_of_only_those_goes_stale():
    m = standing()
    run(m, 0.0, 0.5, rate_hz=500.0)
    results = run(m, 0.5, 0.7, crc_ok=False)
    assert "lowstate_crc" in m.inputs.issues()
    assert results[-1].latched and events(results, "fault")[0].cause == "lowstate_stale"
    allowed = SafetyMonitor(TH, allow_lowstate_without_crc=True)
    allowed.on_policy_state("READY", 0.0)
    results = run(allowed, 0.0, 1.0, crc_ok=False)
    assert not any(r.latched for r in results)
    assert [e.cause for e in events(results, "input")] == ["lowstate_crc"]
