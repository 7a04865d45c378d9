"""Real-time scheduling, and no long garbage-collector pauses, for the processes that keep a robot safe."""

from __future__ import annotations

import gc
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


def freeze_startup_objects() -> int:
    """Keep CPython's full garbage collections out of a process that must answer within milliseconds.

    A full (generation-2) collection scans every object the collector tracks; with rclpy,
    onnxruntime, numpy and cyclonedds loaded that is 40–50 ms of CPU on a 2-core machine, and it
    runs in whichever thread allocates when it falls due, holding the GIL throughout. Measured in
    a rehearsal: 51 ms in the policy node's control thread (a 55 ms hole in the LowCmd stream,
    which the safety monitor rightly calls a silent policy) and 43 ms in the monitor's own
    rt/lowcmd listener. What exists once a node has started (modules, the model, ROS and DDS
    entities) lives as long as the process, so it is collected once and then frozen: later
    collections scan only what the running loops allocate (well under a millisecond). Returns
    the number of objects frozen.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
