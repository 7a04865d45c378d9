"""Real-time processes: every thread under SCHED_FIFO from one call, and a start-up heap frozen out of collections."""

import gc
import json
import os
import subprocess
import sys
import time

import pytest

from surrogait_core.runtime.realtime import freeze_startup_objects


def test_objects_alive_after_start_up_are_frozen_out_of_collections():
    heap = [{"a": [i]} for i in range(200_000)]  # stands in for modules, models, ROS and DDS entities
    try:
        frozen = freeze_startup_objects()
        assert frozen >= len(heap) and gc.get_freeze_count() == frozen
        start = time.thread_time()
        gc.collect()
        after_freeze_s = time.thread_time() - start
        gc.unfreeze()
        start = time.thread_time()
        gc.collect()
        unfrozen_s = time.thread_time() - start
        assert after_freeze_s < unfrozen_s / 3, (after_freeze_s, unfrozen_s)
    finally:
        gc.unfreeze()  # this test process goes on to run other tests
        del heap


# enter_realtime runs in a child process: the test process itself must not become real-time.
_THREADS_POLICY = """
import json, os, sys, threading
from surrogait_core.runtime.realtime import enter_realtime

class Log:
    lines = []
    def info(self, m): self.lines.append(("info", m))
    def warning(self, m): self.lines.append(("warning", m))

started = threading.Event()
stop = threading.Event()
worker = threading.Thread(target=lambda: (started.set(), stop.wait()), name="started_before")
worker.start()
started.wait()
log = Log()
entered = enter_realtime(int(sys.argv[1]), log, this_thread_only=sys.argv[2] == "this")
later_policy = []
later = threading.Thread(target=lambda: later_policy.append(os.sched_getscheduler(0)), name="started_after")
later.start()
later.join()
worker_policy = os.sched_getscheduler(worker.native_id)
stop.set()
print(json.dumps({"entered": entered, "main": os.sched_getscheduler(0), "worker": worker_policy,
                  "later": later_policy[0], "log": log.lines}))
"""


def enter_realtime_in_a_child(priority: int, scope: str = "process") -> dict:
    out = subprocess.run([sys.executable, "-c", _THREADS_POLICY, str(priority), scope], capture_output=True,
                         text=True, timeout=60, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def realtime_permitted() -> bool:
    r = enter_realtime_in_a_child(1, "this")
    return r["entered"]


needs_realtime = pytest.mark.skipif(not realtime_permitted(), reason="SCHED_FIFO is not permitted on this machine "
                                    "(root or CAP_SYS_NICE); the refusal is tested below")


@needs_realtime
def test_a_process_goes_real_time_with_the_threads_it_already_has_and_the_ones_they_start():
    r = enter_realtime_in_a_child(5)
    assert r["entered"] and len(r["log"]) == 1 and r["log"][0][0] == "info" and "priority 5" in r["log"][0][1]
    # the DDS and ROS threads a node has before it reads its parameters are moved too, and what they start
    assert r["main"] == r["worker"] == r["later"] == os.SCHED_FIFO


@needs_realtime
def test_the_calling_thread_alone_goes_real_time_when_asked():
    r = enter_realtime_in_a_child(5, "this")
    assert r["entered"] and r["main"] == os.SCHED_FIFO and r["worker"] == os.SCHED_OTHER


def test_a_priority_the_kernel_refuses_leaves_normal_scheduling_and_says_why():
    r = enter_realtime_in_a_child(100)  # outside SCHED_FIFO's 1..99 (as "not permitted" is, without root)
    assert not r["entered"] and r["main"] == r["worker"] == os.SCHED_OTHER
    assert len(r["log"]) == 1 and r["log"][0][0] == "warning" and "normal scheduling" in r["log"][0][1]


def test_priority_0_leaves_the_scheduling_alone_and_says_nothing():
    r = enter_realtime_in_a_child(0)
    assert not r["entered"] and r["log"] == [] and r["main"] == r["worker"] == os.SCHED_OTHER


def test_a_session_leader_lowers_its_whole_sessions_share_not_only_its_own_niceness():
    """Where Linux shares the CPU between sessions first (autogroup), a process's niceness alone does not lower
    its session's share: `set_session_niceness` sets both, in a process that leads its own session."""
    probe = ("import os; from surrogait_core.runtime.realtime import set_session_niceness as s; "
             "ok = s(19); print(ok, os.getpriority(os.PRIO_PROCESS, 0)); "
             "print(open('/proc/self/autogroup').read().strip() if os.path.exists('/proc/self/autogroup') else '')")
    out = subprocess.run([sys.executable, "-c", probe], start_new_session=True, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "True 19"
    autogroup = out[1] if len(out) > 1 else ""
    if autogroup:  # e.g. "/autogroup-4371 nice 19"; absent where the kernel has no autogroups
        assert autogroup.endswith("nice 19"), autogroup
