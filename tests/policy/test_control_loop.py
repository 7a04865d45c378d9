import math
import time

import numpy as np
import pytest

from surrogait_core.runtime.control_loop import DeadlineScheduler, LoopStats


class FakeClock:
    """A clock that only moves when the loop sleeps or 'works'."""

    def __init__(self):
        self.t = 100.0
        self.oversleep = 0.0

    def now(self):
        return self.t

    def sleep(self, dt):
        self.t += dt + self.oversleep

    def work(self, dt):
        self.t += dt


def test_deadlines_are_absolute_so_late_wakeups_do_not_drift():
    clock = FakeClock()
    clock.oversleep = 0.0007  # every sleep wakes 0.7 ms late
    sched = DeadlineScheduler(0.02, clock=clock.now, sleep=clock.sleep)
    sched.start()
    for _ in range(1000):
        tick = sched.wait()
        clock.work(0.003)
    # after 1000 cycles the loop is still on the grid t0 + k·period (a relative sleep would be 0.7 s behind)
    assert tick.index == 1000
    assert tick.deadline_s == pytest.approx(100.0 + 1000 * 0.02)
    assert tick.lateness_s == pytest.approx(0.0007)
    assert sched.overruns == 0 and sched.skipped == 0


def test_an_overrun_is_counted_and_missed_deadlines_are_skipped():
    clock = FakeClock()
    sched = DeadlineScheduler(0.02, clock=clock.now, sleep=clock.sleep)
    sched.start()
    sched.wait()  # cycle 1 at t0 + 0.02
    clock.work(0.025)  # ran past deadline 2 (t0 + 0.04) but not past deadline 3
    tick = sched.wait()
    assert sched.overruns == 1 and tick.skipped == 0 and tick.index == 2
    assert tick.wake_s == pytest.approx(100.045), "an overrun cycle starts at once"
    clock.work(0.07)  # t0+0.115: deadlines 3, 4 and 5 all passed
    tick = sched.wait()
    # 3 and 4 are dropped (no burst of catch-up cycles); 5, the latest, runs at once; then back on the grid
    assert tick.skipped == 2 and tick.index == 5 and tick.wake_s == pytest.approx(100.115)
    assert sched.overruns == 2 and sched.skipped == 2
    clock.work(0.001)
    assert sched.wait().wake_s == pytest.approx(100.12)


def test_real_clock_never_wakes_early_and_stays_on_the_grid():
    # Wall-clock lateness depends on the machine's load, so only what must always hold is asserted.
    sched = DeadlineScheduler(0.005)
    sched.start()
    t0 = sched.deadline(0)
    ticks = [sched.wait() for _ in range(40)]
    assert all(t.wake_s >= t.deadline_s for t in ticks)
    assert all(t.deadline_s == pytest.approx(t0 + t.index * 0.005) for t in ticks)
    assert ticks[-1].index >= 40
    assert time.monotonic() >= t0 + 40 * 0.005


def test_loop_stats_summary_in_milliseconds():
    stats = LoopStats(period_s=0.02)
    sched_ticks = [(k, 100 + 0.02 * k + (0.001 if k == 5 else 0.0)) for k in range(1, 11)]
    from surrogait_core.runtime.control_loop import Tick

    for k, wake in sched_ticks:
        stats.record(Tick(k, 100 + 0.02 * k, wake, 0), compute_s=0.0005, inference_s=0.0001, state_age_s=0.002)
    summary = stats.summary()
    assert summary["cycles"] == 10
    assert summary["period_dev_max_ms"] == pytest.approx(1.0)
    assert summary["period_p50_ms"] == pytest.approx(20.0)
    assert summary["inference_p99_ms"] == pytest.approx(0.1)
    assert summary["state_age_p50_ms"] == pytest.approx(2.0)
    assert stats.series("period_s").size == 10 and np.isnan(stats.series("period_s")[0])


def test_loop_stats_summary_of_the_newest_cycles_only():
    """Diagnostics summarise the last minute even when a benchmark keeps every cycle."""
    from surrogait_core.runtime.control_loop import Tick

    stats = LoopStats(period_s=0.02, window=1000)
    for k in range(1, 101):
        late = 0.005 if k <= 50 else 0.0  # the first half overran by 5 ms, the newest half is on time
        stats.record(Tick(k, 0.02 * k, 0.02 * k + late, 0), compute_s=0.001 if k <= 50 else 0.0005)
    newest = stats.summary(last=40)
    assert newest["cycles"] == 100, "the cycle count stays the total"
    assert newest["compute_max_ms"] == pytest.approx(0.5)
    assert newest["period_dev_max_ms"] == pytest.approx(0.0, abs=1e-9)
    assert stats.summary()["compute_max_ms"] == pytest.approx(1.0)
    np.testing.assert_array_equal(stats.series("compute_s", last=40), stats.series("compute_s")[-40:])


# The same pacer drives the simulator's physics loop (realtime factor, catching up within max_lag_s)
# and the safety monitor's checks (max_lag_s 0, as the policy node).


