"""Fixtures for the estimator's process tests: DDS domains 31-39, real processes always reaped,
and a ROS probe that records what the nodes publish (its own rclpy Context on the test's domain)."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent
_domains = itertools.cycle(range(31, 40))


def proc_env(domain: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    env.setdefault("MUJOCO_GL", "osmesa")
    env.setdefault("PYOPENGL_PLATFORM", "osmesa")
    return env


def console_script(name: str, module: str) -> list[str]:
    """The installed console script, or the module's main() when the package's script is not installed yet."""
    if (BIN / name).exists():
        return [str(BIN / name)]
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())"]


class NodeProcess:
    """A ROS node process started from a params YAML, its output in a log file."""

    def __init__(self, tmp_path: Path, cmd: list[str], node_name: str, domain: int, params: dict) -> None:
        self.name = node_name
        self.params_file = tmp_path / f"{node_name}_{domain}.yaml"
        self.params_file.write_text(yaml.safe_dump({node_name: {"ros__parameters": params}}))
        self.log_file = tmp_path / f"{node_name}_{domain}.log"
        self._log = self.log_file.open("w")
        self.proc = subprocess.Popen([*cmd, "--ros-args", "--params-file", str(self.params_file)],
                                     stdout=self._log, stderr=subprocess.STDOUT, env=proc_env(domain))

    @property
    def log(self) -> str:
        return self.log_file.read_text()

    def wait_for(self, text: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.log:
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n{self.log}")
            time.sleep(0.05)
        raise AssertionError(f"{self.name}: no {text!r} after {timeout_s} s:\n{self.log}")

    def stop(self, timeout_s: float = 20.0) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if not self._log.closed:
            self._log.close()
        return self.proc.returncode


class RosProbe:
    """Subscribes odom, contacts, diagnostics and the simulator's ground truth; keeps every message
    with its arrival time (time.monotonic())."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from nav_msgs.msg import Odometry
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import UInt8MultiArray

        from surrogait_core import interfaces

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
        self.executor = SingleThreadedExecutor(context=self.context)
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
def start_node(tmp_path):
    started: list[NodeProcess] = []

    def start(cmd: list[str], node_name: str, domain: int, params: dict) -> NodeProcess:
        p = NodeProcess(tmp_path, cmd, node_name, domain, params)
        started.append(p)
        return p

    yield start
    for p in reversed(started):
        p.stop()


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
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=proc_env(dds_domain))
        started.append(p)
        return p

    yield start
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)
