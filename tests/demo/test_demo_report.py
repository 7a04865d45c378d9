"""The demo report's metrics and files, from a synthetic recorded session (no processes)."""

import json
from pathlib import Path

import numpy as np
import pytest

from surrogait_rehearsal.demo import demo_segments, gait_switch_refusal, get_policy, parse_args, terrain_note
from surrogait_rehearsal.harness.operator import Segment
from surrogait_rehearsal.report import RunFiles, build_report, fall_metrics, simulator_metrics, tracking_metrics


def synthetic_session(vx_error=0.1, fall_at=None):
    """Two scored segments (0.5 then 1.0 m/s) and a stop; ground truth at 100 Hz lags each command by 0.5 s."""
    segments = [dict(name="walk 0.5 m/s", command=[0.5, 0.0, 0.0], scored=True, duration_s=4.0, start_s=0.0,
                     end_s=4.0),
                dict(name="walk 1.0 m/s", command=[1.0, 0.0, 0.0], scored=True, duration_s=4.0, start_s=4.0,
                     end_s=8.0),
                dict(name="stop", command=[0.0, 0.0, 0.0], scored=False, duration_s=2.0, start_s=8.0, end_s=10.0)]
    t = np.arange(0.0, 10.0, 0.01)
    cmd = np.select([t < 4.0, t < 8.0], [0.5, 1.0], 0.0)
    lagged = np.interp(t - 0.5, t, cmd, left=0.0)
    gt = np.zeros((len(t), 12))
    gt[:, 0], gt[:, 3], gt[:, 6] = t, 0.28, lagged + vx_error * np.sign(np.sin(40 * t))
    gt[:, 1] = np.cumsum(gt[:, 6]) * 0.01
    if fall_at is not None:
        gt[t >= fall_at, 3] = 0.08
    return {"ground_truth": gt, "odometry": np.column_stack([t, gt[:, 6] + 0.05, np.zeros((len(t), 2)), gt[:, 3]]),
            "commands": np.column_stack([t, cmd, np.zeros(len(t)), np.zeros(len(t))]),
            "policy_states": [[0.0, "WALK"]], "safety_states": [], "diagnostics": [], "segments": segments}


def test_tracking_rmse_is_scored_after_the_settling_time():
    tracking = tracking_metrics(synthetic_session(vx_error=0.1))
    # the 0.5 s lag falls inside the 1 s settling window, so only the ±0.1 m/s error remains
    assert tracking["walking_vx_rmse"] == pytest.approx(0.1, abs=0.01)
    first = tracking["segments"][0]
    assert first["vx_mean"] == pytest.approx(0.5, abs=0.02) and first["samples"] == pytest.approx(300, abs=2)
    unsettled = tracking_metrics(synthetic_session(vx_error=0.0), settle_s=0.0)
    assert unsettled["walking_vx_rmse"] > 0.1, "without settling, the lag after each step counts"


def test_falls_are_detected_only_while_the_policy_drives():
    assert fall_metrics(synthetic_session())["fell"] is False
    fell = fall_metrics(synthetic_session(fall_at=6.0))
    assert fell["fell"] and fell["fall_time_s"] == pytest.approx(6.0)
    assert fall_metrics(synthetic_session(fall_at=10.5))["fell"] is False, "lying down after the session is no fall"


def test_report_files(tmp_path):
    session = synthetic_session()
    np.savez(tmp_path / "session.npz", ground_truth=session["ground_truth"], odometry=session["odometry"],
             commands=session["commands"], policy_states=json.dumps(session["policy_states"]),
             safety_states=json.dumps([[1.0, {"state": "OK"}]]), diagnostics=json.dumps([]),
             segments=json.dumps(session["segments"]))
    faults = tmp_path / "faults.jsonl"
    faults.write_text(json.dumps({"iso": "2026-11-29T20:00:00.000+00:00", "event": "fault", "cause": "roll",
                                  "detail": "base roll 0.7 rad", "action": "latch DAMP"}) + "\n")
    report, metrics = build_report(tmp_path, RunFiles(session=tmp_path / "session.npz", fault_log=faults),
                                   {"policy_path": "p.onnx", "policy_source": "test", "processes": ["go2_sim"]})
    text = report.read_text()
    assert "Walking vx RMSE" in text and "base roll 0.7 rad" in text
    assert (tmp_path / "plots/velocity.png").stat().st_size > 1000
    assert (tmp_path / "plots/estimate_vs_true.png").stat().st_size > 1000
    assert metrics["estimator"]["vx_rmse"] == pytest.approx(0.05, abs=0.01)
    assert json.loads((tmp_path / "metrics.json").read_text())["falls"]["fell"] is False


