"""Absolute-deadline pacing of a fixed-rate loop, and the control loop's timing statistics.

One pacer, `DeadlineScheduler`, for every fixed-rate loop in the project: the policy node's
LowCmd stream, the rehearsal simulator's physics loop and the safety monitor's checks.

Cycle k is due at t0 + k·period. Sleeping to that absolute time, rather than for one period
after the work finished, keeps the rate exact: a late wake-up shortens the next wait instead
of shifting every later cycle (no drift). A late cycle runs at once; deadlines that passed
more than `max_lag_s` ago are skipped (counted) instead of run back to back, so the robot
never gets a burst of commands computed from the same state.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import time
from collections.abc import Callable

import numpy as np


@dataclasses.dataclass(frozen=True)
class Tick:
    index: int  # cycle number since start, counting skipped cycles
    deadline_s: float  # when this cycle was due (scheduler clock)
    wake_s: float  # when the loop actually woke up
    skipped: int  # deadlines skipped just before this one because the previous cycle overran

    @property
    def lateness_s(self) -> float:
        return self.wake_s - self.deadline_s


class DeadlineScheduler:
    """`wait()` returns at t0 + k·period_s / realtime_factor for k = 1, 2, ... (t0: construction or `start()`).

    An overrun (the deadline already passed when `wait()` is called) runs at once. A loop at most
    `max_lag_s` behind catches up, running the passed deadlines back to back: the simulator allows
    0.1 s, so that simulated time keeps pace with wall time. Further behind, as the control loops
    are after any whole period (max_lag_s 0), it skips to the latest passed deadline, staying on
    its grid, rather than bursting, and counts a resync.

    realtime_factor 0 or inf runs free, never waiting (the simulator as fast as it can go).
    Clock and sleep are injectable for tests.
    """

    RATE_WINDOW = 512  # wake-ups behind `measured_rate_hz` (about a second of the 500 Hz loops)

    def __init__(
        self,
        period_s: float,
        *,
        realtime_factor: float = 1.0,
        max_lag_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        spin_s: float = 0.0,
    ) -> None:
        if not period_s > 0:
            raise ValueError(f"period_s must be positive, got {period_s}")
        if not realtime_factor >= 0:
            raise ValueError(f"realtime_factor must be >= 0 (0 = as fast as possible), got {realtime_factor}")
        if not max_lag_s >= 0:
            raise ValueError(f"max_lag_s must be >= 0, got {max_lag_s}")
        self.period_s = period_s  # in the loop's own time: simulated time for the simulator
        self.free_running = realtime_factor == 0 or math.isinf(realtime_factor)
        self.wall_period_s = 0.0 if self.free_running else period_s / realtime_factor
        self.max_lag_s = max_lag_s
        self.spin_s = spin_s  # busy-wait this long before a deadline for sub-sleep-granularity wake-ups
        self._clock, self._sleep = clock, sleep
        self._wakes: collections.deque[float] = collections.deque(maxlen=self.RATE_WINDOW)
        self.overruns = 0  # cycles whose work ended after the next deadline
        self.skipped = 0  # deadlines dropped because the loop fell more than max_lag_s behind
        self.resyncs = 0  # times it dropped some
        self.late_steps = 0  # cycles run more than a whole period late while catching up
        self.start()

    def start(self, now_s: float | None = None) -> None:
        """Anchor the grid at now (or `now_s`): the first `wait()` returns one period later."""
        self._t0 = self._clock() if now_s is None else now_s
        self._index = 0
        self._wakes.clear()

    def deadline(self, index: int) -> float:
        return self._t0 + index * self.wall_period_s

    def wait(self) -> Tick:
        self._index += 1
        now = self._clock()
        if self.free_running:
            self._wakes.append(now)
            return Tick(index=self._index, deadline_s=now, wake_s=now, skipped=0)
        due = self._t0 + self._index * self.wall_period_s
        skipped = 0
        if now > due:
            # The previous cycle's work ran past this deadline: an overrun.
            self.overruns += 1
            lag = now - due
            if lag > self.max_lag_s:
                due, skipped = self._skip_to_latest_passed(now)
            elif lag > self.wall_period_s:
                self.late_steps += 1
        remaining = due - now
        if remaining > self.spin_s:
            self._sleep(remaining - self.spin_s)
        while self.spin_s > 0 and self._clock() < due:
            pass
        wake = self._clock()
        if wake - due > self.max_lag_s:
            # Descheduled in its sleep (a loaded or stalled host): the deadline it slept for passed long
            # ago, and a control loop would send a command computed for it (a stale repeat) before
            # noticing. Run the latest passed deadline instead: after a stall, the first command is fresh.
            due, more = self._skip_to_latest_passed(wake)
            skipped += more
        self._wakes.append(wake)
        return Tick(index=self._index, deadline_s=due, wake_s=wake, skipped=skipped)

    def _skip_to_latest_passed(self, now: float) -> tuple[float, int]:
        """Too far behind to catch up: skip forward to the latest deadline already passed (within a
        nanosecond, so that rounding in t0 + k·period cannot leave one behind). (its time, deadlines skipped)"""
        skipped = math.floor((now - self.deadline(self._index) + 1e-9) / self.wall_period_s)
        if skipped:
            self._index += skipped
            self.skipped += skipped
            self.resyncs += 1
        return self.deadline(self._index), skipped

    def measured_rate_hz(self) -> float:
        """Cycles per wall second over the last `RATE_WINDOW` wake-ups (NaN before two)."""
        wakes = self._wakes
        if len(wakes) < 2 or wakes[-1] <= wakes[0]:
            return math.nan
        return (len(wakes) - 1) / (wakes[-1] - wakes[0])

    def measured_realtime_factor(self) -> float:
        """Loop-time seconds (`period_s` a cycle) per wall second: the simulator's achieved speed."""
        return self.measured_rate_hz() * self.period_s


