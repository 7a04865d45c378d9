"""Absolute-deadline scheduling of a fixed-rate control loop, and its timing statistics.

Cycle k is due at t0 + k·period. Sleeping to that absolute time, rather than for one period
after the work finished, keeps the rate exact: a late wake-up shortens the next wait instead
of shifting every later cycle (no drift). A late cycle runs at once; deadlines that passed
entirely during an overrun are skipped (counted) instead of run back to back, so the robot
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
    """`wait()` returns at t0 + k·period for k = 1, 2, ... (clock and sleep injectable for tests)."""

    def __init__(
        self,
        period_s: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        spin_s: float = 0.0,
    ):
        if period_s <= 0:
            raise ValueError(f"period_s must be positive, got {period_s}")
        self.period_s = period_s
        self.spin_s = spin_s  # busy-wait this long before a deadline for sub-sleep-granularity wake-ups
        self._clock, self._sleep = clock, sleep
        self._t0: float | None = None
        self._index = 0
        self.overruns = 0  # cycles whose work ended after the next deadline
        self.skipped = 0  # deadlines dropped because of overruns

    def start(self, now_s: float | None = None) -> None:
        self._t0 = self._clock() if now_s is None else now_s
        self._index = 0

    def deadline(self, index: int) -> float:
        assert self._t0 is not None, "call start() first"
        return self._t0 + index * self.period_s

    def wait(self) -> Tick:
        if self._t0 is None:
            self.start()
        self._index += 1
        now = self._clock()
        due = self.deadline(self._index)
        skipped = 0
        if now > due:
            # The previous cycle's work ran past this deadline: an overrun. If it is more than a
            # whole period late, skip forward to the next deadline still in the future.
            self.overruns += 1
            behind = math.floor((now - due) / self.period_s)
            if behind >= 1:
                skipped = behind
                self._index += behind
                self.skipped += behind
                due = self.deadline(self._index)
        remaining = due - now
        if remaining > self.spin_s:
            self._sleep(remaining - self.spin_s)
        while self.spin_s > 0 and self._clock() < due:
            pass
        return Tick(index=self._index, deadline_s=due, wake_s=self._clock(), skipped=skipped)


class LoopStats:
    """Per-cycle timings of a control loop (the last `window` cycles) and their summary."""

    FIELDS = ("wake_s", "period_s", "lateness_s", "inference_s", "compute_s", "state_age_s")

    def __init__(self, period_s: float, window: int = 3000):
        self.period_s = period_s
        self.cycles = 0
        self._last_wake: float | None = None
        self._series = {f: collections.deque(maxlen=window) for f in self.FIELDS}

    def record(self, tick: Tick, compute_s: float, inference_s: float | None = None,
               state_age_s: float | None = None) -> None:
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
