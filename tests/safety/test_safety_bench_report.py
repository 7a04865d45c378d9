"""The safety bench's no-fault walks in its report: one per gait walked, each rule's largest fraction of its
threshold per gait, and a walk that failed named as such (no simulation)."""

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "safety.py"
_spec = importlib.util.spec_from_file_location("safety_bench", _PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("safety_bench", bench)
_spec.loader.exec_module(bench)

META = {"machine": "test", "priority": "normal scheduling", "policy": "p.onnx", "date": "today", "command": "c"}


def walk(gait: str, tau_est: float) -> dict:
    return {"scenario": "baseline_no_fault", "gait": gait, "final_safety_state": "OK", "false_faults": [], "ok": True,
            "max_fraction_of_threshold": {"joint_vel": 0.6, "tau_est": tau_est}}


def test_each_gait_walked_is_a_column_of_the_margins():
    md = bench.markdown([], META, [walk("trot", 0.66), walk("bound", 1.053)])
    assert "| quantity | max (trot) | max (bound) |" in md
    assert "| tau_est | 0.66 | 1.053 |" in md
    assert "walk 0.5 then 1.0 m/s in the bound, stop: final safety state OK" in md
    assert "scenarios pass" not in md, "no fault was injected: no scenario table"


def test_a_single_walk_keeps_one_column_and_a_failed_walk_is_named():
    md = bench.markdown([], META, [walk("trot", 0.66)])
    assert "| quantity | max |" in md and "| tau_est | 0.66 |" in md
    failed = {"scenario": "baseline_no_fault", "gait": "gallop", "ok": False, "error": "SessionError: fell"}
    md = bench.markdown([], META, [walk("trot", 0.66), failed])
    assert "Baseline in the gallop failed: SessionError: fell" in md
    assert "| quantity | max (trot) |" in md
