"""The sample-efficiency benchmark's bookkeeping: first-walk detection, censored medians, ratios."""

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "sample_efficiency.py"
_spec = importlib.util.spec_from_file_location("sample_efficiency", _PATH)
se = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("sample_efficiency", se)  # dataclasses look their module up there
_spec.loader.exec_module(se)


def _rows(learner, walk_at, samples=(100_000, 200_000, 300_000), sps=1000.0):
    """One row per eval; seed s first walks at walk_at[s] samples (None: never)."""
    out = []
    for seed, first in enumerate(walk_at):
        for n in samples:
            walks = first is not None and n >= first
            out.append(
                dict(learner=learner, seed=seed, env_samples=n, train_s=n / sps, iterations=1, fall_rate=0.0,
                     vx_rmse=0.1 if walks else 0.5, vy_rmse=0.1, yaw_rate_rmse=0.1, walks=int(walks), eval_s=1.0)
            )  # fmt: skip
    return out


def test_measured_ratio_uses_the_median_first_walk():
    rows = _rows("ppo", [300_000, 200_000, 300_000]) + _rows("diffsim", [100_000, 100_000, 200_000], sps=500.0)
    summary = se.summarize(rows, {})
    assert summary["learners"]["ppo"]["runs"][1]["samples_to_walk"] == 200_000
    assert summary["learners"]["ppo"]["median_samples_to_walk"]["value"] == 300_000
    assert summary["learners"]["diffsim"]["median_samples_to_walk"]["value"] == 100_000
    ratio = summary["ratio_ppo_over_diffsim"]
    assert ratio["samples"]["value"] == pytest.approx(3.0)
    assert ratio["seconds"]["value"] == pytest.approx(300 / 200)


def test_a_learner_that_mostly_never_walks_gives_a_bound_not_a_value():
    rows = _rows("ppo", [200_000, 200_000, 200_000]) + _rows("diffsim", [None, None, 100_000])
    summary = se.summarize(rows, {})
    diff = summary["learners"]["diffsim"]
    assert diff["seeds_walked"] == 1
    assert diff["median_samples_to_walk"] == {"value": None, "lower_bound": 300_000}
    assert summary["ratio_ppo_over_diffsim"]["samples"]["upper_bound"] == pytest.approx(200_000 / 300_000)
    rows = _rows("ppo", [None, None, None]) + _rows("diffsim", [100_000, 100_000, 100_000])
    assert se.summarize(rows, {})["ratio_ppo_over_diffsim"]["samples"]["lower_bound"] == pytest.approx(3.0)


def test_report_writes_csv_derived_files(tmp_path):
    import csv

    path = tmp_path / "sample_efficiency_t.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=se.FIELDS)
        writer.writeheader()
        writer.writerows(_rows("ppo", [200_000, None, 300_000]) + _rows("diffsim", [None, None, None]))
    meta = {"command": "x", "machine": "m", "date": "d", "budget_samples": 3e5, "eval_every_samples": 1e5,
            "stop_when_walking": True}  # fmt: skip
    se.report(path, meta)
    md = path.with_suffix(".md").read_text()
    assert "not reached within 0.30 M" in md and "| ppo | 2/3 |" in md
    assert path.with_suffix(".png").stat().st_size > 10_000
