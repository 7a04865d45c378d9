"""The train-to-walk bench's aggregate over seeds: walked k/n, median and worst, non-walkers as "> budget"."""

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "train_to_walk.py"
_spec = importlib.util.spec_from_file_location("train_to_walk", _PATH)
ttw = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("train_to_walk", ttw)
_spec.loader.exec_module(ttw)


def _run(seed: int, walk_s: float | None, kind: str = "batched") -> dict:
    """A finished run that first walks at walk_s training seconds (None: never), 1000 samples a second."""
    fw = None if walk_s is None else {"train_s": walk_s, "env_samples": int(walk_s * 1000), "walks": True}
    return {"name": f"{kind}_seed{seed}", "kind": kind, "seed": seed, "label": "nominal", "num_envs": 16,
            "budget_s": 600.0, "first_walk": fw, "evaluations": []}  # fmt: skip


def test_all_seeds_walk():
    agg = ttw.aggregate([_run(1, 300.0), _run(2, 120.0), _run(3, 450.0)], 600.0)
    assert (agg["seeds_walked"], agg["n_seeds"], agg["errored"]) == (3, 3, 0)
    assert agg["median_train_s"] == 300.0 and agg["worst_train_s"] == 450.0
    assert agg["median_env_samples"] == 300_000 and agg["worst_env_samples"] == 450_000
    assert agg["text"] == {
        "seeds_walked": "3/3",
        "median_train_s": "300.0 s",
        "worst_train_s": "450.0 s",
        "median_env_samples": "300000",
        "worst_env_samples": "450000",
    }


def test_one_seed_not_walking_makes_the_worst_not_within_budget():
    agg = ttw.aggregate([_run(1, 300.0), _run(2, None), _run(3, 120.0)], 600.0)
    assert agg["seeds_walked"] == 2
    assert agg["median_train_s"] == 300.0 and agg["median_env_samples"] == 300_000  # the non-walker is above it
    assert agg["worst_train_s"] is None and agg["worst_env_samples"] is None
    assert agg["text"]["seeds_walked"] == "2/3"
    assert agg["text"]["worst_train_s"] == "not within 600 s"
    assert agg["text"]["worst_env_samples"] == "not within 600 s"


def test_a_median_on_a_non_walker_is_a_bound():
    agg = ttw.aggregate([_run(1, None), _run(2, 200.0), _run(3, None)], 600.0)
    assert agg["seeds_walked"] == 1
    assert agg["median_train_s"] is None and agg["text"]["median_train_s"] == "> 600 s"
    assert agg["text"]["median_env_samples"] == "> 600 s"
    # even seed counts: the two middle values are averaged only when both walked
    assert ttw.aggregate([_run(1, 100.0), _run(2, 200.0)], 600.0)["median_train_s"] == 150.0
    assert ttw.aggregate([_run(1, 100.0), _run(2, None)], 600.0)["text"]["median_train_s"] == "> 600 s"


def test_errored_runs_count_in_n_but_not_in_median_or_worst():
    errored = {"name": "batched_seed3", "kind": "batched", "seed": 3, "label": "nominal", "budget_s": 600.0,
               "error": "RuntimeError: boom"}  # fmt: skip
    runs = [_run(1, 100.0), _run(2, 300.0), errored, _run(1, None, kind="single_env")]
    agg = ttw.aggregates(runs)
    assert list(agg) == ["batched", "single_env"]
    assert agg["batched"]["text"]["seeds_walked"] == "2/3 (1 errored)"
    assert agg["batched"]["median_train_s"] == 200.0 and agg["batched"]["worst_train_s"] == 300.0
    assert agg["single_env"]["text"]["worst_train_s"] == "not within 600 s"
    report = {"seeds": [1, 2, 3], "label": "nominal", "overrides": [], "machine": "m", "command": "c",
              "runs": [errored], "aggregate": agg}  # fmt: skip
    md = ttw.markdown(report)
    assert "Label: **nominal**. Seeds: 1, 2, 3." in md
    assert md.index("| run kind |") < md.index("| run | label |")
    assert "error: RuntimeError: boom" in md
