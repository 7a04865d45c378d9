"""Runs bench/safety.py (the fault suite) as its own process and reads back its results.

Its own process, so the suite's DDS participant, sockets and rclpy context never mix with other tests'.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from surrogait_rehearsal.harness.nodes import NODES, SESSION_PARAMS

ROOT = Path(__file__).resolve().parents[2]


def run_fault_suite(out: Path, args: list[str], timeout_s: float) -> tuple[dict[str, dict], str]:
    """({scenario: result}, the suite's output) for `bench/safety.py ARGS --workdir OUT/runs --out OUT`."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    cmd = [sys.executable, str(ROOT / "bench" / "safety.py"), *args, "--workdir", str(out / "runs"), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        log, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.terminate()  # the suite stops its rehearsal processes on SIGTERM
        try:
            log, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:  # stuck in its shutdown: its output still says what went wrong
            proc.kill()
            log, _ = proc.communicate()
        pytest.fail(f"the fault suite did not finish in {timeout_s:g} s:\n{log[-4000:]}")
    report = out / "safety.json"
    assert report.exists(), f"no report written (exit {proc.returncode}):\n{log[-4000:]}"
    return {r["scenario"]: r for r in json.loads(report.read_text())["results"]}, log


def package_params(name: str) -> dict:
    """The parameters in node `name`'s package parameters file."""
    return yaml.safe_load(NODES[name].params_file.read_text())[name]["ros__parameters"]


def beyond_the_session(name: str, params: dict) -> dict:
    """What differs from node `name`'s package file, other than a session's link, policy and record paths
    (harness.nodes.SESSION_PARAMS)."""
    package = package_params(name)
    return {k: v for k, v in params.items() if k not in SESSION_PARAMS and package.get(k, "<not in the file>") != v}


def check_started_with_package_files(workdir: Path, nodes: tuple[str, ...]) -> None:
    """The parameters files a scenario's session started its nodes with (<workdir>/config) are their packages'
    files, with only the session's link, policy and record paths over them."""
    for name in nodes:
        params = yaml.safe_load((workdir / "config" / f"{name}.yaml").read_text())[name]["ros__parameters"]
        assert beyond_the_session(name, params) == {}, (workdir, name)
        assert set(package_params(name)) <= set(params), (workdir, name)