class LoopStats:
    """Per-cycle timings of a control loop (the last `window` cycles) and their summary."""

    FIELDS = ("wake_s", "period_s", "lateness_s", "inference_s", "compute_s", "state_age_s")

    def __init__(self, period_s: float, window: int = 3000):
        self.period_s = period_s
        self.cycles = 0
        self._last_wake: float | None = None
        self._series = {f: collections.deque(maxlen=window) for f in self.FIELDS}

    def record(
        self, tick: Tick, compute_s: float, inference_s: float | None = None, state_age_s: float | None = None
    ) -> None:
        """One cycle: `compute_s` from wake-up to command written; `state_age_s` of the state used.

        Every series gets one entry a cycle (NaN where there is no value: no inference outside
        WALK, no period for the first cycle), so they line up with `wake_s`.
        """
        self.cycles += 1
        nan = float("nan")
        values = {
            "wake_s": tick.wake_s,
            "period_s": nan if self._last_wake is None else tick.wake_s - self._last_wake,
            "lateness_s": tick.lateness_s,
            "inference_s": nan if inference_s is None else inference_s,
            "compute_s": compute_s,
            "state_age_s": nan if state_age_s is None else state_age_s,
        }
        self._last_wake = tick.wake_s
        for field, value in values.items():
            self._series[field].append(value)

    def series(self, field: str, last: int | None = None) -> np.ndarray:
        """The kept values of one field, oldest first; only the newest `last` of them if given."""
        values = self._series[field]
        if last is not None and last < len(values):
            # From the right end: O(last), however long the kept window (a benchmark keeps every cycle).
            return np.fromiter(itertools.islice(reversed(values), last), dtype=np.float64, count=last)[::-1]
        return np.asarray(values, dtype=np.float64)

    def summary(self, last: int | None = None) -> dict[str, float]:
        """Percentiles (ms) over the kept cycles, or the newest `last` of them; `period_dev` is |period − nominal|."""
        return timing_summary({f: self.series(f, last) for f in self.FIELDS}, self.period_s, cycles=self.cycles)


def timing_summary(series: dict[str, np.ndarray], period_s: float, cycles: int | None = None) -> dict[str, float]:
    """p50/p99/max (ms) of each timing series (NaNs ignored); also used on a window of a saved log."""
    period = np.asarray(series["period_s"])
    columns = {
        "period": period,
        "period_dev": np.abs(period - period_s),
        "inference": series["inference_s"],
        "compute": series["compute_s"],
        "state_age": series["state_age_s"],
    }
    out: dict[str, float] = {"cycles": float(len(period) if cycles is None else cycles)}
    for name, values in columns.items():
        values = np.asarray(values, dtype=np.float64)
        values = values[np.isfinite(values)]
        if values.size == 0:
            continue
        ms = values * 1e3
        out[f"{name}_p50_ms"] = float(np.percentile(ms, 50))
        out[f"{name}_p99_ms"] = float(np.percentile(ms, 99))
        out[f"{name}_max_ms"] = float(ms.max())
    return out
