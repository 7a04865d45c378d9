"""Sample efficiency and wall-clock: differentiable simulation (SHAC + surrogate) vs PPO (rsl_rl).

Both learners train on the same `LocomotionEnv` (same robots, contract observations, rewards,
gait clock, actor network size) from the same seeds, under the same budget of env samples
(robot control steps). Every `--eval-every` samples each run's actor is exported to ONNX and
scored by the trainer's `eval` (`surrogait_train.evaluate.evaluate_policy`: 32 held-out
episodes of 10 s, vx in [0.3, 1.0], |vy| <= 0.3, |yaw| <= 0.5, deployment observation builder
+ onnxruntime). "Walking" is eval's verdict (no falls, vx RMSE <= 0.15 m/s, yaw RMSE <= 0.2
rad/s). Wall-clock counts training time only (rollouts + updates), not evaluation.
The differentiable trainer's actor is a residual on the clock-driven gait reference where its
config says so (`learner.residual_reference`, the default); PPO's rsl_rl actor is a plain network
(`--diff learner.residual_reference=false env.stand_speed_m_s=0` runs the trainer with a plain one too).

Writes `bench/results/sample_efficiency{suffix}.{csv,json,md,png}`:
- csv: one row per evaluation (learner, seed, env samples, train seconds, eval metrics);
- json/md: samples and seconds to first walk per run, medians per learner, and the ratios
  PPO / diff-sim (a lower bound when PPO did not walk within the budget);
- png: vx RMSE, yaw-rate RMSE and fall rate against env samples and against wall-clock.

    python bench/sample_efficiency.py --quick          # 3 seeds, small budget
    python bench/sample_efficiency.py --seeds 0 1 2 --budget 3e6 --eval-every 2e5
    python bench/sample_efficiency.py --report-only    # redo json/md/png from the csv
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
LEARNERS = ("diffsim", "ppo")
FIELDS = [
    "learner", "seed", "env_samples", "train_s", "iterations", "fall_rate", "vx_rmse", "vy_rmse", "yaw_rate_rmse",
    "walks", "eval_s",
]  # fmt: skip


# ------------------------------------------------------------------------------------------ learners
def load_base_config(path: Path | None) -> dict:
    """The trainer config both learners start from, read once so a config edited mid-benchmark cannot leak in."""
    from surrogait_train.config import load_config, to_dict

    return to_dict(load_config(path))


def _config(base_cfg: dict, seed: int, overrides: list[str]):
    from surrogait_train.config import apply_overrides, from_dict

    return apply_overrides(from_dict(base_cfg), [f"seed={seed}", *overrides])


class DiffSimRun:
    """The differentiable-simulation trainer (issue 3) driven through its Python API."""

    name = "diffsim"

    def __init__(self, seed: int, overrides: list[str], base_cfg: dict, run_dir: Path):
        from surrogait_train.trainer import Trainer

        cfg = _config(base_cfg, seed, overrides)
        self.cfg = cfg
        self.trainer = Trainer(cfg, run_dir)

    @property
    def env_samples(self) -> int:
        return self.trainer.env_steps

    @property
    def train_s(self) -> float:
        return self.trainer.wall_s

    @property
    def iterations(self) -> int:
        return self.trainer.iteration

    def train_until(self, samples: int, max_train_s: float = 0.0) -> None:
        if self.env_samples >= samples:
            return
        self.trainer.train(
            max_iterations=10**9,
            budget_s=0.0,
            progress=False,
            callback=lambda t, _: t.env_steps >= samples or bool(max_train_s and t.wall_s >= max_train_s),
        )

    def export(self, path: Path) -> Path:
        from surrogait_train.export import export_onnx

        return export_onnx(self.trainer.actor, self.trainer.env.contract, path, self.trainer.provenance())

    def close(self) -> None:
        self.trainer.env.close()


class PPORun:
    """rsl_rl PPO on the same environment (training/surrogait_train/ppo)."""

    name = "ppo"

    def __init__(self, seed: int, overrides: list[str], ppo_overrides: list[str], base_cfg: dict):
        from surrogait_train.ppo.config import apply_overrides as apply_ppo
        from surrogait_train.ppo.config import from_train_config
        from surrogait_train.ppo.train import PPOSession

        cfg = _config(base_cfg, seed, overrides)
        self.cfg = cfg
        self.ppo_cfg = apply_ppo(from_train_config(cfg), ppo_overrides)
        self.session = PPOSession(cfg, self.ppo_cfg)

    @property
    def env_samples(self) -> int:
        return self.session.env_samples

    @property
    def train_s(self) -> float:
        return self.session.train_seconds

    @property
    def iterations(self) -> int:
        return self.session.iterations

    def train_until(self, samples: int, max_train_s: float = 0.0) -> None:
        # PPO iterations are large (thousands of samples); the seconds cap is checked between eval intervals
        missing = samples - self.env_samples
        if missing > 0:
            self.session.learn(math.ceil(missing / self.session.samples_per_iteration))

    def export(self, path: Path) -> Path:
        return self.session.export(path)

    def close(self) -> None:
        self.session.close()


# ------------------------------------------------------------------------------------------ running
def run_one(
    run, seed: int, budget: int, eval_every: int, stop_when_walking: bool, writer, tmp: Path, max_train_s: float = 0.0
) -> None:
    """Train to `budget` samples (or `max_train_s` seconds of training, if set), evaluating every `eval_every`."""
    from surrogait_train.evaluate import evaluate_policy

    target = 0
    while target < budget and not (max_train_s and run.train_s >= max_train_s):
        target = min(budget, target + eval_every)
        run.train_until(target, max_train_s)
        t0 = time.perf_counter()
        path = run.export(tmp / f"{run.name}_{seed}.onnx")
        result = evaluate_policy(path)
        row = {
            "learner": run.name,
            "seed": seed,
            "env_samples": run.env_samples,
            "train_s": round(run.train_s, 2),
            "iterations": run.iterations,
            "fall_rate": round(result.fall_rate, 4),
            "vx_rmse": round(result.vx_rmse, 4),
            "vy_rmse": round(result.vy_rmse, 4),
            "yaw_rate_rmse": round(result.yaw_rate_rmse, 4),
            "walks": int(result.walks),
            "eval_s": round(time.perf_counter() - t0, 2),
        }
        writer.writerow(row)
        print(
            f"[{run.name} seed {seed}] {row['env_samples']:>9d} samples {row['train_s']:7.1f} s  "
            f"falls {row['fall_rate']:.2f}  vx {row['vx_rmse']:.3f}  yaw {row['yaw_rate_rmse']:.3f}  "
            f"{'WALKS' if result.walks else ''}",
            flush=True,
        )
        if result.walks and stop_when_walking:
            return


# ------------------------------------------------------------------------------------------ reporting
def read_rows(path: Path) -> list[dict]:
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("seed", "env_samples", "iterations", "walks"):
            r[k] = int(r[k])
        for k in ("train_s", "fall_rate", "vx_rmse", "vy_rmse", "yaw_rate_rmse", "eval_s"):
            r[k] = float(r[k])
    return rows


def summarize(rows: list[dict], meta: dict) -> dict:
    out: dict = {"meta": meta, "learners": {}}
    for learner in LEARNERS:
        if not any(r["learner"] == learner for r in rows):
            continue  # not run (--learners)
        runs = {}
        for seed in sorted({r["seed"] for r in rows if r["learner"] == learner}):
            mine = sorted(
                (r for r in rows if r["learner"] == learner and r["seed"] == seed), key=lambda r: r["env_samples"]
            )
            first = next((r for r in mine if r["walks"]), None)
            last = mine[-1]
            runs[seed] = {
                "walked": first is not None,
                "samples_to_walk": first["env_samples"] if first else None,
                "seconds_to_walk": first["train_s"] if first else None,
                "samples_trained": last["env_samples"],
                "seconds_trained": last["train_s"],
                "final_vx_rmse": last["vx_rmse"],
                "final_yaw_rate_rmse": last["yaw_rate_rmse"],
                "final_fall_rate": last["fall_rate"],
                "best_vx_rmse": min(r["vx_rmse"] for r in mine),
            }
        walked = [v for v in runs.values() if v["walked"]]
        out["learners"][learner] = {
            "runs": runs,
            "seeds": len(runs),
            "seeds_walked": len(walked),
            # medians over ALL seeds; a seed that never walked counts as "> its budget" so the median
            # is only reported when at least half the seeds walked
            "median_samples_to_walk": _median_with_censoring(runs, "samples_to_walk", "samples_trained"),
            "median_seconds_to_walk": _median_with_censoring(runs, "seconds_to_walk", "seconds_trained"),
            "max_samples_trained": max((v["samples_trained"] for v in runs.values()), default=0),
            "max_seconds_trained": max((v["seconds_trained"] for v in runs.values()), default=0.0),
        }
    d, p = out["learners"].get("diffsim"), out["learners"].get("ppo")
    if d and p:
        out["ratio_ppo_over_diffsim"] = {
            "samples": _ratio(p, d, "median_samples_to_walk", "max_samples_trained"),
            "seconds": _ratio(p, d, "median_seconds_to_walk", "max_seconds_trained"),
        }
    return out


def _median_with_censoring(runs: dict, key: str, budget_key: str) -> dict:
    """Median time-to-walk; runs that never walked count as +inf (censored at their budget)."""
    values = sorted(v[key] if v["walked"] else math.inf for v in runs.values())
    if not values:
        return {"value": None, "lower_bound": None}
    med = statistics.median(values) if all(math.isfinite(x) for x in values) else median_with_inf(values)
    if math.isfinite(med):
        return {"value": med, "lower_bound": None}
    return {"value": None, "lower_bound": max(v[budget_key] for v in runs.values())}


def median_with_inf(values: list[float]) -> float:
    """Median of sorted values that may hold +inf (a run that did not get there); +inf if it falls on one."""
    n = len(values)
    if n % 2:
        return values[n // 2]
    a, b = values[n // 2 - 1], values[n // 2]
    return (a + b) / 2 if math.isfinite(a) and math.isfinite(b) else math.inf


def _ratio(ppo: dict, diff: dict, key: str, budget_key: str) -> dict:
    dv, pv = diff[key]["value"], ppo[key]["value"]
    if dv is not None and pv is not None:
        return {"value": pv / dv, "note": "measured: median PPO / median diff-sim"}
    if dv is not None:
        return {
            "value": None,
            "lower_bound": ppo[key]["lower_bound"] / dv,
            "note": "PPO did not walk (median) within its budget: ratio is at least PPO budget / diff-sim median",
        }
    if pv is not None:
        return {
            "value": None,
            "upper_bound": pv / diff[key]["lower_bound"],
            "note": "diff-sim did not walk (median) within its budget: ratio is at most PPO median / diff-sim budget",
        }
    return {"value": None, "note": "neither learner walked (median) within its budget: no ratio"}


def _fmt_num(x, unit: str = "") -> str:
    if x is None:
        return "-"
    if unit == "s":
        return f"{x:.0f} s"
    return f"{x / 1e6:.2f} M" if x >= 1e5 else f"{x:.0f}"


def markdown(summary: dict, csv_name: str, png_name: str) -> str:
    meta = summary["meta"]
    stop_note = "a run stops at its first walking eval"
    lines = [
        "# Sample efficiency: differentiable simulation vs PPO",
        "",
        f"Command: `{meta['command']}`  ",
        f"Machine: {meta['machine']}  ",
        f"Date: {meta['date']}; budget {meta['budget_samples']:.0f} env samples per run"
        + (f" or {meta['max_train_s']:.0f} s of training" if meta.get("max_train_s") else "")
        + f", eval every {meta['eval_every_samples']:.0f}"
        + (
            f" (diff-sim: every {meta['diff_eval_every_samples']:.0f})"
            if meta.get("diff_eval_every_samples", meta["eval_every_samples"]) != meta["eval_every_samples"]
            else ""
        )
        + "; "
        + (stop_note if meta["stop_when_walking"] else "full budget")
        + "; "
        f"whole benchmark {meta.get('bench_wall_s', float('nan')) / 60:.0f} min wall-clock.",
        "",
        "| learner | seed | walks | samples to walk | train seconds to walk | samples trained | final vx RMSE | "
        "final yaw RMSE | final fall rate |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for learner, data in summary["learners"].items():
        for seed, r in data["runs"].items():
            never = "not reached within "
            samples = _fmt_num(r["samples_to_walk"]) if r["walked"] else never + _fmt_num(r["samples_trained"])
            seconds = (
                _fmt_num(r["seconds_to_walk"], "s") if r["walked"] else never + _fmt_num(r["seconds_trained"], "s")
            )
            lines.append(
                f"| {learner} | {seed} | {'yes' if r['walked'] else 'no'} | {samples} | {seconds} | "
                f"{_fmt_num(r['samples_trained'])} | {r['final_vx_rmse']:.3f} | {r['final_yaw_rate_rmse']:.3f} | "
                f"{r['final_fall_rate']:.2f} |"
            )
    lines += [
        "",
        "| learner | seeds walked | median samples to walk | median train seconds to walk |",
        "|---|---|---|---|",
    ]
    for learner, data in summary["learners"].items():
        ms, mt = data["median_samples_to_walk"], data["median_seconds_to_walk"]
        s = _fmt_num(ms["value"]) if ms["value"] is not None else f"> {_fmt_num(ms['lower_bound'])}"
        t = _fmt_num(mt["value"], "s") if mt["value"] is not None else f"> {_fmt_num(mt['lower_bound'], 's')}"
        lines.append(f"| {learner} | {data['seeds_walked']}/{data['seeds']} | {s} | {t} |")
    ratio = summary.get("ratio_ppo_over_diffsim")
    if ratio:
        lines += ["", "Ratio PPO / diff-sim to reach walking (same run, same machine):", ""]
        for what, r in ratio.items():
            if r.get("value") is not None:
                lines.append(f"- {what}: **{r['value']:.1f}×** ({r['note']})")
            elif r.get("lower_bound") is not None:
                lines.append(f"- {what}: **≥ {r['lower_bound']:.1f}×** ({r['note']})")
            elif r.get("upper_bound") is not None:
                lines.append(f"- {what}: **≤ {r['upper_bound']:.2f}×** ({r['note']})")
            else:
                lines.append(f"- {what}: n/a ({r['note']})")
    lines += ["", f"Per-evaluation data: `{csv_name}`. Figure: `{png_name}`.", ""]
    if meta.get("notes"):
        lines += [meta["notes"], ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"diffsim": "tab:blue", "ppo": "tab:orange"}
    labels = {"diffsim": "diff-sim (SHAC + surrogate)", "ppo": "PPO (rsl_rl)"}
    metrics = [
        ("vx_rmse", "vx RMSE (m/s)", 0.15),
        ("yaw_rate_rmse", "yaw-rate RMSE (rad/s)", 0.2),
        ("fall_rate", "fall rate", 0.0),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for col, (key, ylabel, thresh) in enumerate(metrics):
        for row, (xkey, xlabel, xscale) in enumerate(
            [("env_samples", "env samples (M)", 1e-6), ("train_s", "train wall-clock (s)", 1.0)]
        ):
            ax = axes[row, col]
            for learner in LEARNERS:
                seeds = sorted({r["seed"] for r in rows if r["learner"] == learner})
                for i, seed in enumerate(seeds):
                    pts = sorted(
                        (r for r in rows if r["learner"] == learner and r["seed"] == seed),
                        key=lambda r: r["env_samples"],
                    )
                    ax.plot(
                        [p[xkey] * xscale for p in pts], [p[key] for p in pts], "-o", ms=3, lw=1.2, alpha=0.8,
                        color=colors[learner], label=labels[learner] if i == 0 else None,
                    )  # fmt: skip
                    walked = [p for p in pts if p["walks"]]
                    if walked:
                        ax.plot(walked[0][xkey] * xscale, walked[0][key], "*", ms=12, color=colors[learner])
            if thresh > 0:
                ax.axhline(thresh, color="gray", ls="--", lw=1)
                ax.set_ylim(bottom=0)
            else:
                ax.set_ylim(-0.03, 1.03)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            if row == 0 and col == 0:
                ax.legend()
    fig.suptitle(
        "Go2 velocity tracking, eval on 32 held-out 10 s episodes (star: first 'walking' eval; dashed: threshold)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(csv_path: Path, meta: dict) -> dict:
    rows = read_rows(csv_path)
    summary = summarize(rows, meta)
    stem = csv_path.with_suffix("")
    png = stem.with_suffix(".png")
    plot(rows, png)
    stem.with_suffix(".json").write_text(json.dumps(summary, indent=2))
    stem.with_suffix(".md").write_text(markdown(summary, csv_path.name, png.name))
    return summary


# ------------------------------------------------------------------------------------------ main
@dataclasses.dataclass
class Plan:
    seeds: list[int]
    budget: int
    eval_every: int


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, 750 k samples per run, eval every 125 k")
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument("--budget", type=float, default=None, help="env samples per run (default 5e6; quick 7.5e5)")
    parser.add_argument(
        "--eval-every", type=float, default=None, help="env samples between evals (default 2.5e5; quick 1.25e5)"
    )
    parser.add_argument(
        "--diff-eval-every", type=float, default=None,
        help="env samples between evals of the diff-sim runs (default: --eval-every); a few-robot diff-sim run "
        "uses far fewer samples per second, so it needs finer evaluation to locate its first walk",
    )  # fmt: skip
    parser.add_argument(
        "--max-train-s", type=float, default=0.0,
        help="also end a run after this many seconds of training (0 = no limit); the report then says "
        "'not reached within' that many seconds",
    )  # fmt: skip
    parser.add_argument("--learners", nargs="+", choices=LEARNERS, default=list(LEARNERS))
    parser.add_argument(
        "--jobs", type=int, default=1, help="worker processes; runs (learner x seed) go side by side (default 1)"
    )
    parser.add_argument("--full-budget", action="store_true", help="keep training after a run first walks")
    parser.add_argument("--config", type=Path, default=None, help="trainer config YAML (default: shipped go2_trot)")
    parser.add_argument(
        "--diff", nargs="*", default=[], metavar="KEY=VALUE", help="overrides for the diff-sim run only"
    )
    parser.add_argument("--ppo-env", nargs="*", default=["env.num_envs=128"], metavar="KEY=VALUE",
                        help="trainer-config overrides for the PPO run only (default: env.num_envs=128)")  # fmt: skip
    parser.add_argument("--ppo", nargs="*", default=[], metavar="KEY=VALUE", help="PPO hyper-parameter overrides")
    parser.add_argument("--suffix", default=None, help="output name suffix (default: _quick with --quick)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS, help="where results go (default bench/results)")
    parser.add_argument("--report-only", action="store_true", help="rebuild json/md/png from an existing csv")
    parser.add_argument("--notes", default="", help="free text added to the markdown report")
    args = parser.parse_args(argv)

    plan = Plan(
        seeds=args.seeds or [0, 1, 2],
        budget=int(args.budget or (7.5e5 if args.quick else 5e6)),
        eval_every=int(args.eval_every or (1.25e5 if args.quick else 2.5e5)),
    )
    suffix = args.suffix if args.suffix is not None else ("_quick" if args.quick else "")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = args.out_dir / f"sample_efficiency{suffix}.csv"
    meta_path = args.out_dir / f".sample_efficiency{suffix}.meta.json"
    if args.report_only:
        leftovers = sorted(csv_path.parent.glob(f"{csv_path.stem}.*.part.csv"))
        if leftovers:  # a run that was stopped early: its per-learner files hold the data so far
            merge_parts(leftovers, csv_path)
        if not csv_path.is_file():
            print(f"error: {csv_path} not found; run the benchmark first", file=sys.stderr)
            return 2
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        meta["notes"] = args.notes or meta.get("notes", "")
        summary = report(csv_path, meta)
        print(json.dumps(summary.get("ratio_ppo_over_diffsim", {}), indent=2))
        return 0

    torch.set_num_threads(1)
    base_cfg = load_base_config(args.config)
    meta = {
        "command": shlex.join(["python", "bench/sample_efficiency.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": describe_machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seeds": plan.seeds,
        "budget_samples": plan.budget,
        "eval_every_samples": plan.eval_every,
        "diff_eval_every_samples": int(args.diff_eval_every or plan.eval_every),
        "max_train_s": args.max_train_s,
        "stop_when_walking": not args.full_budget,
        "jobs": args.jobs,
        "diff_overrides": args.diff,
        "ppo_env_overrides": args.ppo_env,
        "ppo_overrides": args.ppo,
        "notes": args.notes,
        "base_config": base_cfg,
    }
    meta_path.write_text(json.dumps(meta, indent=2))
    started = time.perf_counter()
    job = {
        "seeds": plan.seeds, "budget": plan.budget, "eval_every": plan.eval_every, "stop": not args.full_budget,
        "diff_eval_every": int(args.diff_eval_every or plan.eval_every), "max_train_s": args.max_train_s,
        "ppo_env": args.ppo_env, "ppo": args.ppo, "base_cfg": base_cfg,
        # side-by-side runs share the two cores: the diff-sim updates stay on one thread like everything else
        "diff": [*(["learner.update_threads=1"] if args.jobs > 1 else []), *args.diff],
    }  # fmt: skip
    # seed-major order: with fewer workers than runs, the two learners of a seed run side by side
    tasks = [(learner, seed) for seed in plan.seeds for learner in args.learners]
    parts = {t: csv_path.with_name(f"{csv_path.stem}.{t[0]}_{t[1]}.part.csv") for t in tasks}
    if args.jobs > 1:
        # Runs side by side in worker processes: both learners see the same (shared, noisy) machine load.
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        with ctx.Pool(min(args.jobs, len(tasks)), maxtasksperchild=1) as pool:
            pending = [
                pool.apply_async(run_learner, (learner, job, parts[(learner, seed)], [seed])) for learner, seed in tasks
            ]
            failures = []
            for (learner, seed), res in zip(tasks, pending, strict=True):
                try:
                    res.get()
                except Exception as e:  # keep the other runs' data
                    failures.append(f"{learner} seed {seed}: {type(e).__name__}: {e}")
        if failures:
            print("error: some runs failed; their partial data is kept:\n  " + "\n  ".join(failures))
    else:
        for learner, seed in tasks:
            run_learner(learner, job, parts[(learner, seed)], [seed])
    merge_parts(list(parts.values()), csv_path)
    meta["bench_wall_s"] = round(time.perf_counter() - started, 1)
    meta_path.write_text(json.dumps(meta, indent=2))
    summary = report(csv_path, meta)
    print(Path(csv_path.with_suffix(".md")).read_text())
    return 0 if summary else 1


def run_learner(learner: str, job: dict, csv_path: Path, seeds: list[int]) -> None:
    """Train and evaluate one learner on `seeds`, one row per evaluation into `csv_path`."""
    torch.set_num_threads(1)
    with open(csv_path, "w", newline="") as f, tempfile.TemporaryDirectory(prefix="sample_eff_") as tmp:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for seed in seeds:
            if learner == "diffsim":
                run = DiffSimRun(seed, job["diff"], job["base_cfg"], Path(tmp) / f"diffsim_{seed}")
            else:
                run = PPORun(seed, job["ppo_env"], job["ppo"], job["base_cfg"])
            eval_every = job["diff_eval_every"] if learner == "diffsim" else job["eval_every"]
            try:
                out = _Flushing(writer, f)
                run_one(run, seed, job["budget"], eval_every, job["stop"], out, Path(tmp), job["max_train_s"])
            finally:
                run.close()


def merge_parts(parts: list[Path], csv_path: Path) -> None:
    rows = []
    for part in parts:
        if part.is_file():
            with open(part) as f:
                rows += list(csv.DictReader(f))
            part.unlink()
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


class _Flushing:
    """csv writer that flushes every row, so a long run killed midway still leaves its data."""

    def __init__(self, writer: csv.DictWriter, f):
        self.writer, self.f = writer, f

    def writerow(self, row: dict) -> None:
        self.writer.writerow(row)
        self.f.flush()


if __name__ == "__main__":
    sys.exit(main())
