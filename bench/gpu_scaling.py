"""Trainer and raw physics throughput against the number of robots on the MJX backend (`env.backend=mjx`), on
whatever device JAX has: a GPU where one is present, else the CPU (then it says so: not a GPU result).

    python bench/gpu_scaling.py [--counts 1024 2048 ... 32768] [--iterations 5] [--time-to-walk 600] [overrides...]

Per robot count, in one process:
- raw: bare MJX stepping of standing robots (fixed standing targets), after the compile; physics steps/s;
- trainer: SHAC iterations of the shipped config with the MJX backend (warm-up iterations, which compile, are not
  timed); the physics steps its rollouts asked for per second, everything an iteration does included;
- the trainer's share of the raw rate (issue 18's goal: >= 50 % at the largest count).
With `--time-to-walk S`: one run at the largest count, evaluated every 30 s of training with the eval's
definition of walking (bench/train_to_walk.py's `run_one`), up to S seconds.

Writes bench/results/<name>.{json,md}; the machine line names the JAX device.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).parent / "results"
MJX = ["env.backend=mjx"]


def jax_device() -> str:
    import jax

    import surrogait_train.mjx_physics  # noqa: F401  (starts JAX's CPU backend safely: see its one-thread pool)

    device = jax.devices()[0]
    return f"{device.platform}: {getattr(device, 'device_kind', str(device))} (JAX {jax.__version__})"


def raw_physics(overrides: list[str], num_envs: int, seconds: float) -> dict:
    """Bare MJX stepping of standing robots: physics steps per second (robots x substeps), compile excluded, and
    the first step's seconds (the compile, or a load from JAX's compile cache)."""
    cfg = load_config(None, [*overrides, f"env.num_envs={num_envs}"])
    env = LocomotionEnv(cfg.env, seed=0)
    env.reset(seed=0)
    targets = np.tile(env.spec.default_joint_pos, (num_envs, 1))
    start = time.perf_counter()
    state, _ = env.physics.step(env._mj_state.copy(), targets)  # compiles
    first_step_s = time.perf_counter() - start
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, _ = env.physics.step(state, targets)
        calls += 1
    rate = calls * num_envs * cfg.env.substeps / (time.perf_counter() - start)
    env.close()
    return {"raw_physics_steps_per_s": rate, "raw_first_step_s": round(first_step_s, 1)}


def trainer_physics_steps_per_s(overrides: list[str], num_envs: int, iterations: int, work: Path) -> dict:
    cfg = load_config(None, [*overrides, f"env.num_envs={num_envs}"])
    trainer = Trainer(cfg, work / f"n{num_envs}")
    start = time.perf_counter()
    trainer.train(max_iterations=2, progress=False)  # compiles the physics, first allocations
    warmup_s = time.perf_counter() - start
    start_steps, start = trainer.env_steps, time.perf_counter()
    trainer.train(max_iterations=2 + iterations, progress=False)
    elapsed = time.perf_counter() - start
    trainer.env.close()
    env_steps = trainer.env_steps - start_steps
    return {"warmup_s": round(warmup_s, 1), "iteration_s": round(elapsed / iterations, 3),
            "trainer_physics_steps_per_s": env_steps * cfg.env.substeps / elapsed}


def markdown(report: dict) -> str:
    gpu = report["device"].startswith("gpu")
    lines = [
        "# Physics and trainer throughput on the MJX backend",
        "",
        f"Device: {report['device']}. Machine: {report['machine']}.",
        "" if gpu else "**Not a GPU result**: JAX found no GPU on this machine; these figures only show that the "
                       "script and the backend run.",
        "",
        "| robots | raw physics steps/s | trainer physics steps/s | trainer / raw | s per iteration | warm-up s |",
        "|---|---|---|---|---|---|",
    ]
    if report.get("raw_only"):
        lines[-2:] = ["| robots | raw physics steps/s | first step (compile) s |", "|---|---|---|"]
    for r in report["runs"]:
        if report.get("raw_only"):
            lines.append(f"| {r['num_envs']} | {r['raw_physics_steps_per_s']:,.0f} | {r['raw_first_step_s']} |")
            continue
        lines.append(f"| {r['num_envs']} | {r['raw_physics_steps_per_s']:,.0f} "
                     f"| {r['trainer_physics_steps_per_s']:,.0f} | {r['trainer_share_of_raw']:.2f} "
                     f"| {r['iteration_s']} | {r['warmup_s']} |")
    walk = report.get("time_to_walk")
    if walk:
        first = walk["first_walk"]
        lines += ["", f"Time to walk with {walk['num_envs']} robots: "
                  + (f"walks after {first['train_s']} s of training ({first['env_samples']:,} samples)" if first
                     else f"did not walk within {walk['budget_s']} s")]
    lines += ["", f"Command: `{report['command']}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384, 32768])
    parser.add_argument("--iterations", type=int, default=5, help="timed trainer iterations per count")
    parser.add_argument("--raw-seconds", type=float, default=5.0)
    parser.add_argument("--time-to-walk", type=float, default=0.0,
                        help="training budget (s) of a time-to-walk run; 0: none")
    parser.add_argument("--raw-only", action="store_true", help="bare physics only, no trainer")
    parser.add_argument("--walk-only", action="store_true",
                        help="only the time-to-walk run, at --walk-count robots (0: the fastest count of --scaling)")
    parser.add_argument("--walk-count", type=int, default=0)
    parser.add_argument("--scaling", help="a gpu_scaling JSON whose fastest trainer count --walk-only takes")
    parser.add_argument("--name", default="gpu_scaling")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. learner.critic_minibatches=16")
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = [*MJX, *args.overrides]
    work = Path(tempfile.mkdtemp(prefix="gpu_scaling_"))
    report = {"benchmark": "gpu_scaling", "device": jax_device(), "machine": describe_machine(),
              "torch": torch.__version__, "overrides": overrides, "command": " ".join(["python", *sys.argv]),
              "raw_only": args.raw_only, "runs": []}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for n in [] if args.walk_only else args.counts:
        row = {"num_envs": n, **raw_physics(overrides, n, args.raw_seconds)}
        if not args.raw_only:
            row.update(trainer_physics_steps_per_s(overrides, n, args.iterations, work))
            row["trainer_share_of_raw"] = row["trainer_physics_steps_per_s"] / row["raw_physics_steps_per_s"]
        report["runs"].append(row)
        print(row, flush=True)
        (out / f"{args.name}.json").write_text(json.dumps(report, indent=2))  # a killed run keeps its counts
    if args.time_to_walk > 0:
        from train_to_walk import run_one

        n = args.walk_count or max(args.counts)
        if args.walk_only and not args.walk_count and args.scaling:
            runs = json.loads(Path(args.scaling).read_text())["runs"]
            n = max(runs, key=lambda r: r["trainer_physics_steps_per_s"])["num_envs"]
        run = run_one(f"walk_n{n}", [*overrides, f"env.num_envs={n}"], args.time_to_walk, 30.0, 32, work)
        report["time_to_walk"] = {"num_envs": n, "budget_s": args.time_to_walk, "first_walk": run["first_walk"],
                                  "evaluations": run["evaluations"]}
    (out / f"{args.name}.json").write_text(json.dumps(report, indent=2))
    (out / f"{args.name}.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
