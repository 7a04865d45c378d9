"""Real-time scheduling, and no long garbage-collector pauses, for the processes that keep a robot safe.

`enter_realtime` is how every process of the stack goes real-time (the nodes, the simulators, the Gazebo bridge
and its stand-in, the rehearsal harness's children), from one parameter, `realtime_priority`.
"""

from __future__ import annotations

import gc
import os
from typing import Protocol


class _Logger(Protocol):
    def info(self, message: str) -> object: ...

    def warning(self, message: str) -> object: ...


def enter_realtime(priority: int, logger: _Logger | None = None, *, this_thread_only: bool = False) -> bool:
    """Run this process under SCHED_FIFO at `priority` (1..99; 0: leave it as it is); False where not permitted.

    A robot's control computer runs its control stack with real-time priority; on a shared machine other jobs'
    load otherwise shows up as 50-300 ms silences of the simulator and the nodes, which the safety monitor
    rightly calls faults. Linux sets a policy per thread, and a thread inherits it only from the thread that
    creates it; rclpy and the DDS libraries start their threads (discovery, receive) before a node reads its
    parameters, and a loop that waits for their messages stalls with them when they are starved. So every
    current thread of the process is moved (threads started later by any of them inherit it).

    `this_thread_only`: the calling thread alone (the policy node's control thread, one step above the rest of
    its process). Where not permitted (needs root or CAP_SYS_NICE) it says so on `logger` and changes nothing.
    """
    if priority <= 0:
        return False
    tids = [0] if this_thread_only else [int(t) for t in os.listdir("/proc/self/task")]
    moved = 0
    try:
        for tid in tids:
            try:
                os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
                moved += 1
            except ProcessLookupError:
                continue  # a thread that ended meanwhile
    except OSError as e:  # PermissionError without root or CAP_SYS_NICE
        if logger is not None:
            logger.warning(f"cannot use SCHED_FIFO priority {priority} ({e.strerror or e}); normal scheduling "
                           "(root or CAP_SYS_NICE gives a steadier loop)")
        return False
    if logger is not None:
        what = "this thread" if this_thread_only else f"{moved} threads"
        logger.info(f"running under SCHED_FIFO priority {priority} ({what})")
    return True


def set_session_niceness(niceness: int) -> bool:
    """This process's niceness, and its session's where Linux shares CPU time between sessions (autogroup).

    With `kernel.sched_autogroup_enabled` (most distributions' default) the scheduler shares the CPU first between
    sessions, each weighted by its autogroup's niceness, and a process's own niceness only ranks it within its
    session: a `nice -n 19` job in a session of its own took a third of 2 cores from two busy processes of other
    sessions here, and 3 % once its session was at 19 as well (docs/rehearsal-log.md 2026-12-07 (6)). So a process
    that leads a session of its own (started with setsid, as the rehearsal's children are) sets both. Call it only
    in a session leader: the niceness is the whole session's. False where the process's niceness is not permitted
    (a negative one needs CAP_SYS_NICE); where there are no autogroups its own niceness is all there is.
    """
    try:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    except OSError:
        return False
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write(str(niceness))
    except OSError:
        pass  # a kernel without autogroups, or with them off
    return True


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
