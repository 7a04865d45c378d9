"""A node that does not exit when the harness stops it leaves its threads' stacks in its log before it is
killed (surrogait_core.runtime.ros_node's SIGUSR1, surrogait_rehearsal.harness.processes.dump_stacks)."""

from __future__ import annotations

import signal
import sys
import textwrap

from surrogait_rehearsal.harness.processes import ProcessGroup

STUCK_NODE = textwrap.dedent("""
    import sys
    import time

    from rclpy.node import Node

    from surrogait_core.runtime.ros_node import run_node


    class StuckOnStop(Node):
        def __init__(self):
            super().__init__("stuck_on_stop")

        def start(self):
            print("started", flush=True)

        def stop(self):
            while True:  # a shutdown that never returns (SIGINT and SIGTERM only set the node's stop event)
                time.sleep(0.2)


    sys.exit(run_node(StuckOnStop, "stuck_on_stop"))
""")


def test_a_node_that_hangs_in_its_shutdown_is_killed_with_its_stacks_in_its_log(tmp_path, dds_domain):
    script = tmp_path / "stuck_node.py"
    script.write_text(STUCK_NODE)
    group = ProcessGroup(tmp_path / "logs", dds_domain)
    stuck = group.start("stuck_on_stop", [sys.executable, str(script)])
    stuck.wait_for_log("started", 30.0)
    group.stop_all(grace_s=1.0, term_s=1.0)
    assert stuck.process.returncode == -signal.SIGKILL
    log = stuck.log
    assert "Current thread" in log and "in stop" in log, log[-2000:]


def test_a_node_that_stops_on_sigint_leaves_no_stacks(tmp_path, dds_domain):
    script = tmp_path / "clean_node.py"
    script.write_text(STUCK_NODE.replace("while True:", "while False:"))
    group = ProcessGroup(tmp_path / "logs", dds_domain)
    clean = group.start("clean", [sys.executable, str(script)])
    clean.wait_for_log("started", 30.0)
    group.stop_all(grace_s=10.0)
    assert clean.process.returncode == 0 and "Current thread" not in clean.log, clean.log[-2000:]
