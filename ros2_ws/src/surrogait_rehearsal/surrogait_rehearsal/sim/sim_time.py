"""Rate dividers in simulated time: what the physics loop does once per so many simulated seconds.

The wall-clock pacing of the loop itself is `surrogait_core.runtime.control_loop.DeadlineScheduler`.
"""

from __future__ import annotations


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
