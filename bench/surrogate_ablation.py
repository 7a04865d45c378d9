"""Surrogate ablation: the same seeds, config and iteration budget for each surrogate variant.

    python bench/surrogate_ablation.py [--iterations 150] [--seeds 0 1] [overrides...]

Reports, per variant and seed, the mean training reward / velocity error / fall rate over the
last 20 iterations, the actor gradient norm, and an evaluation of the exported policy
(16 held-out episodes x 5 s through the deployment path). Budgets are in iterations (equal env
samples for every variant) because the CPU is shared; wall-clock is reported too.
Writes bench/results/surrogate_ablation.json and training/ABLATION.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from surrogait_train.config import load_config, to_dict
from surrogait_train.evaluate import evaluate_policy
from surrogait_train.export import export_onnx
from surrogait_train.surrogate import VARIANTS
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEAN_KEYS = ("eval_fall_rate", "eval_vx_rmse", "eval_yaw_rate_rmse", "train_lin_vel_error_last20", "train_wall_s")


def run(variant: str, seed: int, iterations: int, overrides: list[str], work: Path) -> dict:
    cfg = load_config(None, [*overrides, f"surrogate.variant={variant}", f"seed={seed}"])
    trainer = Trainer(cfg, work / f"{variant}_{seed}")
    history: list = []
    trainer.train(max_iterations=iterations, progress=False, callback=lambda t, s: history.append(s) and False)
    tail = history[-20:]
    onnx = export_onnx(trainer.actor, trainer.env.contract, work / f"{variant}_{seed}.onnx")
    trainer.env.close()
    ev = evaluate_policy(onnx, num_episodes=16, episode_s=5.0)
    return {
        "config": to_dict(cfg),
        "variant": variant,
        "seed": seed,
        "iterations": trainer.iteration,
        "env_samples": trainer.env_steps,
        "train_wall_s": round(trainer.wall_s, 1),
        "train_reward_last20": round(float(np.mean([s.reward for s in tail])), 4),
        "train_lin_vel_error_last20": round(float(np.mean([s.lin_vel_error for s in tail])), 4),
        "train_fall_rate_last20": round(float(np.mean([s.fall_rate for s in tail])), 4),
        "grad_norm_median": round(float(np.median([s.grad_norm for s in history])), 4),
        "eval_fall_rate": ev.fall_rate,
        "eval_vx_rmse": round(ev.vx_rmse, 4),
        "eval_yaw_rate_rmse": round(ev.yaw_rate_rmse, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS))
    parser.add_argument("--work-dir", default="/tmp/surrogait_ablation")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    start = time.time()
    machine = describe_machine()  # the load at the start, before the runs add their own
    for seed in args.seeds:
        for variant in args.variants:
            row = run(variant, seed, args.iterations, args.overrides, Path(args.work_dir))
            print(json.dumps(row), flush=True)
            rows.append(row)
    report = {
        "command": " ".join(["python", *sys.argv]),
        "machine": machine,
        "cpus": os.cpu_count(),
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "total_wall_s": round(time.time() - start, 1),
        "rows": rows,
    }
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / "surrogate_ablation.json").write_text(json.dumps(report, indent=2))
    (ROOT / "training" / "ABLATION.md").write_text(markdown(report))
    print(markdown(report))


def _finite_mean(values: list[float]) -> str:
    finite = [v for v in values if np.isfinite(v)]
    if not finite:
        return "– (all fell)"
    text = f"{np.mean(finite):.3f}"
    return text if len(finite) == len(values) else f"{text} ({len(finite)})"


def markdown(report: dict) -> str:
    rows = report["rows"]
    lines = [
        "# Surrogate ablation",
        "",
        "Produced by `bench/surrogate_ablation.py` (do not edit by hand). Same config, seeds and iteration",
        "budget for every variant; see `surrogait_train/surrogate.py` for the equations of each variant.",
        "The resolved config of every run is in `bench/results/surrogate_ablation.json`.",
        "",
        f"Command: `{report['command']}`  ",
        f"Machine: {report['machine']}; load average at the end {report['loadavg_end']}.",
        "",
        "| variant | seed | iterations | env samples | train s | reward/s (last 20) | vel. error m/s (last 20) |"
        " falls /robot/s (last 20) | median grad norm | eval falls | eval vx RMSE | eval yaw RMSE |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['seed']} | {r['iterations']} | {r['env_samples']} | {r['train_wall_s']} | "
            f"{r['train_reward_last20']} | {r['train_lin_vel_error_last20']} | {r['train_fall_rate_last20']} | "
            f"{r['grad_norm_median']} | {r['eval_fall_rate']:.2f} | {r['eval_vx_rmse']} | {r['eval_yaw_rate_rmse']} |"
        )
    lines += [
        "",
        "Mean over seeds (an RMSE is undefined for a policy whose every episode fell; such seeds are left out of",
        "the mean and the count of seeds it covers is given in brackets):",
        "",
        "| variant | seeds | eval falls | eval vx RMSE | eval yaw RMSE | vel. error m/s (last 20) | train s |",
        "|---|---|---|---|---|---|---|",
    ]
    for variant in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == variant]
        mean = {k: _finite_mean([r[k] for r in mine]) for k in MEAN_KEYS}
        lines.append(
            f"| {variant} | {len(mine)} | {mean['eval_fall_rate']} | {mean['eval_vx_rmse']} | "
            f"{mean['eval_yaw_rate_rmse']} | {mean['train_lin_vel_error_last20']} | {mean['train_wall_s']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
