"""Train a Go2 from scratch and record when it first WALKS (issue 3's definition), on this machine.

    python bench/train_to_walk.py [--budget-s 600] [--eval-every-s 60] [--single-env-budget-s 600] [overrides...]
    python bench/train_to_walk.py --budget-s 0 --single-env-overrides max_iterations=3000 --out ...  # single env only

For each run (the batched config, then a single-environment run with env.num_envs=1):
- trains with `Trainer` (shipped configs/go2_trot.yaml + overrides); every `--eval-every-s` seconds of
  training wall-clock the current actor is exported to ONNX and evaluated with `evaluate_policy`
  (32 held-out episodes x 10 s, the deployment observation/onnxruntime path). Evaluation time is
  excluded from the training clock and reported separately.
- records the training seconds and env samples at the first evaluation that walks (or null);
- reports the trainer's env steps/s as a fraction of raw batched MuJoCo stepping (same model, robots
  and threads, same process): of its own workload (an even sample of its physics calls, stepped again
  back to back after training with nothing else running), and, for reference, of standing robots
  (right before and right after training; cheaper, since standing contacts barely change).

Writes bench/results/train_to_walk.json and bench/results/train_to_walk.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

from surrogait_train.config import load_config
from surrogait_train.evaluate import evaluate_policy
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402
from mujoco_throughput import RATE_HEADER, PhysicsWorkload, rate_cells, rates_vs_raw, raw_control_steps_per_s  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def run_one(name: str, overrides: list[str], budget_s: float, eval_every_s: float, episodes: int, work: Path) -> dict:
    cfg = load_config(None, overrides)
    raw_before = raw_control_steps_per_s(cfg.env, seconds=3.0)
    trainer = Trainer(cfg, work / name)
    workload = PhysicsWorkload(trainer.env.physics, max_records=400)
    evals: list[dict] = []
    first_walk: dict | None = None
    next_eval = eval_every_s
    eval_wall = 0.0

    def evaluate_now() -> dict:
        nonlocal eval_wall
        t0 = time.perf_counter()
        path = export_onnx(trainer.actor, trainer.env.contract, work / name / f"eval_{trainer.iteration}.onnx")
        result = evaluate_policy(path, num_episodes=episodes, episode_s=10.0)
        eval_wall += time.perf_counter() - t0
        row = {
            "train_s": round(trainer.wall_s, 1),
            "env_samples": trainer.env_steps,
            "iteration": trainer.iteration,
            "fall_rate": result.fall_rate,
            "vx_rmse": round(result.vx_rmse, 4),
            "yaw_rate_rmse": round(result.yaw_rate_rmse, 4),
            "walks": result.walks,
        }
        print(f"[{name}] eval {row}", flush=True)
        return row

    def callback(t: Trainer, _stats) -> bool:
        nonlocal next_eval, first_walk
        if t.wall_s >= budget_s:  # the budget counts training time only, not evaluations
            return True
        if t.wall_s >= next_eval:
            next_eval += eval_every_s
            row = evaluate_now()
            evals.append(row)
            if row["walks"] and first_walk is None:
                first_walk = row
                return True
        return False

    trainer.train(max_iterations=10**9, budget_s=0, progress=False, callback=callback)
    if first_walk is None and (not evals or evals[-1]["iteration"] != trainer.iteration):
        row = evaluate_now()
        evals.append(row)
        if row["walks"]:
            first_walk = row
    workload_raw = workload.replay_steps_per_s()
    trainer.env.close()
    raw_after = raw_control_steps_per_s(cfg.env, seconds=3.0)
    return {
        "name": name,
        "overrides": overrides,
        "num_envs": cfg.env.num_envs,
        "budget_s": budget_s,
        "trained_s": round(trainer.wall_s, 1),
        "env_samples": trainer.env_steps,
        "iterations": trainer.iteration,
        "eval_wall_s": round(eval_wall, 1),
        "first_walk": first_walk,
        "evaluations": evals,
        **rates_vs_raw(trainer.env_steps / max(trainer.wall_s, 1e-9), workload_raw, raw_before, raw_after),
    }


def markdown(report: dict) -> str:
    lines = [
        "# train_to_walk",
        "",
        f"Machine: {report['machine']}. Raw MuJoCo rates are measured within each run (same robots and",
        "threads): raw (workload) steps a sample of the trainer's own physics calls again, bare, after",
        "training; raw (standing) steps standing robots right before and right after training.",
        "",
        f"| run | envs | trained s | env samples | first walk (s / samples) | {RATE_HEADER} |"
        " closest eval (fall, vx RMSE, yaw RMSE) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        fw = r["first_walk"]
        walk = f"{fw['train_s']} s / {fw['env_samples']}" if fw else "not reached"
        # closest to walking: fewest falls, then the larger of the two RMSEs relative to its threshold
        best = (
            min(r["evaluations"], key=lambda e: (e["fall_rate"], max(e["vx_rmse"] / 0.15, e["yaw_rate_rmse"] / 0.2)))
            if r["evaluations"]
            else None
        )
        best_s = f"{best['fall_rate']:.2f}, {best['vx_rmse']:.3f}, {best['yaw_rate_rmse']:.3f}" if best else "-"
        lines.append(
            f"| {r['name']} | {r['num_envs']} | {r['trained_s']} | {r['env_samples']} | {walk} | "
            f"{rate_cells(r)} | {best_s} |"
        )
    lines += ["", f"Command: `{report['command']}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=600.0, help="of the batched run; 0 skips it")
    parser.add_argument("--eval-every-s", type=float, default=60.0)
    parser.add_argument("--single-env-budget-s", type=float, default=600.0, help="0 skips the single-env run")
    parser.add_argument(
        "--single-env-overrides", nargs="*", default=[], metavar="KEY=VALUE",
        help="extra overrides for the single-env run only, e.g. max_iterations=3000 (the learning-rate decay's span)",
    )  # fmt: skip
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--work-dir", default="/tmp/surrogait_train_to_walk")
    parser.add_argument("--out", default=str(RESULTS / "train_to_walk"))
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = Path(args.work_dir)
    report = {
        "machine": describe_machine(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "command": " ".join(["python", *sys.argv]),
        "runs": [],
    }
    if args.budget_s > 0:
        report["runs"].append(run_one("batched", args.overrides, args.budget_s, args.eval_every_s, args.episodes, work))
    if args.single_env_budget_s > 0:
        single = [*args.overrides, "env.num_envs=1", "env.num_threads=1", "learner.update_threads=1"]
        single += args.single_env_overrides
        report["runs"].append(
            run_one("single_env", single, args.single_env_budget_s, args.eval_every_s, args.episodes, work)
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
