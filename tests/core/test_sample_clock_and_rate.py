"""The robot's time of each LowState (tick, or this computer's clock when the tick is frozen) and the stream's rate."""

import pytest

from surrogait_core.inputs.sample_clock import HOST, TICK, SampleClock
from surrogait_core.inputs.stream_stats import IntervalStats, SampleRate, required_lowstate_rate_hz


def test_a_ticking_robot_runs_on_its_tick_even_when_this_computer_lags():
    clock = SampleClock()
    times = [clock.time_s(1000 + 2 * k, 0.5 + 0.003 * k) for k in range(100)]  # host samples 1.5x slower
    assert clock.source == TICK and not clock.cause
    assert times[-1] - times[0] == pytest.approx(0.198)


def test_a_tick_that_never_advances_falls_back_to_the_host_clock_and_says_why():
    clock = SampleClock(frozen_after_s=0.1, frozen_after_samples=5)
    times = [clock.time_s(0, 10.0 + 0.02 * k) for k in range(20)]  # 50 Hz takes, tick stuck at 0
    assert clock.source == HOST
    assert "never advanced" in clock.cause and "stuck at 0" in clock.cause and "this computer's clock" in clock.cause
    # robot time starts where the tick left it and then advances with the host clock
    assert times[0] == times[4] == 0.0
    assert times[-1] == pytest.approx(0.02 * 19)
    assert all(b > a for a, b in zip(times[6:], times[7:], strict=False))


def test_a_tick_that_stops_mid_run_continues_without_a_jump_and_the_fallback_stays():
    clock = SampleClock(frozen_after_s=0.1, frozen_after_samples=5)
    for k in range(50):
        last = clock.time_s(5000 + 20 * k, 1.0 + 0.02 * k)
    stuck_tick = 5000 + 20 * 49
    after = [clock.time_s(stuck_tick, 1.0 + 0.02 * (50 + k)) for k in range(10)]
    assert clock.source == HOST and "stopped advancing" in clock.cause
    assert after[-1] == pytest.approx(last + 0.2)  # host time since the last tick change, no jump
    clock.time_s(stuck_tick + 500, 1.0 + 0.02 * 61)  # the tick moves again: the fallback is for the session
    assert clock.source == HOST


def test_sample_rate_counts_what_arrived_between_takes():
    rate = SampleRate(window_s=1.0)
    for k in range(1, 120):  # a 50 Hz reader taking 10 samples each time: 500 Hz
        rate.add(10, 0.02 * k)
    assert rate.last_rate_hz == pytest.approx(500, rel=0.03)
    slow = SampleRate(window_s=1.0)
    for k in range(1, 120):
        slow.add(1, 0.02 * k)  # one sample a take: 50 Hz
    assert slow.last_rate_hz == pytest.approx(50, rel=0.03)
    assert required_lowstate_rate_hz(0.02) == 100.0


def test_interval_stats_rate_jitter_and_gaps_and_an_overflowed_reader_is_not_a_slow_stream():
    stats = IntervalStats(window_s=1.0)
    t = 0.0
    for k in range(600):
        t += 0.002 if k != 300 else 0.030  # one 30 ms gap
        stats.add(t)
    w = stats.last
    assert w.rate_hz == pytest.approx(500, rel=0.05) and w.max_interval_ms == pytest.approx(30.0)
    assert w.std_interval_ms > 0.5
    reader = IntervalStats(window_s=10.0)
    reader.add(0.0)
    reader.add(0.002)
    reader.add(0.100, contiguous=False)  # the history overflowed in between: not an interval
    reader.add(0.102)
    assert reader.current().max_interval_ms == pytest.approx(2.0)
