"""Train a Go2 from scratch, over seeds, and record when it first WALKS (issue 3's definition), on this machine.

    python bench/train_to_walk.py [--seeds 0] [--label nominal] [--budget-s 600] [--eval-every-s 60]
        [--single-env-budget-s 600] [--single-env-overrides KEY=VALUE ...] [--episodes 32] [--out PATH] [overrides...]

    # nominal 512-robot runs, three seeds, batched only:
    python bench/train_to_walk.py --seeds 1 2 3 --budget-s 600 --eval-every-s 30 --single-env-budget-s 0 \\
        env.num_envs=512 learner.critic_iterations=2 learner.critic_minibatches=16
    # the same with domain randomisation, reported separately:
    python bench/train_to_walk.py --seeds 1 2 3 --label randomised --out bench/results/train_to_walk_randomised \\
        --budget-s 600 --eval-every-s 30 --single-env-budget-s 0 \\
        env.num_envs=512 learner.critic_iterations=2 learner.critic_minibatches=16 randomization.enabled=true
    # single env only:
    python bench/train_to_walk.py --budget-s 0 --single-env-overrides max_iterations=3000 --out ...

Flags:
- `--seeds S ...` (default 0): each run kind (the batched config, then a single-environment run with
  env.num_envs=1) is run once per seed, with the override `seed=S` appended; runs are named
  `batched_seed1`, `single_env_seed1`, ...
- `--label TEXT` (default "nominal"): recorded in the report and in every run's entry and table row, so
  that a second invocation with other overrides (e.g. `--label randomised randomization.enabled=true`,
  with its own `--out`) is reported separately.
- `--budget-s` / `--single-env-budget-s`: training seconds per run of each kind; 0 skips that kind.
- positional `overrides` go unchanged to the trainer config (shipped configs/go2_trot.yaml), for every run;
  `--single-env-overrides` to the single-env runs only. `--seeds` and `--single-env-overrides` take several
  values, so put the positional overrides after a single-valued flag or after `--`.

For each run:
- trains with `Trainer`; every `--eval-every-s` seconds of training wall-clock the current actor is
  exported to ONNX and evaluated with `evaluate_policy` (`--episodes` held-out episodes x 10 s, the
  deployment observation/onnxruntime path). Evaluation time is excluded from the training clock and
  reported separately. Training stops at the first evaluation that walks, or at the budget;
- records the training seconds and env samples at the first evaluation that walks (or null);
- reports the trainer's env steps/s as a fraction of raw batched MuJoCo stepping (same model, robots
  and threads, same process): of its own workload (an even sample of its physics calls, stepped again
  back to back after training with nothing else running), and, for reference, of standing robots
  (right before and right after training; cheaper, since standing contacts barely change).
A run that raises is recorded with its error string and the bench goes on to the next run.

Per run kind, an aggregate over the seeds (`aggregate`): seeds walked (k/n), and the median and worst
training seconds and env samples to the first walk, where a seed that did not walk within its budget
counts as "> budget" (+inf): the worst is "not within B s" if any seed did not walk, and a median that
falls on such a seed is "> B s". Runs that raised are counted in n but left out of median and worst.

Writes PATH.json and PATH.md (default bench/results/train_to_walk.*) after every finished run, so an
interrupted bench keeps the runs it finished.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
import traceback
from pathlib import Path

import torch

from surrogait_train.config import load_config
from surrogait_train.evaluate import evaluate_policy
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402
from mujoco_throughput import RATE_HEADER, PhysicsWorkload, rate_cells, rates_vs_raw, raw_control_steps_per_s  # noqa: E402
from sample_efficiency import median_with_inf  # noqa: E402

RESULTS = Path(__file__).parent / "results"
KINDS = ("batched", "single_env")


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

    try:
        trainer.train(max_iterations=10**9, budget_s=0, progress=False, callback=callback)
        if first_walk is None and (not evals or evals[-1]["iteration"] != trainer.iteration):
            row = evaluate_now()
            evals.append(row)
            if row["walks"]:
                first_walk = row
        workload_raw = workload.replay_steps_per_s()
    finally:
        trainer.env.close()  # also when the run raises: the next run gets the machine's threads
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


def aggregate(runs: list[dict], budget_s: float) -> dict:
    """Summary of one run kind over its seeds.

    A finished run that did not walk counts as +inf ("> budget"); runs with an "error" are counted in
    `n_seeds` but left out of median and worst. Numbers are None where they are "> budget" (median) or
    "not within budget" (worst), or where no run finished; `text` holds the strings the report prints.
    """
    finished = [r for r in runs if "error" not in r]
    walked = sum(1 for r in finished if r.get("first_walk"))
    out: dict = {
        "n_seeds": len(runs),
        "seeds_walked": walked,
        "errored": len(runs) - len(finished),
        "budget_s": budget_s,
    }
    text = {"seeds_walked": f"{walked}/{len(runs)}" + (f" ({out['errored']} errored)" if out["errored"] else "")}
    for key, fmt in (("train_s", "{:.1f} s"), ("env_samples", "{:.0f}")):
        values = sorted(r["first_walk"][key] if r.get("first_walk") else math.inf for r in finished)
        median = median_with_inf(values) if values else None
        worst = values[-1] if values else None
        for stat, value, censored in (
            ("median", median, f"> {budget_s:g} s"),
            ("worst", worst, f"not within {budget_s:g} s"),
        ):
            if value is None:
                out[f"{stat}_{key}"], text[f"{stat}_{key}"] = None, "-"
            elif math.isinf(value):
                out[f"{stat}_{key}"], text[f"{stat}_{key}"] = None, censored
            else:
                out[f"{stat}_{key}"], text[f"{stat}_{key}"] = value, fmt.format(value)
    out["text"] = text
    return out


def aggregates(runs: list[dict]) -> dict:
    """`aggregate` per run kind present in `runs`, in KINDS order."""
    out = {}
    for kind in KINDS:
        mine = [r for r in runs if r.get("kind") == kind]
        if mine:
            envs = next((r["num_envs"] for r in mine if "num_envs" in r), None)  # None if all raised
            out[kind] = {"num_envs": envs, **aggregate(mine, mine[0]["budget_s"])}
    return out


def markdown(report: dict) -> str:
    seeds = ", ".join(str(s) for s in report["seeds"])
    overrides = " ".join(report["overrides"]) or "(none)"
    lines = [
        "# train_to_walk",
        "",
        f"Label: **{report['label']}**. Seeds: {seeds}. Overrides: `{overrides}`.",
        "",
        'A seed that did not walk within its training budget counts as "> budget": the worst is "not within',
        'B s" if any seed did not walk, and the median is "> B s" when it falls on such a seed. Runs that',
        "raised count in n but not in median or worst.",
        "",
        "| run kind | envs | budget s | seeds walked | median train s to walk | worst train s to walk |"
        " median env samples to walk | worst env samples to walk |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, agg in report["aggregate"].items():
        t = agg["text"]
        lines.append(
            f"| {kind} | {agg['num_envs'] if agg['num_envs'] is not None else '-'} | {agg['budget_s']:g} | "
            f"{t['seeds_walked']} | {t['median_train_s']} | {t['worst_train_s']} | "
            f"{t['median_env_samples']} | {t['worst_env_samples']} |"
        )
    lines += [
        "",
        f"Machine: {report['machine']}. Raw MuJoCo rates are measured within each run (same robots and",
        "threads): raw (workload) steps a sample of the trainer's own physics calls again, bare, after",
        "training; raw (standing) steps standing robots right before and right after training.",
        "",
        f"| run | label | envs | trained s | env samples | first walk (s / samples) | {RATE_HEADER} |"
        " closest eval (fall, vx RMSE, yaw RMSE) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        if "error" in r:
            error = " ".join(r["error"].split()).replace("|", "\\|")  # one table cell
            lines.append(f"| {r['name']} | {r['label']} | - | - | - | error: {error} | - | - | - | - | - | - |")
            continue
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
            f"| {r['name']} | {r['label']} | {r['num_envs']} | {r['trained_s']} | {r['env_samples']} | {walk} | "
            f"{rate_cells(r)} | {best_s} |"
        )
    lines += ["", f"Command: `{report['command']}`", ""]
    return "\n".join(lines)


def save(report: dict, out: Path) -> str:
    """Write PATH.json and PATH.md with the runs so far; returns the markdown."""
    report["aggregate"] = aggregates(report["runs"])
    report["loadavg_last_save"] = [round(x, 2) for x in os.getloadavg()]
    md = markdown(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    out.with_suffix(".md").write_text(md)
    return md


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="each run kind runs once per seed (seed=S)")
    parser.add_argument("--label", default="nominal", help="names this invocation's overrides in the report")
    parser.add_argument("--budget-s", type=float, default=600.0, help="of each batched run; 0 skips them")
    parser.add_argument("--eval-every-s", type=float, default=60.0)
    parser.add_argument("--single-env-budget-s", type=float, default=600.0, help="0 skips the single-env runs")
    parser.add_argument(
        "--single-env-overrides", nargs="*", default=[], metavar="KEY=VALUE",
        help="extra overrides for the single-env runs only, e.g. max_iterations=3000 (the learning-rate decay's span)",
    )  # fmt: skip
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--work-dir", default="/tmp/surrogait_train_to_walk")
    parser.add_argument("--out", default=str(RESULTS / "train_to_walk"))
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = Path(args.work_dir) / re.sub(r"[^\w.-]+", "_", args.label)
    out = Path(args.out)
    report = {
        "machine": describe_machine(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "command": " ".join(["python", *sys.argv]),
        "label": args.label,
        "seeds": args.seeds,
        "overrides": args.overrides,
        "runs": [],
    }
    single = [*args.overrides, "env.num_envs=1", "env.num_threads=1", "learner.update_threads=1"]
    plan = [
        (kind, overrides, budget)
        for kind, overrides, budget in (
            ("batched", args.overrides, args.budget_s),
            ("single_env", [*single, *args.single_env_overrides], args.single_env_budget_s),
        )
        if budget > 0
    ]
    md = save(report, out)
    for kind, overrides, budget in plan:
        for seed in args.seeds:
            name = f"{kind}_seed{seed}"
            run_overrides = [*overrides, f"seed={seed}"]
            try:
                run = run_one(name, run_overrides, budget, args.eval_every_s, args.episodes, work)
            except Exception as exc:  # keep the report and the other runs
                traceback.print_exc()
                run = {
                    "name": name,
                    "overrides": run_overrides,
                    "budget_s": budget,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            report["runs"].append({"label": args.label, "kind": kind, "seed": seed, **run})
            md = save(report, out)
            print(f"[{name}] done; report written to {out.with_suffix('.md')}", flush=True)
    print(md)


if __name__ == "__main__":
    main()
