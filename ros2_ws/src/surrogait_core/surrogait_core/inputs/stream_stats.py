"""A stream's rate and jitter over windows of time, from running sums (no per-sample storage).

Fed each sample's time (its source stamp, or when it arrived); every `window_s` the window closes
into a `WindowSummary` (rate, mean / standard deviation / largest interval) and a new one begins.
Readers that keep only a few samples between takes pass `contiguous=False` for a batch whose first
sample may not follow the previous batch's last (the reader's history overflowed): that one
interval is not counted, so a slow reader cannot make a fast stream look slow.
"""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class WindowSummary:
    samples: int  # intervals counted in the window
    span_s: float
    rate_hz: float
    mean_interval_ms: float
    std_interval_ms: float
    max_interval_ms: float


class IntervalStats:
    def __init__(self, window_s: float = 1.0):
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.window_s = window_s
        self.last: WindowSummary | None = None  # the latest complete window
        self.total = 0  # samples seen
        self._prev_t: float | None = None
        self._start_t: float | None = None
        self._n = 0
        self._sum = 0.0
        self._sum_sq = 0.0
        self._max = 0.0

    def add(self, t_s: float, contiguous: bool = True) -> WindowSummary | None:
        """One sample at `t_s`; returns the window it closed, if any."""
        self.total += 1
        prev, self._prev_t = self._prev_t, t_s
        if self._start_t is None:
            self._start_t = t_s
        if prev is not None and contiguous:
            dt = t_s - prev
            if dt < 0.0:  # a clock stepped back: start the window again rather than count nonsense
                self._reset(t_s)
                return None
            self._n += 1
            self._sum += dt
            self._sum_sq += dt * dt
            self._max = max(self._max, dt)
        if t_s - self._start_t >= self.window_s and self._n > 0:
            return self._close(t_s)
        return None

    def current(self) -> WindowSummary | None:
        """The window in progress (None before two samples)."""
        if self._n == 0:
            return None
        return self._summary()

    def _summary(self) -> WindowSummary:
        mean = self._sum / self._n
        var = max(0.0, self._sum_sq / self._n - mean * mean)
        return WindowSummary(self._n, self._sum, self._n / self._sum if self._sum > 0 else math.inf, mean * 1e3,
                             math.sqrt(var) * 1e3, self._max * 1e3)

    def _close(self, t_s: float) -> WindowSummary:
        self.last = self._summary()
        self._reset(t_s)
        return self.last

    def _reset(self, t_s: float) -> None:
        self._start_t = t_s
        self._n = 0
        self._sum = self._sum_sq = self._max = 0.0


def required_lowstate_rate_hz(control_dt_s: float, samples_per_period: float = 2.0) -> float:
    """The LowState rate a policy with this control period needs: two samples a period by default, so that
    every policy step finds one no older than half a period (the Go2 sends 500 Hz, some simulators 200)."""
    return samples_per_period / control_dt_s


class SampleRate:
    """Samples counted over windows of host time: the rate a reader sees, for readers that take several
    samples at once (the policy node once a control period, the Go1's UDP drained in bursts)."""

    def __init__(self, window_s: float = 1.0):
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.window_s = window_s
        self.last_rate_hz: float | None = None  # the latest complete window's
        self._start_s: float | None = None
        self._count = 0

    def add(self, count: int, now_s: float) -> float | None:
        """`count` samples taken at `now_s`; returns the rate of the window it closed, if any."""
        if self._start_s is None:
            self._start_s = now_s  # samples counted from the first take on
            return None
        self._count += count
        span = now_s - self._start_s
        if span < self.window_s:
            return None
        self.last_rate_hz = self._count / span
        self._start_s, self._count = now_s, 0
        return self.last_rate_hz

    def restart(self, now_s: float) -> None:
        """Forget the window in progress (after a stall of the reader itself: it did not take, the stream went on)."""
        self._start_s, self._count = now_s, 0
