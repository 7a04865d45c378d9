"""The demo (`make demo`: scripts/demo.py), end to end in its quick mode: train briefly, rehearse, write the report."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from surrogait_recorder.info import decoded, publish_times_ns, read_info

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
        [sys.executable, str(DEMO), "--quick", "--train-budget-s", "3",
         "--domain", DOMAIN, "--run-dir", str(run_dir)],
        env=env, capture_output=True, text=True, timeout=400,
    )
    out = result.stdout + result.stderr
    for step in ("[1/4] policy", "[2/4] rehearsal processes", "[3/4] scripted session", "[4/4] report"):
        assert step in out, f"progress line {step!r} missing:\n{out[-3000:]}"
    assert f"report: {run_dir / 'report.md'}" in out
    assert "trained here" in out, "the default demo trains its own policy"

    for name in ("report.md", "metrics.json", "session.npz", "policy.onnx", "robot.mp4", "sim_log.npz",
                 "policy_timing.npz", "plots/velocity.png", "plots/joint_torques.png", "plots/loop_period.png",
                 "session.mcap"):
        path = run_dir / name
        assert path.is_file() and path.stat().st_size > 0, f"{name} was not written"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    # A 3 s policy may well fall or be stopped by the safety monitor: the report shows it, and the exit
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
    assert "[session.mcap](session.mcap)" in report, "the report links the session's MCAP file"
    assert_demo_recorded(run_dir / "session.mcap", states)
    # what it rehearsed was pre-flown through this session first, and the report says how that went
    preflown = json.loads((run_dir / "preflight.json").read_text())
    flown_fields = {"cleared", "falls", "joint_speed", "commanded_torque", "tilt", "vx_rmse", "yaw_rate_rmse"}
    assert preflown and all(flown_fields <= set(r) for r in preflown)
    assert "the pre-flight:" in report and "snapshots (iterations" in out
    # and whether the trained policy walks and stands by the eval's definition, said plainly either way
    assert "by the eval's definition" in report and ("WALKS" in report or "does NOT walk" in report)
    assert "told to stand it" in report
    assert not processes_mentioning(str(run_dir)), "the demo left child processes running"


@pytest.mark.rehearsal
def test_a_gait_switch_demo_rehearses_the_shipped_multi_gait_policy_and_switches_to_bound_while_walking(tmp_path):
    from surrogait_rehearsal.report import load_session

    run_dir = tmp_path / "gaits"
    env = dict(os.environ, MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa")
    result = subprocess.run(
        [sys.executable, str(DEMO), "--switch-gait", "bound", "--quick", "--no-video", "--domain", DOMAIN,
         "--run-dir", str(run_dir)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    out = result.stdout + result.stderr
    assert "trained here" not in out and "go2_gaits.onnx" in out, "no training: the shipped multi-gait policy"
    assert result.returncode == 0 and "result: COMPLETED" in out, out[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert [gait for _, gait in metrics["gaits"]] == ["trot", "bound"]
    turn = load_session(run_dir / "session.npz")["segments"][1]
    assert turn["start_s"] <= metrics["gaits"][1][0] <= turn["end_s"], "switched as the turn began, while walking"
    assert not [e for e in metrics["safety"]["events"] if e.get("event") == "fault"]
    assert "- Gaits: trot from" in (run_dir / "report.md").read_text()
    assert not processes_mentioning(str(run_dir)), "the demo left child processes running"
    assert_demo_recorded(run_dir / "session.mcap", [state for _, state in metrics["policy_states"]])
    gaits = [msg.data for _, _, msg in decoded(run_dir / "session.mcap", ["/policy/gait"])]
    assert gaits == ["trot", "bound"], "the gait switch is in the session log too"


def assert_demo_recorded(path: Path, states: list[str]) -> None:
    """`make demo` writes an MCAP file that the mcap library reads back (the `mcap` CLI's `info` is not
    installable here): a ROS 2 profile with ros2msg schemas and CDR messages, the wire and the stack's topics,
    every channel decoding with its schema, the session's policy states in order."""
    info = read_info(path)
    assert info.profile == "ros2" and info.duration_s > 10.0, info
    assert {(c.schema_encoding, c.message_encoding) for c in info.channels.values()} == {("ros2msg", "cdr")}
    assert info.channels["/rt/lowstate"].schema == "unitree_go/msg/LowState"
    assert info.channels["/rt/lowcmd"].schema == "unitree_go/msg/LowCmd"
    for topic in ("/rt/lowstate", "/rt/lowcmd", "/cmd_vel", "/policy/state", "/safety/state", "/odom",
                  "/joint_states", "/imu/data", "/diagnostics", "/rosout", "/sim/ground_truth"):
        assert info.channels[topic].count > 0, f"nothing on {topic}"
    sent = np.array(publish_times_ns(path, "/rt/lowcmd")) * 1e-9  # the policy node's source timestamps
    assert np.median(np.diff(sent)) == pytest.approx(0.002, abs=0.0005), "the LowCmd stream at its 500 Hz"
    for _, _, msg in decoded(path, limit=3):
        assert msg is not None
    assert [msg.data for _, _, msg in decoded(path, ["/policy/state"])] == states


def test_a_gait_switch_the_policy_was_not_trained_for_is_refused_before_anything_starts(tmp_path):
    trot = Path(__file__).resolve().parents[2] / "ros2_ws" / "src" / "surrogait_bringup" / "policies" / "go2_trot.onnx"
    result = subprocess.run(
        [sys.executable, "-m", "surrogait_rehearsal.demo", "--policy", str(trot), "--switch-gait", "bound",
         "--domain", DOMAIN, "--run-dir", str(tmp_path / "refused")],
        capture_output=True, text=True, timeout=120,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "cannot switch to the gait 'bound': the policy was trained for trot only" in out
    assert "go2_gaits.onnx" in out and "[2/4]" not in out, "refused before any process started"
