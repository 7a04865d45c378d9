"""Fixtures for the estimator's process tests: DDS domains 31-39, real processes (started by the rehearsal
harness) always reaped, and a ROS probe that records what the nodes publish (its own rclpy Context on the
test's domain)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from surrogait_rehearsal.harness.processes import Child, ProcessGroup, child_env

HERE = Path(__file__).parent
_domains = itertools.cycle(range(31, 40))


class RosProbe:
    """Subscribes odom, contacts, diagnostics and the simulator's ground truth; keeps every message
    with its arrival time (time.monotonic())."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from nav_msgs.msg import Odometry
        from std_msgs.msg import UInt8MultiArray

        from surrogait_core import interfaces
        from surrogait_core.runtime.ros_node import node_executor

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("estimator_test_probe", context=self.context)
        self.lock = threading.Lock()
        self.odom: list[tuple[float, object]] = []
        self.truth: list[tuple[float, object]] = []
        self.contacts: list[tuple[float, object]] = []
        self.diagnostics: list[tuple[float, object]] = []
        for msg_type, topic, store in ((Odometry, interfaces.ODOM, self.odom),
                                       (Odometry, interfaces.SIM_GROUND_TRUTH, self.truth),
                                       (UInt8MultiArray, interfaces.CONTACTS, self.contacts),
                                       (DiagnosticArray, interfaces.DIAGNOSTICS, self.diagnostics)):
            self.node.create_subscription(msg_type, topic, self._keeper(store), 50)
        self.executor = node_executor(self.node)  # as the operator's: cheap per message where rclpy allows
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._stop = threading.Event()
        self._thread.start()

    def _keeper(self, store):
        def keep(msg):
            with self.lock:
                store.append((time.monotonic(), msg))
        return keep

    def _spin(self) -> None:
        while not self._stop.is_set() and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def estimator_status(self):
        """Latest diagnostics status from the estimator node, as (level int, message, {key: value})."""
        with self.lock:
            for _, arr in reversed(self.diagnostics):
                for st in arr.status:
                    if st.name.startswith("estimator_node"):
                        return st.level[0] if isinstance(st.level, bytes) else int(st.level), st.message, {
                            kv.key: kv.value for kv in st.values}
        return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.executor.shutdown(timeout_sec=2)
        self.node.destroy_node()
        self.context.try_shutdown()


def stamp_s(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def paired(odom, truth, tolerance_s: float = 0.02):
    """(estimate, truth) pairs: each ground-truth message with the estimate stamped closest to it. Both are
    stamped on the wall clock: the ground truth when the simulator publishes it (the instant it writes that
    step's rt/lowstate), the odometry with the time of the rt/lowstate sample it was estimated from."""
    t_est = np.array([stamp_s(m) for m in odom])
    pairs = []
    for gt in truth:
        i = int(np.argmin(np.abs(t_est - stamp_s(gt))))
        if abs(t_est[i] - stamp_s(gt)) < tolerance_s:
            pairs.append((odom[i], gt))
    return pairs


def as_received(odom: list[tuple[float, object]], truth: list[tuple[float, object]]):
    """(estimate, truth) pairs as a consumer sees them: each ground truth with the newest estimate that had
    arrived before it did (both arrival times on the probe's clock)."""
    t_odom = np.array([t for t, _ in odom])
    pairs = []
    for t, gt in truth:
        i = int(np.searchsorted(t_odom, t, side="right")) - 1
        if i >= 0:
            pairs.append((odom[i][1], gt))
    return pairs


def wait_truth(probe, count: int, timeout_s: float = 90.0) -> None:
    """Wait for `count` more ground-truth messages: simulated time (100 Hz of it), which on a loaded machine
    runs slower than real time; judgements in simulated time do not depend on that."""
    with probe.lock:
        target = len(probe.truth) + count
    deadline = time.monotonic() + timeout_s
    while True:
        with probe.lock:
            if len(probe.truth) >= target:
                return
        assert time.monotonic() < deadline, f"fewer than {count} ground-truth messages in {timeout_s} s"
        time.sleep(0.05)


@pytest.fixture
def dds_domain() -> int:
    return next(_domains)


@pytest.fixture
def start_node(tmp_path, dds_domain):
    """start_node(name, params) -> node `name` of the rehearsal (harness Child) with `params` over its built-in
    defaults, on this test's domain; stopped (SIGINT, then SIGKILL after 20 s) at teardown."""
    group = ProcessGroup(tmp_path, dds_domain)

    def start(name: str, params: dict) -> Child:
        if name == "estimator_node":  # the synthetic robot and the simulator report foot force in newtons; the
            # synthetic robot's player does not seal its samples (500 CRCs a second in Python would make it late)
            params = {"foot_force_units": "newtons", "allow_lowstate_without_crc": True, **params}
        return group.start_node(name, params)

    yield start
    for child in reversed(group.children):
        child.stop(timeout_s=20.0)


@pytest.fixture
def probe(dds_domain):
    p = RosProbe(dds_domain)
    yield p
    p.close()


@pytest.fixture
def run_script(dds_domain):
    """start_script(name, *args) -> Popen of a helper script in this folder on the test's domain; reaped at teardown."""
    started: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, str(HERE / name), "--domain", str(dds_domain), *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(dds_domain))
        started.append(p)
        return p

    yield start
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)
