"""Processes for the simulator tests: `go2_sim` from a params YAML, and the robot-side test client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).parent
GO2_SIM = Path(sys.executable).parent / "go2_sim"  # the console script installed with the package
READY_LINE = "Go2 simulator:"


class SimProcess:
    """A `go2_sim` process started from a params YAML, with its log in a file."""

    def __init__(self, tmp_path: Path, domain: int, params: dict) -> None:
        self.domain = domain
        self.params_file = tmp_path / f"go2_sim_{domain}.yaml"
        # SCHED_FIFO (where permitted) keeps the simulator in real time on a busy 2-core machine.
        params = {"dds_domain": domain, "sched_fifo_priority": 30, **params}
        self.params_file.write_text(yaml.safe_dump({"go2_sim": {"ros__parameters": params}}))
        self.log_file = tmp_path / f"go2_sim_{domain}.log"
        self._log = self.log_file.open("w")
        self.proc = subprocess.Popen([str(GO2_SIM), "--ros-args", "--params-file", str(self.params_file)],
                                     stdout=self._log, stderr=subprocess.STDOUT, env=sim_env(domain))

    @property
    def log(self) -> str:
        return self.log_file.read_text()

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if READY_LINE in self.log:
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"go2_sim exited with {self.proc.returncode}:\n{self.log}")
            time.sleep(0.05)
        raise AssertionError(f"go2_sim not ready after {timeout_s} s:\n{self.log}")

    def stop(self, timeout_s: float = 90.0, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=timeout_s)
        self._log.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log.close()


def sim_env(domain: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    env.setdefault("MUJOCO_GL", "osmesa")
    env.setdefault("PYOPENGL_PLATFORM", "osmesa")
    return env


def run_client(domain: int, *args: str, timeout_s: float = 60.0) -> dict:
    """Run sim_dds_client.py to completion and return its JSON report."""
    out = subprocess.run([sys.executable, str(HERE / "sim_dds_client.py"), "--domain", str(domain), *args],
                         capture_output=True, text=True, timeout=timeout_s, env=sim_env(domain))
    assert out.returncode == 0, f"client exit {out.returncode}: {out.stderr[-2000:]} {out.stdout[-300:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def start_client(domain: int, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(HERE / "sim_dds_client.py"), "--domain", str(domain), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=sim_env(domain))
