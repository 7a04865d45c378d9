"""The demo (`make demo`: scripts/demo.py), end to end in its quick mode: train briefly, rehearse, write the report."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DOMAIN = "26"
DEMO = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"


def processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args:
            found.append(args)
    return found


@pytest.mark.rehearsal
def test_quick_demo_trains_rehearses_and_writes_its_report(tmp_path):
    run_dir = tmp_path / "demo"
    env = dict(os.environ, MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa")
    result = subprocess.run(
        [sys.executable, str(DEMO), "--quick", "--train-budget-s", "5",
         "--domain", DOMAIN, "--run-dir", str(run_dir)],
        env=env, capture_output=True, text=True, timeout=400,
    )
    out = result.stdout + result.stderr
    for step in ("[1/4] policy", "[2/4] rehearsal processes", "[3/4] scripted session", "[4/4] report"):
        assert step in out, f"progress line {step!r} missing:\n{out[-3000:]}"
    assert f"report: {run_dir / 'report.md'}" in out
    assert "trained here" in out, "the default demo trains its own policy"

    for name in ("report.md", "metrics.json", "session.npz", "policy.onnx", "robot.mp4", "sim_log.npz",
                 "policy_timing.npz", "plots/velocity.png", "plots/joint_torques.png", "plots/loop_period.png"):
        path = run_dir / name
        assert path.is_file() and path.stat().st_size > 0, f"{name} was not written"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    # A 5 s policy may well fall or be stopped by the safety monitor: the report shows it, and the exit
    # code says it (0 only for a completed session; the shipped policy's completion is tested elsewhere).
    outcome = metrics["info"]["outcome"]
    fell = metrics["falls"]["fell"]
    assert outcome == "completed" or outcome.startswith("stopped by a safety damp"), outcome
    assert (result.returncode == 0) == (outcome == "completed" and not fell), (result.returncode, outcome, fell)
    assert ("result: COMPLETED" in out) == (result.returncode == 0), out[-2000:]
    names = [s["name"] for s in metrics["tracking"]["segments"]]
    full = ["walk 0.5 m/s", "turn (0.5 m/s, 0.5 rad/s)", "walk 1.0 m/s", "stop"]
    assert names and names == full[: len(names)], names
    assert metrics["loop_timing"]["cycles"] > 0
    states = [state for _, state in metrics["policy_states"]]
    assert states[:4] == ["PASSIVE", "STAND_UP", "READY", "WALK"], "no false fault before the session: " + str(states)
    assert states[-1] == "DAMP" and states.count("WALK") == 1, states
    report = (run_dir / "report.md").read_text()
    assert "Walking vx RMSE" in report and "plots/velocity.png" in report and "robot.mp4" in report
    # what it rehearsed was pre-flown through this session first, and the report says how that went
    preflown = json.loads((run_dir / "preflight.json").read_text())
    assert preflown and all({"cleared", "falls", "joint_speed", "commanded_torque", "tilt"} <= set(r) for r in preflown)
    assert "the pre-flight:" in report and "pre-flight of the newest" in out
    assert not processes_mentioning(str(run_dir)), "the demo left child processes running"
