"""CPU time the hypervisor took from this machine while a rehearsal ran (Linux /proc/stat "steal").

On a virtual machine every vCPU can be paused by the host. A pause stalls every process at once: the
simulator's physics loop, the policy node's real-time thread and the safety monitor alike, and no
priority inside the VM helps. The safety monitor then sees, truthfully, a silent policy or a stale
state, and damps. Such a fault is the machine's, not the stack's, and telling the two apart needs a
measurement: the kernel counts the time each vCPU was ready but not running as "steal" (the 8th
value of the `cpu` line of /proc/stat, in clock ticks). `StealSampler` reads it every 20 ms in a
thread of the harness, so the report can show how much was taken and when the worst burst was.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")
STEAL_FIELD = 8  # "cpu user nice system idle iowait irq softirq steal guest guest_nice"


def read_steal_ticks(stat_text: str) -> int:
    """The steal ticks of all CPUs together, from the text of /proc/stat."""
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            if len(fields) <= STEAL_FIELD:
                raise ValueError(f"/proc/stat's cpu line has no steal column: {line!r}")
            return int(fields[STEAL_FIELD])
    raise ValueError("/proc/stat has no aggregate cpu line")


def worst_window(times_s: list[float], ticks: list[int], window_s: float) -> tuple[int, float]:
    """The most ticks stolen between two samples at most `window_s` apart, and the later sample's time."""
    worst, at, start = 0, times_s[0] if times_s else 0.0, 0
    for end in range(1, len(times_s)):
        while times_s[end] - times_s[start] > window_s + 1e-9:
            start += 1
        stolen = ticks[end] - ticks[min(start, end - 1)]
        if stolen > worst:
            worst, at = stolen, times_s[end]
    return worst, at


@dataclasses.dataclass
class StealSummary:
    available: bool  # False where /proc/stat has no steal count (not Linux)
    total_ms: float = 0.0  # CPU time taken from all this machine's CPUs together
    worst_ms: float = 0.0  # the most taken within any `window_ms`
    worst_at_unix_s: float = 0.0  # when that window ended (wall clock, to compare with the fault log)
    window_ms: float = 100.0
    samples: int = 0


class StealSampler:
    """Samples the steal count every `period_s` from start() to stop()."""

    def __init__(self, period_s: float = 0.02, window_s: float = 0.1, stat_path: Path = PROC_STAT):
        self.period_s, self.window_s, self.stat_path = period_s, window_s, stat_path
        self.tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 10.0
        self._times: list[float] = []
        self._ticks: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="steal_sampler", daemon=True)

    def _sample(self) -> bool:
        """Record one reading; False where the count cannot be read (no /proc/stat here, or a read without its cpu
        line): one unreadable sample is a gap in the record, not the end of the measurement."""
        try:
            ticks = read_steal_ticks(self.stat_path.read_text())
        except (OSError, ValueError):
            return False
        self._ticks.append(ticks)
        self._times.append(time.time())
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self._sample()

    def start(self) -> StealSampler:
        if not self._sample():
            return self  # nothing to measure here; stop() says so
        self._thread.start()
        return self

    def stop(self) -> StealSummary:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
            self._sample()
        if not self._ticks:
            return StealSummary(available=False)
        worst, at = worst_window(self._times, self._ticks, self.window_s)
        return StealSummary(available=True, total_ms=(self._ticks[-1] - self._ticks[0]) * self.tick_ms,
                            worst_ms=worst * self.tick_ms, worst_at_unix_s=at, window_ms=self.window_s * 1e3,
                            samples=len(self._ticks))  # fmt: skip
