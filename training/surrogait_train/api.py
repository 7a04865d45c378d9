"""Programmatic entry points for the demo: train a Go2 policy for a wall-clock budget and export it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from surrogait_train.config import load_config
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

SNAPSHOTS = "snapshots"  # folder of a run's periodic ONNX exports

# `make demo`'s recipe per robot, on top of the robot's trot config: minutes of training on a 2-core laptop, the
# snapshot the pre-flight chooses ranked by the training log (scripts/demo.py). Measured over three seeds each
# (bench/results/demo_training_*.md): the Go2's 512 robots (~125 iterations in 120 s) walk and stand still in 3 of 3
# (docs/training-log.md, 2026-12-05 (6)). The Go1 learns its yaw later: with the first-order gradient alone 512 robots
# missed WALKS on yaw in 3 of 3 and 16 (~500 iterations) walked and stood still in 2 of 3; with the zeroth-order mix
# (0.8 of the update's direction, 0.3 rad of exploration noise: the shipped go2_trot's recipe) 64 robots (~450
# iterations) walk and stand still in 3 of 3, yaw-rate RMSE 0.11-0.15 (demo_training_go1_mixed.md; the training log,
# 2026-12-06 (11)). max_iterations sets the learning-rate decay's span; the budget stops the run. The Go1's
# joint-position penalty is 100 times the config's: at -10 its runs straightened the rear calves past the soft range
# in every iteration after ~160, and the pre-flight refused 10 of 18 snapshots (8 for a calf in the position fault's
# narrow band); at -1000 it cleared 17 of 18 (docs/training-log.md, 2026-12-05 (7)).
# 0.8 of the actor's update direction from the window's likelihood-ratio gradient, and the exploration noise it needs
# (docs/training-log.md, 2026-12-05 (9)); the mix as the shipped trot uses it, with its longer gradient horizon
ZEROTH_ORDER_SHARE = ("learner.zeroth_order_weight=0.8", "learner.action_noise_std=0.3")
ZEROTH_ORDER_MIX = ("surrogate.gradient_decay=0.9", *ZEROTH_ORDER_SHARE)
DEMO_TRAINING_OVERRIDES: dict[str, tuple[str, ...]] = {
    "go2": ("env.num_envs=512", "learner.critic_iterations=2", "learner.critic_minibatches=16"),
    "go1": ("env.num_envs=64", "max_iterations=1000", "reward.joint_pos_limits=-1000", *ZEROTH_ORDER_MIX),
}


def train_and_export(
    config_overrides: list[str] | None = None,
    budget_s: float = 60.0,
    out_path: Path | str = "go2_policy.onnx",
    config_path: Path | str | None = None,
    run_dir: Path | str | None = None,
    progress: bool = False,
    snapshot_every: int = 0,
    max_iterations: int | None = None,
) -> Path:
    """Train from scratch for `budget_s` wall seconds (shipped go2_trot config + overrides) and export ONNX.

    Returns the ONNX path; its contract is embedded, so `OnnxPolicy(path)` / the policy node can run it.
    `max_iterations` stops it earlier (the trainer is deterministic for a number of iterations; the
    learning-rate schedule still spans the config's max_iterations).
    `snapshot_every` > 0 also exports the policy every that many iterations to
    `run_dir/snapshots/it<iteration>.onnx`, and the last iteration's as well (`snapshots()` lists them),
    for a choice made afterwards (the demo's pre-flight).
    """
    cfg = load_config(config_path, config_overrides or [])
    run_dir = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="surrogait_train_"))
    trainer = Trainer(cfg, run_dir)

    try:
        trainer.train(max_iterations=max_iterations or 10**9, budget_s=budget_s, progress=progress,
                      callback=snapshot_callback(run_dir, snapshot_every) if snapshot_every > 0 else None)
        if snapshot_every > 0:  # the last iteration is a snapshot too
            export_snapshot(trainer, run_dir)
        return export_onnx(trainer.actor, trainer.env.contract, out_path, trainer.provenance())
    finally:
        trainer.env.close()


def export_snapshot(trainer: Trainer, run_dir: Path) -> Path:
    """Export the trainer's policy now to `run_dir/snapshots/it<iteration>.onnx`."""
    return export_onnx(trainer.actor, trainer.env.contract, run_dir / SNAPSHOTS / f"it{trainer.iteration}.onnx",
                       trainer.provenance())


def snapshot_callback(run_dir: Path, every: int):
    """A `Trainer.train` callback that exports a snapshot every `every` iterations."""

    def snapshot(trainer: Trainer, _stats) -> bool:
        if trainer.iteration % every == 0:
            export_snapshot(trainer, run_dir)
        return False

    return snapshot


def snapshots(run_dir: Path | str) -> list[tuple[int, Path]]:
    """(iteration, ONNX path) of a run's snapshots, newest first."""
    found = [(int(p.stem[2:]), p) for p in (Path(run_dir) / SNAPSHOTS).glob("it*.onnx") if p.stem[2:].isdigit()]
    return sorted(found, reverse=True)
