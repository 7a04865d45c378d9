"""Real-time scheduling for the processes that keep a robot safe."""

from __future__ import annotations

import os


def try_realtime(priority: int) -> bool:
    """Run this process (and the threads it starts later) under SCHED_FIFO at `priority`.

    A robot's control computer runs its control stack with real-time priority; on a shared
    machine other jobs' load otherwise shows up as 50-300 ms silences of the simulator and the
    nodes, which the safety monitor rightly calls faults. False where not permitted (not root).
    """
    if priority <= 0:
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        return True
    except (PermissionError, OSError):
        return False
