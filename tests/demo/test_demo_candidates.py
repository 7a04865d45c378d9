"""Which snapshots the demo's pre-flight flies: six spread over the run from iteration 20 on, the newest
included, because a run that walks early can slide later (docs/training-log.md, 2026-12-04)."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"
spec = importlib.util.spec_from_file_location("demo_script", SCRIPT)
demo_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo_script)


def snapshots(*iterations: int) -> list[tuple[int, Path]]:
    return [(it, Path(f"it{it}.onnx")) for it in sorted(iterations, reverse=True)]


def test_six_snapshots_spread_from_the_newest_back_to_iteration_20():
    found = snapshots(*range(5, 165, 5))  # a 120 s run: iterations 5..160
    chosen = [it for it, _ in demo_script.spread_over_the_run(found)]
    assert len(chosen) == 6 and chosen[0] == 160 and chosen[-1] == 20
    assert chosen == sorted(chosen, reverse=True) and len(set(chosen)) == 6


def test_a_short_run_flies_what_it_has():
    assert [it for it, _ in demo_script.spread_over_the_run(snapshots(20, 25, 30))] == [30, 25, 20]
    assert [it for it, _ in demo_script.spread_over_the_run(snapshots(5, 10, 15))] == [15, 10, 5], "none that late"
    assert demo_script.spread_over_the_run([]) == []
