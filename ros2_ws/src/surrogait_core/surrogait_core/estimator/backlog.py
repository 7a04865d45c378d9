"""Keeping up with a 500 Hz sample stream on a busy computer: what to process, and how late it is.

A reader that takes every waiting sample at once finds a backlog after each time it was
descheduled. Working through all of it keeps every sample but makes the newest estimate late
by the whole backlog's processing time; on a loaded 2-core machine that grew without bound.
`CatchUpBudget` keeps the newest samples it can process within a time budget and says how many
older ones to skip (the filter bridges the skipped span with one longer step: the robot's tick
gives it the true dt). `SampleAge` says how old a sample already was when it was taken.
"""

from __future__ import annotations

import collections
import math


class CatchUpBudget:
    """How many of the waiting samples (the newest ones) to process, from the measured cost per sample."""

    def __init__(self, budget_s: float = 0.01, initial_cost_s: float = 0.001, smoothing: float = 0.1):
        if not (budget_s > 0.0 and initial_cost_s > 0.0 and 0.0 < smoothing <= 1.0):
            raise ValueError("catch-up budget_s and initial_cost_s must be > 0, smoothing in (0, 1]")
        self.budget_s = budget_s
        self.cost_s = initial_cost_s  # wall time per sample (decode, filter, publish), smoothed
        self._smoothing = smoothing

    def plan(self, waiting: int) -> int:
        """Samples to process out of `waiting` (always the newest; at least one if any are waiting)."""
        if waiting <= 0:
            return 0
        return max(1, min(waiting, int(self.budget_s / self.cost_s)))

    def record(self, processed: int, wall_s: float) -> None:
        """`processed` samples took `wall_s` of wall time (descheduling included: that is what delays them)."""
        if processed > 0 and wall_s >= 0.0:
            self.cost_s += self._smoothing * (max(wall_s / processed, 1e-6) - self.cost_s)


class SampleAge:
    """Age of the newest sample at the moment it is taken, from its writer's timestamp.

    On one host (rehearsal) the writer's clock is this one and `now - source` is the age. A
    robot's clock may be offset by anything, so the offset `now - source` is taken relative to
    its smallest value over the last `window_s` (a sample taken as soon as it arrived), and the
    result is bounded by physics: the sample cannot be older than the previous take (the reader
    was emptied then) nor younger than zero.
    """

    def __init__(self, window_s: float = 10.0, bucket_s: float = 1.0):
        if not (window_s > 0.0 and 0.0 < bucket_s <= window_s):
            raise ValueError("SampleAge needs 0 < bucket_s <= window_s")
        self._bucket_s = bucket_s
        self._buckets: collections.deque[tuple[float, float]] = collections.deque(
            maxlen=int(math.ceil(window_s / bucket_s)))  # (bucket start, smallest offset in it)

    def at_take(self, source_time_s: float, now_s: float, since_previous_take_s: float | None) -> float:
        """`source_time_s`: the writer's timestamp (its wall clock); `now_s`: this host's wall clock now;
        `since_previous_take_s`: time since the reader was last emptied (None on the first take)."""
        offset = now_s - source_time_s
        if self._buckets and now_s - self._buckets[-1][0] < self._bucket_s:
            start, smallest = self._buckets[-1]
            self._buckets[-1] = (start, min(smallest, offset))
        else:
            self._buckets.append((now_s, offset))
        age = offset - min(smallest for _, smallest in self._buckets)
        if since_previous_take_s is not None:
            age = min(age, max(since_previous_take_s, 0.0))
        return max(age, 0.0)
