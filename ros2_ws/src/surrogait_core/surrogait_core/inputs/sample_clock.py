"""The robot's time of each LowState: its `tick` while the tick advances, else this computer's clock.

The gait clock and the estimator's integration steps run on robot time. A Go2 or Go1 counts `tick` in
milliseconds; some simulators leave it at 0 (unitree_mujoco's bridge), and a robot can send a stuck
counter after a fault. A clock that does not advance while samples arrive would freeze the policy's
gait clock (the robot marks time, then sags under a held pose) and make the estimator refuse every
sample as "from the past".

Decision (docs/robot.md, "Inputs the stack checks"): fall back to this computer's clock, with a
warning and a diagnostic that name the cause, rather than refuse to walk. The tick is only a time
base; the stream's rate is checked on its own (`stream_stats`), and a host clock is what a robot's
tick tracks anyway, so nothing is lost but a little timing precision. The fallback is one-way for the
session: a counter that stopped once is not trusted again.

`fallback_s` is the best host time the caller has for the sample: the DDS source timestamp of each
sample (the estimator takes them in batches), or the time the policy node took it.
"""

from __future__ import annotations

from surrogait_core.estimator.samples import TickClock

TICK, HOST = "tick", "host"
CLOCK_FROZEN = "lowstate_clock_frozen"  # the cause's name in diagnostics and the fault log


class SampleClock:
    def __init__(self, frozen_after_s: float = 0.1, frozen_after_samples: int = 5, name: str = "rt/lowstate"):
        """The tick counts as frozen once it has not changed for `frozen_after_s` of host time and
        `frozen_after_samples` samples."""
        if frozen_after_s <= 0 or frozen_after_samples < 2:
            raise ValueError("frozen_after_s must be > 0 and frozen_after_samples >= 2")
        self.frozen_after_s = frozen_after_s
        self.frozen_after_samples = frozen_after_samples
        self.name = name
        self.source = TICK
        self.cause = ""  # why the clock runs on the host ("" while on the tick)
        self._ticks = TickClock()
        self._last_tick: int | None = None
        self._unchanged_since_s = 0.0
        self._unchanged_samples = 0
        self._ever_advanced = False
        self._time_s = 0.0  # robot time of the latest sample
        self._host_anchor: tuple[float, float] | None = None  # (host s, robot s) when the fallback began

    def time_s(self, tick_ms: int, fallback_s: float) -> float:
        """Robot time (s, from an arbitrary origin) of a sample with this tick, taken at host time `fallback_s`."""
        if self.source == HOST:
            host_s, robot_s = self._host_anchor
            self._time_s = robot_s + (fallback_s - host_s)
            return self._time_s
        tick = int(tick_ms)
        if tick != self._last_tick or self._last_tick is None:
            if self._last_tick is not None:
                self._ever_advanced = True
            self._last_tick = tick
            self._unchanged_since_s = fallback_s
            self._unchanged_samples = 1
            self._time_s = self._ticks.time_s(tick)
            return self._time_s
        self._unchanged_samples += 1
        if (fallback_s - self._unchanged_since_s >= self.frozen_after_s
                and self._unchanged_samples >= self.frozen_after_samples):
            # Continue from the robot time of the last tick change: no jump in the gait's phase.
            self.source = HOST
            state = "stopped advancing" if self._ever_advanced else "never advanced"
            self.cause = (f"{self.name} tick {state} (stuck at {tick} over {self._unchanged_samples} samples in "
                          f"{fallback_s - self._unchanged_since_s:.2f} s): the gait clock and the estimator run on "
                          "this computer's clock instead")
            self._host_anchor = (self._unchanged_since_s, self._time_s)
            self._time_s += fallback_s - self._unchanged_since_s
        return self._time_s

    @property
    def on_host(self) -> bool:
        return self.source == HOST
