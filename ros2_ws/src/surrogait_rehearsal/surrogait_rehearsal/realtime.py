"""Absolute-deadline pacing of the physics loop, so simulated time tracks wall time without drift."""

from __future__ import annotations

import math
import time
from collections import deque


class DeadlineClock:
    """Step k is due at start + k·dt / realtime_factor (realtime_factor 0 or inf: as fast as possible).

    Sleeping to absolute deadlines (not `sleep(dt)` after each step) keeps jitter from
    accumulating. When the loop falls more than `max_lag_s` behind (e.g. the process was
    suspended), it re-anchors instead of running a burst of catch-up steps, and counts it.
    """

    def __init__(self, dt_s: float, realtime_factor: float = 1.0, max_lag_s: float = 0.1,
                 clock=time.monotonic, sleep=time.sleep) -> None:
        if dt_s <= 0:
            raise ValueError(f"dt must be positive, got {dt_s}")
        if realtime_factor < 0 or math.isnan(realtime_factor):
            raise ValueError(f"realtime_factor must be >= 0 (0 = as fast as possible), got {realtime_factor}")
        self.free_running = realtime_factor == 0 or math.isinf(realtime_factor)
        self.period_s = 0.0 if self.free_running else dt_s / realtime_factor
        self.dt_s = dt_s
        self.max_lag_s = max_lag_s
        self._clock, self._sleep = clock, sleep
        self._anchor = clock()
        self._k = 0  # steps since the anchor
        self.steps = 0
        self.resyncs = 0
        self.late_steps = 0  # steps started after their deadline
        self._window: deque[tuple[float, int]] = deque(maxlen=512)

    def wait_next(self) -> None:
        """Block until the next step is due."""
        self._k += 1
        self.steps += 1
        now = self._clock()
        self._window.append((now, self.steps))
        if self.free_running:
            return
        deadline = self._anchor + self._k * self.period_s
        if now < deadline:
            self._sleep(deadline - now)
        elif now - deadline > self.max_lag_s:
            self._anchor, self._k = now, 0
            self.resyncs += 1
        elif now - deadline > self.period_s:
            self.late_steps += 1

    def measured_realtime_factor(self) -> float:
        """Simulated seconds per wall second over the recent window of steps."""
        if len(self._window) < 2:
            return float("nan")
        (t0, k0), (t1, k1) = self._window[0], self._window[-1]
        if t1 <= t0:
            return float("nan")
        return (k1 - k0) * self.dt_s / (t1 - t0)


class SimTimeEvery:
    """Due once per `1 / rate_hz` of simulated time, checked after each physics step of `dt_s`.

    Rates that do not divide the physics rate come out right on average (300 Hz at 500 Hz
    physics: every 1 or 2 steps), and a late check never fires twice in a row to catch up.
    """

    def __init__(self, rate_hz: float, dt_s: float) -> None:
        self.period_s = 1.0 / rate_hz
        self._eps = 0.5 * dt_s
        self._next = self.period_s  # first due one period after the start

    def due(self, t: float) -> bool:
        if t + self._eps < self._next:
            return False
        self._next = max(self._next + self.period_s, t - self._eps)
        return True