def test_within_max_lag_the_loop_catches_up_and_counts_late_steps():
    clock = FakeClock()
    sched = DeadlineScheduler(0.002, max_lag_s=0.1, clock=clock.now, sleep=clock.sleep)
    sched.wait()  # t0 + 0.002
    clock.work(0.0101)  # a 10 ms stall: deadlines 2..6 pass (the last by 0.1 ms)
    ticks = [sched.wait() for _ in range(5)]
    # every passed deadline runs, back to back at once (simulated time keeps up with wall time)
    assert [t.index for t in ticks] == [2, 3, 4, 5, 6] and all(t.skipped == 0 for t in ticks)
    assert all(t.wake_s == pytest.approx(100.0121) for t in ticks)
    assert sched.late_steps == 4, "deadlines 2-5 ran more than a period late; 6 only 0.1 ms"
    assert sched.overruns == 5 and sched.resyncs == 0 and sched.skipped == 0
    assert sched.wait().wake_s == pytest.approx(100.014), "then back on the grid"


def test_beyond_max_lag_the_loop_skips_ahead_on_its_grid_and_counts_a_resync():
    clock = FakeClock()
    sched = DeadlineScheduler(0.002, max_lag_s=0.1, clock=clock.now, sleep=clock.sleep)
    sched.wait()
    clock.work(0.5003)  # suspended: 250 deadlines passed, far more than max_lag_s
    tick = sched.wait()
    assert tick.index == 251 and tick.skipped == 249 and tick.wake_s == pytest.approx(100.5023)
    assert sched.resyncs == 1 and sched.skipped == 249 and sched.late_steps == 0
    nxt = sched.wait()
    assert nxt.index == 252 and nxt.wake_s == pytest.approx(100.0 + 252 * 0.002), "one step, on the grid"


def test_control_loops_count_one_resync_per_skip():
    clock = FakeClock()
    sched = DeadlineScheduler(0.005, clock=clock.now, sleep=clock.sleep)  # max_lag_s 0: never catch up
    for stall in (0.004, 0.012, 0.0, 0.031):
        clock.work(stall)
        sched.wait()
    assert sched.overruns == 2 and sched.resyncs == 2 and sched.skipped == 1 + 5
    assert sched.late_steps == 0


def test_a_loop_descheduled_in_its_sleep_wakes_on_the_latest_passed_deadline_not_the_one_it_slept_for():
    """A host stall while the loop sleeps: the tick it returns is the newest passed deadline, so a policy step
    due during the stall runs at once, rather than a stale cycle first and the policy step one cycle later."""
    clock = FakeClock()
    sched = DeadlineScheduler(0.002, clock=clock.now, sleep=clock.sleep)
    sched.wait()
    clock.oversleep = 0.1103  # the next sleep returns 110 ms late
    tick = sched.wait()
    assert tick.index == 2 + 55 and tick.skipped == 55 and tick.lateness_s == pytest.approx(0.0003)
    assert sched.resyncs == 1 and sched.overruns == 0
    clock.oversleep = 0.0007  # late, but within the period: the same deadline
    tick = sched.wait()
    assert tick.index == 58 and tick.skipped == 0 and tick.lateness_s == pytest.approx(0.0007)


def test_realtime_factor_stretches_the_grid_and_the_measured_rate_shows_it():
    clock = FakeClock()
    sched = DeadlineScheduler(0.002, realtime_factor=0.5, clock=clock.now, sleep=clock.sleep)
    assert np.isnan(sched.measured_rate_hz())
    for _ in range(600):
        clock.work(0.001)
        tick = sched.wait()
    assert sched.wall_period_s == pytest.approx(0.004)
    assert tick.deadline_s == pytest.approx(100.0 + 600 * 0.004) and tick.lateness_s == pytest.approx(0.0)
    assert sched.measured_rate_hz() == pytest.approx(250.0)
    assert sched.measured_realtime_factor() == pytest.approx(0.5)


def test_free_running_never_sleeps_and_is_never_late():
    clock = FakeClock()
    sleeps = []
    sched = DeadlineScheduler(0.002, realtime_factor=math.inf, clock=clock.now, sleep=sleeps.append)
    for _ in range(100):
        clock.work(0.0005)
        tick = sched.wait()
    assert sched.free_running and not sleeps
    assert tick.index == 100 and tick.lateness_s == 0.0 and tick.wake_s == pytest.approx(100.05)
    assert sched.overruns == sched.late_steps == sched.resyncs == 0
    assert sched.measured_realtime_factor() == pytest.approx(4.0)  # 2 ms of loop time per 0.5 ms


def test_start_reanchors_and_forgets_the_measured_rate():
    clock = FakeClock()
    sched = DeadlineScheduler(0.01, clock=clock.now, sleep=clock.sleep)
    sched.wait()
    sched.wait()
    clock.work(1.0)
    sched.start()
    assert np.isnan(sched.measured_rate_hz())
    tick = sched.wait()
    assert tick.index == 1 and tick.wake_s == pytest.approx(101.03) and sched.overruns == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"period_s": 0.0},
        {"period_s": math.nan},
        {"period_s": 0.01, "realtime_factor": -1.0},
        {"period_s": 0.01, "realtime_factor": math.nan},
        {"period_s": 0.01, "max_lag_s": -0.1},
    ],
)
def test_bad_pacer_arguments(kwargs):
    with pytest.raises(ValueError):
        DeadlineScheduler(**kwargs)
