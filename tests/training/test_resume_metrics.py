"""Resume without duplicates: metrics.csv and TensorBoard hold each iteration once after a crash and resume."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from surrogait_train.config import load_config
from surrogait_train.trainer import Trainer, trainer_from_checkpoint, truncate_metrics


class _Crash(Exception):
    pass


def _iterations(run_dir: Path) -> list[int]:
    with open(run_dir / "metrics.csv", newline="") as f:
        return [int(row["iteration"]) for row in csv.DictReader(f)]


def _wait_for_next_second(tb_dir: Path) -> None:
    # event files sort by their whole-second timestamp; the resumed run's file must sort after the crashed one's
    newest = max(int(p.name.split(".")[3]) for p in tb_dir.glob("events.out.tfevents.*"))
    while time.time() < newest + 1:
        time.sleep(0.05)


def test_resume_after_crash_logs_each_iteration_once(tmp_path, tiny_overrides):
    cfg = load_config(None, [*tiny_overrides, "checkpoint_every=4"])
    run_dir = tmp_path / "run"

    def crash_at_7(trainer, stats):
        if trainer.iteration == 7:
            raise _Crash  # dies after logging 5..7 but before checkpointing them, like kill -9

    with pytest.raises(_Crash):
        Trainer(cfg, run_dir).train(max_iterations=100, progress=False, callback=crash_at_7)
    assert _iterations(run_dir) == list(range(1, 8))
    _wait_for_next_second(run_dir / "tb")

    resumed = trainer_from_checkpoint(run_dir / "checkpoint.pt")
    assert resumed.iteration == 4
    resumed.train(max_iterations=9, progress=False)

    assert _iterations(run_dir) == list(range(1, 10))
    acc = EventAccumulator(str(run_dir / "tb"))
    acc.Reload()
    assert [e.step for e in acc.Scalars("train/reward")] == list(range(1, 10))


def test_truncate_metrics_keeps_header_and_rows_up_to_checkpoint(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text("iteration,reward\n1,0.1\n2,0.2\n3,0.3\n4,0.4\n5")  # a torn last row from the crash
    truncate_metrics(path, 3)
    assert path.read_text().splitlines() == ["iteration,reward", "1,0.1", "2,0.2", "3,0.3"]
    assert not (tmp_path / "metrics.csv.tmp").exists()
    truncate_metrics(tmp_path / "missing.csv", 3)  # nothing to cut
    assert not (tmp_path / "missing.csv").exists()


def test_a_run_resumed_by_a_trainer_that_logs_more_keeps_the_files_columns(tmp_path, tiny_overrides):
    """A run started before a column existed (mirror_error_rad, say) resumes into rows that still line up."""
    run_dir = tmp_path / "run"
    Trainer(load_config(None, [*tiny_overrides, "checkpoint_every=2"]), run_dir).train(max_iterations=2, progress=False)
    with open(run_dir / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    old_columns = [c for c in rows[0] if c != "mirror_error_rad"]
    with open(run_dir / "metrics.csv", "w", newline="") as f:  # the file as the older trainer wrote it
        writer = csv.DictWriter(f, fieldnames=old_columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)

    trainer_from_checkpoint(run_dir / "checkpoint.pt").train(max_iterations=4, progress=False)
    with open(run_dir / "metrics.csv", newline="") as f:
        lines = list(csv.reader(f))
    assert lines[0] == old_columns and all(len(line) == len(old_columns) for line in lines)
    assert [int(line[0]) for line in lines[1:]] == [1, 2, 3, 4]
