"""The command line: clear errors, and `--resume` after kill -9 continues from the saved step."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from surrogait_train.cli import main


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "surrogait_train.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_missing_config_and_bad_override_are_clear_errors(tmp_path, capsys):
    assert main(["train", "--config", str(tmp_path / "nope.yaml"), "--run-dir", str(tmp_path / "r")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["train", "--run-dir", str(tmp_path / "r"), "learner.no_such_key=1"]) == 2
    err = capsys.readouterr().err
    assert "unknown config key 'learner.no_such_key'" in err and "actor_lr" in err
    assert main(["train", "--run-dir", str(tmp_path / "r"), "learner.actor_lr=fast"]) == 2
    assert "must be a number" in capsys.readouterr().err


def test_eval_and_export_errors(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "missing.onnx")]) == 2
    assert "not found" in capsys.readouterr().err
    bogus = tmp_path / "bogus.onnx"
    bogus.write_bytes(b"not an onnx file")
    assert main(["eval", str(bogus)]) == 2
    assert "not a readable ONNX" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="checkpoint .* not found"):
        main(["export", "--run-dir", str(tmp_path / "nothing")])


def _iterations(run_dir: Path) -> list[int]:
    with open(run_dir / "metrics.csv") as f:
        return [int(row["iteration"]) for row in csv.DictReader(f)]


def test_resume_after_kill9_continues_from_saved_step(tmp_path, tiny_overrides):
    run_dir = tmp_path / "run"
    args = ["train", "--run-dir", str(run_dir), "--no-progress", *tiny_overrides, "max_iterations=100000"]
    proc = subprocess.Popen([sys.executable, "-m", "surrogait_train.cli", *args], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        ckpt = run_dir / "checkpoint.pt"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if ckpt.exists() and torch.load(ckpt, weights_only=False)["iteration"] >= 4:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint at iteration >= 4 within 90 s")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=False)["iteration"]
    assert not (run_dir / "checkpoint.pt.tmp").exists() or saved >= 4  # a torn tmp never replaces the checkpoint
    done = _run(
        ["train", "--run-dir", str(run_dir), "--resume", "--no-progress", f"max_iterations={saved + 3}"], tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert f"resuming {run_dir} from iteration {saved}" in done.stdout
    assert torch.load(run_dir / "checkpoint.pt", weights_only=False)["iteration"] == saved + 3
    # rows the killed run logged after its checkpoint are cut, so each iteration appears once, in order
    assert _iterations(run_dir) == list(range(1, saved + 4))
    again = _run(["train", "--run-dir", str(run_dir), "--no-progress", *tiny_overrides], tmp_path)
    assert again.returncode != 0 and "already holds a run" in again.stderr


def test_train_exports_snapshots_to_choose_among_afterwards(tmp_path, tiny_overrides):
    """`--snapshot-every N`: how a shipped policy is chosen (surrogait_bringup/policies/README.md): every N-th
    iteration's policy as ONNX, each a policy the node can run."""
    from surrogait_core.policy.onnx_policy import OnnxPolicy
    from surrogait_train.api import snapshots

    run_dir = tmp_path / "run"
    code = main(["train", "--run-dir", str(run_dir), "--no-progress", "--snapshot-every", "2", *tiny_overrides,
                 "max_iterations=5"])  # fmt: skip
    assert code == 0
    assert [it for it, _ in snapshots(run_dir)] == [4, 2]
    assert OnnxPolicy(snapshots(run_dir)[0][1]).contract.robot == "go2"
