"""SCHED_FIFO for every thread of a process, not only the calling one.

Linux applies a scheduling policy per thread, and a thread inherits it only from the thread that
creates it. rclpy and Fast DDS start their threads (discovery, shared-memory and UDP receive) in
`rclpy.init`, before a node can read its priority parameter; left at normal scheduling they are
starved by other work on a busy machine, and a loop that waits for their messages stalls with them
(measured: the Gazebo bridge's joint states arriving in 50-100 ms bursts with two training jobs
running). The policy node does the same for its own threads.
"""

from __future__ import annotations

import os


def process_fifo(priority: int) -> int:
    """Put every current thread of this process under SCHED_FIFO `priority` (threads started later by them
    inherit it); returns how many. OSError (PermissionError without root or CAP_SYS_NICE) if not permitted."""
    tids = [int(t) for t in os.listdir("/proc/self/task")]
    done = 0
    for tid in tids:
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
            done += 1
        except ProcessLookupError:
            continue  # a thread that ended meanwhile
    return done


def enter_process_fifo(priority: int, logger) -> None:
    """`process_fifo(priority)` for a node, where permitted (0: normal scheduling); says on `logger` which it got."""
    if not priority:
        return
    try:
        threads = process_fifo(priority)
        logger.info(f"running under SCHED_FIFO priority {priority} ({threads} threads)")
    except OSError as e:
        logger.warning(f"cannot use SCHED_FIFO ({e}); running with normal scheduling")
