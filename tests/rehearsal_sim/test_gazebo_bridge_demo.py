"""The demo's `--simulator` flag on this machine, where Gazebo is not installed: `gazebo` is refused before
anything starts, with what to install and the way out; the Gazebo simulators are Go2 only. (The session
itself through `gazebo-standin` is test_gazebo_bridge_walk.py's, through the same launch function.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OWN_TARGET = "make test-gazebo: the Gazebo path's rehearsals, a target of their own (scripts/run_tests.py)"

DEMO = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "surrogait_rehearsal.demo", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_gazebo_is_refused_naming_what_to_install(tmp_path):
    env = dict(os.environ, AMENT_PREFIX_PATH="", PATH=str(Path(sys.executable).parent))  # no gz, no ros_gz here
    out = run("--simulator", "gazebo", "--run-dir", str(tmp_path / "run"), env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Gazebo Harmonic" in out.stdout and "ros_gz_bridge" in out.stdout and "gazebo-standin" in out.stdout
    assert not (tmp_path / "run").exists(), "refused before anything was made"


def test_the_gazebo_simulators_are_go2_only():
    for simulator in ("gazebo", "gazebo-standin"):
        out = run("--simulator", simulator, "--robot", "go1")
        assert out.returncode == 2 and "rehearses the Go2 only" in out.stderr, out.stderr
    out = subprocess.run([sys.executable, str(DEMO), "--simulator", "gazebo-standin", "--robot", "go1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Go2 only" in out.stderr, "scripts/demo.py refuses before training"