def test_the_simulator_s_stalls_are_told_apart_from_the_harness_s_own_lag(tmp_path):
    session = synthetic_session()
    session["sim_diagnostics"] = []
    arrival = session["ground_truth"][:, 0]
    arrival[500:] += 0.3  # the harness took ground truth 0.3 s late once (its own lag)
    sim_time = np.arange(1, 501) * 0.02
    wall = sim_time.copy()
    wall[200:] += 0.1  # the physics loop stalled once for 100 ms
    keep = np.ones(500, bool)
    keep[300:320] = False  # 20 rows the recording lost: a 420 ms hole in the file, not in the physics
    np.savez(tmp_path / "sim_log.npz", wall_time_s=wall[keep], time_s=sim_time[keep], record_rate_hz=np.array(50.0))
    sim = simulator_metrics(session, tmp_path / "sim_log.npz")
    assert sim["physics_max_gap_ms"] == pytest.approx(120.0, abs=0.5) and sim["record_period_ms"] == 20.0
    assert sim["recording_rows_missing"] == 1
    assert sim["ground_truth_max_gap_ms"] == pytest.approx(310.0, abs=0.5)
    assert "physics_max_gap_ms" not in simulator_metrics(session), "no recording, no claim about the physics loop"


def test_demo_script_is_the_issue_s_session():
    names = [s.name for s in demo_segments()]
    assert names == ["walk 0.5 m/s", "turn (0.5 m/s, 0.5 rad/s)", "walk 1.0 m/s", "stop"]
    assert all(isinstance(s, Segment) for s in demo_segments(quick=True))
    assert sum(s.duration_s for s in demo_segments(quick=True)) < sum(s.duration_s for s in demo_segments())


def test_a_terrain_rehearsal_says_which_policies_its_height_field_suits():
    assert terrain_note("flat") is None
    note = terrain_note("stairs")
    assert "stairs course" in note and "domain randomisation" in note and "--use-shipped-policy" in note
    assert "go2_trot_rough" not in note
    rough = Path(terrain_note("rough").split("--policy ")[1].split()[0])
    assert rough.name == "go2_trot_rough.onnx" and rough.is_file()
    go1_rough = terrain_note("rough", robot="go1")
    assert "go2_trot_rough" not in go1_rough
    assert "no policy fine-tuned for rough ground is shipped for the go1" in go1_rough


def test_a_gait_switch_the_policy_cannot_make_is_refused_with_the_way_out():
    four = ("trot", "pace", "bound", "gallop")
    assert gait_switch_refusal("bound", four, "go2") is None
    refusal = gait_switch_refusal("bound", ("trot",), "go2")
    assert "trained for trot only" in refusal
    shipped = Path(refusal.split("--policy ")[1].split()[0])
    assert shipped.name == "go2_gaits.onnx" and shipped.is_file()
    assert "walks trot, pace, bound, gallop" in refusal
    assert "knows trot, pace, bound, gallop" in gait_switch_refusal("amble", ("trot",), "go2")
    assert "none is shipped for the go1" in gait_switch_refusal("bound", ("trot",), "go1")


def test_a_gait_switch_without_a_policy_rehearses_the_shipped_multi_gait_policy():
    assert get_policy(parse_args(["--switch-gait", "pace"]))[0].name == "go2_gaits.onnx"
    assert get_policy(parse_args([]))[0].name == "go2_trot.onnx"
    given = get_policy(parse_args(["--switch-gait", "pace", "--policy", "mine.onnx"]))[0]
    assert given.name == "mine.onnx"
