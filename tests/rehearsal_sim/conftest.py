"""Fixtures for the simulator's process tests: one DDS domain (11-19) per test, processes always reaped.

`go2_sim` starts through the rehearsal harness (surrogait_rehearsal.harness.processes); the
robot-side test client is sim_dds_client.py in this folder, in the harness's child environment.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from surrogait_rehearsal.harness.nodes import ready_line
from surrogait_rehearsal.harness.processes import Child, ProcessGroup, child_env

HERE = Path(__file__).parent
CLIENT = HERE / "sim_dds_client.py"
_domains = itertools.cycle(range(11, 20))


@pytest.fixture
def dds_domain() -> int:
    return next(_domains)


@pytest.fixture
def start_sim(tmp_path, dds_domain):
    """start_sim(**params) -> a ready go2_sim (harness Child) on this test's domain; killed at teardown."""
    group = ProcessGroup(tmp_path, dds_domain)

    def start(wait: bool = True, **params) -> Child:
        # SCHED_FIFO (where permitted) keeps the simulator in real time on a busy 2-core machine.
        sim = group.start_node("go2_sim", {"dds_domain": dds_domain, "sched_fifo_priority": 30, **params})
        if wait:
            sim.wait_for_log(ready_line("go2_sim"), 30.0)
        return sim

    yield start
    group.kill_all()


@pytest.fixture
def run_client(dds_domain):
    """run_client(*args, timeout_s=60) -> the JSON report of sim_dds_client.py run to completion on this domain."""
    def run(*args: str, timeout_s: float = 60.0) -> dict:
        out = subprocess.run([sys.executable, str(CLIENT), "--domain", str(dds_domain), *args],
                             capture_output=True, text=True, timeout=timeout_s, env=child_env(dds_domain))
        assert out.returncode == 0, f"client exit {out.returncode}: {out.stderr[-2000:]} {out.stdout[-300:]}"
        return json.loads(out.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture
def start_client(dds_domain):
    """start_client(*args) -> Popen of sim_dds_client.py on this domain (pipes, text); killed at teardown."""
    started: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, str(CLIENT), "--domain", str(dds_domain), *args],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=child_env(dds_domain))
        started.append(p)
        return p

    yield start
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
