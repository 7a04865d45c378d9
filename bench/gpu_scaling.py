"""Raw MJX physics, the host-roundtrip trainer and the device-resident trainer against the number of robots, and
the time to walk, on whatever device there is: a GPU where torch and JAX find one, else the CPU (then the report
says so: not a GPU result).

    python bench/gpu_scaling.py [--counts 1024 4096 16384 32768] [--host-counts 4096] [--iterations 3] [overrides...]
    python bench/gpu_scaling.py --walk-only --scaling RESULTS/gpu_scaling.json [--walk-count N] --walk-budget-s 120

Per robot count in `--counts`, in one process, on the shipped config with `env.backend=mjx env.device=DEVICE`
(the device-resident environment, surrogait_train/device_env.py, with SHAC's learner on the same device):
- raw: bare MJX stepping of standing robots with the trainer's own jitted step, arrays staying on the device
  (`MjxPhysics.resident_step`); physics steps/s (robots x substeps per second), the first call (the compile, or a
  load from JAX's compile cache) apart;
- resident trainer: SHAC iterations (`--warmup` untimed, then `--iterations` timed); the physics steps its
  rollouts asked for per second, everything an iteration does included (rollout, surrogate, backward, critic);
- its share of raw (issue 38's goal: >= 50 % at the largest count).
Per robot count in `--host-counts`: the host-roundtrip trainer (`env.backend=mjx`, env.device empty: the robots'
states go to JAX's device and back every control step, torch on the CPU with `--host-threads` threads), and the
raw rate of that path (`MjxPhysics.step`, host arrays in and out) for reference.

`--walk-only`: trains at `--walk-count` robots (0: the resident count with the highest trainer rate in
`--scaling`) for at most `--walk-budget-s` seconds of training, exporting and evaluating the policy every
`--eval-every-s` (the eval's definition of WALKS: surrogait_train.evaluate, `--walk-episodes` episodes of 10 s
on the CPU, not counted as training time), and stops at the first evaluation that walks (issue 38's goal:
walking within 120 s of training).

Writes OUT/NAME.json after every count and evaluation (a killed run keeps what it finished) and OUT/NAME.md at
the end; the walk run's metrics.csv is copied to OUT/NAME_metrics.csv.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

from surrogait_train.config import load_config
from surrogait_train.device_env import DeviceLocomotionEnv, to_jax
from surrogait_train.evaluate import evaluate_policy
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402
from provenance import provenance  # noqa: E402

RESULTS = Path(__file__).parent / "results"
MJX = ["env.backend=mjx"]


def jax_device() -> str:
    import jax

    import surrogait_train.mjx_physics  # noqa: F401  (starts JAX's CPU backend safely: see its one-thread pool)

    device = jax.devices()[0]
    return f"{device.platform}: {getattr(device, 'device_kind', str(device))} (JAX {jax.__version__})"


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def raw_resident(env: DeviceLocomotionEnv, seconds: float) -> dict:
    """Standing robots stepped by the environment's own jitted step, nothing leaving the device."""
    n, physics = env.num_envs, env.physics
    targets = to_jax(env._default_targets.expand(n, -1).contiguous())
    delay = to_jax(torch.zeros(n, dtype=torch.int32, device=env.device))
    variation = to_jax(env.variation_params()) if env._varied else None  # the trainer's own path
    course = to_jax(env._course().to(torch.int32)) if env.mixed_terrain else None
    qpos, qvel = to_jax(env.qpos.contiguous()), to_jax(env.qvel.contiguous())
    start = time.perf_counter()
    qpos, qvel, _ = physics.resident_step(qpos, qvel, targets, targets, delay, variation, course)
    qpos.block_until_ready()
    first_step_s = time.perf_counter() - start
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:  # calls queue up on the device; the last wait counts them all
        qpos, qvel, _ = physics.resident_step(qpos, qvel, targets, targets, delay, variation, course)
        calls += 1
    qpos.block_until_ready()
    rate = calls * n * env.cfg.substeps / (time.perf_counter() - start)
    return {"raw_physics_steps_per_s": rate, "raw_first_step_s": round(first_step_s, 1)}


def raw_host(env, seconds: float) -> dict:
    """The host path's bare stepping: state vectors from the host to JAX's device and back every control step."""
    import numpy as np

    n = env.num_envs
    targets = np.tile(env.spec.default_joint_pos, (n, 1))
    start = time.perf_counter()
    state, _ = env.physics.step(env._mj_state.copy(), targets)
    first_step_s = time.perf_counter() - start
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, _ = env.physics.step(state, targets)
        calls += 1
    rate = calls * n * env.cfg.substeps / (time.perf_counter() - start)
    return {"host_raw_physics_steps_per_s": rate, "host_raw_first_step_s": round(first_step_s, 1)}


def timed_iterations(trainer: Trainer, warmup: int, iterations: int, prefix: str) -> dict:
    substeps = trainer.cfg.env.substeps
    start = time.perf_counter()
    trainer.train(max_iterations=trainer.iteration + warmup, progress=False)  # the first allocations, compiles
    synchronize(trainer.device)
    warmup_s = time.perf_counter() - start
    start_steps, start = trainer.env_steps, time.perf_counter()
    trainer.train(max_iterations=trainer.iteration + iterations, progress=False)
    synchronize(trainer.device)
    elapsed = time.perf_counter() - start
    steps = trainer.env_steps - start_steps
    return {f"{prefix}_warmup_s": round(warmup_s, 1), f"{prefix}_iteration_s": round(elapsed / iterations, 3),
            f"{prefix}_trainer_physics_steps_per_s": steps * substeps / elapsed}


def resident_row(overrides: list[str], n: int, args, work: Path) -> dict:
    cfg = load_config(None, [*overrides, f"env.num_envs={n}", f"env.device={args.device}"])
    trainer = Trainer(cfg, work / f"resident_n{n}")
    try:
        row = {"num_envs": n, **raw_resident(trainer.env, args.raw_seconds)}
        row.update(timed_iterations(trainer, args.warmup, args.iterations, "resident"))
    finally:
        trainer.env.close()
    row["resident_share_of_raw"] = row["resident_trainer_physics_steps_per_s"] / row["raw_physics_steps_per_s"]
    return row


def host_row(overrides: list[str], n: int, args, work: Path) -> dict:
    threads = [f"torch_threads={args.host_threads}", f"learner.update_threads={args.host_threads}"]
    cfg = load_config(None, [*overrides, f"env.num_envs={n}", "env.device=''", *threads])
    trainer = Trainer(cfg, work / f"host_n{n}")
    try:
        row = raw_host(trainer.env, args.raw_seconds)
        row.update(timed_iterations(trainer, args.warmup, args.iterations, "host"))
    finally:
        trainer.env.close()
    return row


def time_to_walk(overrides: list[str], n: int, args, work: Path, report: dict, save) -> dict:
    """Train on the device at `n` robots, evaluating every `eval_every_s` of training; stop at the first walk."""
    cfg = load_config(None, [*overrides, f"env.num_envs={n}", f"env.device={args.device}"])
    run_dir = work / f"walk_n{n}"
    trainer = Trainer(cfg, run_dir)
    walk = {"num_envs": n, "budget_s": args.walk_budget_s, "eval_every_s": args.eval_every_s,
            "episodes": args.walk_episodes, "first_walk": None, "evaluations": []}
    report["time_to_walk"] = walk
    next_eval = args.eval_every_s

    def evaluate_now() -> dict:
        t0 = time.perf_counter()
        path = export_onnx(trainer.actor, trainer.env.contract, run_dir / f"eval_{trainer.iteration}.onnx")
        result = evaluate_policy(path, num_episodes=args.walk_episodes, episode_s=10.0, num_threads=args.eval_threads)
        row = {"train_s": round(trainer.wall_s, 1), "env_samples": trainer.env_steps, "iteration": trainer.iteration,
               "fall_rate": result.fall_rate, "vx_rmse": round(result.vx_rmse, 4),
               "yaw_rate_rmse": round(result.yaw_rate_rmse, 4), "walks": result.walks,
               "eval_s": round(time.perf_counter() - t0, 1)}
        print(f"[walk n={n}] eval {row}", flush=True)
        walk["evaluations"].append(row)
        if row["walks"] and walk["first_walk"] is None:
            walk["first_walk"] = row
        save()
        return row

    def callback(t: Trainer, _stats) -> bool:
        nonlocal next_eval
        if t.iteration == 1:
            walk["first_iteration_s"] = round(t.wall_s, 1)  # with the compile (or its load from the cache)
        if t.wall_s >= next_eval or t.wall_s >= args.walk_budget_s:
            next_eval += args.eval_every_s
            return evaluate_now()["walks"] or t.wall_s >= args.walk_budget_s
        return False

    try:
        trainer.train(max_iterations=10**9, budget_s=0, progress=False, callback=callback)
    finally:
        trainer.env.close()
    walk.update(trained_s=round(trainer.wall_s, 1), iterations=trainer.iteration, env_samples=trainer.env_steps)
    if (run_dir / "metrics.csv").is_file():
        shutil.copy(run_dir / "metrics.csv", Path(args.out) / f"{args.name}_metrics.csv")
    return walk


def markdown(report: dict) -> str:
    gpu = report["device"].startswith("gpu")
    title = "Physics and trainer throughput" if report["runs"] else "Time to walk"
    lines = [
        f"# {title} on the MJX backend",
        "",
        f"Device: {report['device']}; torch {report['torch']} on {report['torch_device']}. "
        f"Machine: {report['machine']}.",
        "" if gpu else "**Not a GPU result**: JAX found no GPU on this machine; these figures only show that the "
                       "script and both trainers run.",
    ]
    if report["runs"]:
        lines += [
            "",
            "Physics steps/s = robots x physics substeps per second. Raw: standing robots, the trainer's own jitted "
            "step, nothing leaving the device. Resident: the device-resident trainer (env.device), everything an "
            "iteration does included. Host: the host-roundtrip trainer (the robots' states to the device and back "
            "every control step, torch on the CPU).",
            "",
            "| robots | raw physics steps/s | resident trainer steps/s | resident / raw | s per iteration "
            "| host trainer steps/s | host raw steps/s | first raw call s |",
            "|---|---|---|---|---|---|---|---|",
        ]
    fmt = lambda r, k, f="{:,.0f}": f.format(r[k]) if k in r else "-"  # noqa: E731
    for r in report["runs"]:
        cells = [fmt(r, "raw_physics_steps_per_s"), fmt(r, "resident_trainer_physics_steps_per_s"),
                 fmt(r, "resident_share_of_raw", "{:.2f}"), fmt(r, "resident_iteration_s", "{}"),
                 fmt(r, "host_trainer_physics_steps_per_s"), fmt(r, "host_raw_physics_steps_per_s"),
                 fmt(r, "raw_first_step_s", "{}")]
        lines.append(f"| {r['num_envs']} | " + " | ".join(cells) + " |")
    walk = report.get("time_to_walk")
    if walk:
        first = walk["first_walk"]
        lines += ["", f"Time to walk with {walk['num_envs']:,} robots on the device (evaluated every "
                  f"{walk['eval_every_s']:g} s of training, {walk['episodes']} episodes of 10 s, the eval's WALKS): "
                  + (f"**walks after {first['train_s']} s of training** ({first['env_samples']:,} samples, "
                     f"iteration {first['iteration']})" if first
                     else f"did not walk within {walk['budget_s']:g} s of training"),
                  "", "| train s | iteration | samples | fall rate | vx RMSE | yaw-rate RMSE | walks |",
                  "|---|---|---|---|---|---|---|"]
        for e in walk["evaluations"]:
            lines.append(f"| {e['train_s']} | {e['iteration']} | {e['env_samples']:,} | {e['fall_rate']:.3f} "
                         f"| {e['vx_rmse']} | {e['yaw_rate_rmse']} | {e['walks']} |")
        if "first_iteration_s" in walk:
            lines += ["", f"The first iteration took {walk['first_iteration_s']} s (the physics' compile or its load "
                          "from the compile cache); it counts as training time."]
    lines += ["", f"Command: `{report['command']}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="*", default=[1024, 4096, 16384, 32768],
                        help="robot counts of the raw and device-resident trainer measurements")
    parser.add_argument("--host-counts", type=int, nargs="*", default=[],
                        help="robot counts of the host-roundtrip trainer (slow on large counts)")
    parser.add_argument("--iterations", type=int, default=3, help="timed trainer iterations per count")
    parser.add_argument("--warmup", type=int, default=1, help="untimed trainer iterations before (compile, allocate)")
    parser.add_argument("--raw-seconds", type=float, default=5.0)
    parser.add_argument("--host-threads", type=int, default=min(8, os.cpu_count() or 1),
                        help="torch threads of the host-roundtrip trainer")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="env.device of the resident trainer (default: cuda where there is one)")
    parser.add_argument("--walk-only", action="store_true", help="only the time-to-walk run")
    parser.add_argument("--walk-count", type=int, default=0,
                        help="robots of the walk run (0: the fastest resident count in --scaling)")
    parser.add_argument("--scaling", help="a gpu_scaling JSON whose fastest resident count --walk-only takes")
    parser.add_argument("--walk-budget-s", type=float, default=120.0)
    parser.add_argument("--eval-every-s", type=float, default=30.0)
    parser.add_argument("--walk-episodes", type=int, default=32)
    parser.add_argument("--eval-threads", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--name", default="gpu_scaling")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. learner.critic_minibatches=16")
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = [*MJX, *args.overrides]
    work = Path(tempfile.mkdtemp(prefix="gpu_scaling_"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"benchmark": "gpu_scaling", "device": jax_device(), "torch": torch.__version__,
              "torch_device": args.device, "machine": describe_machine(), "overrides": overrides,
              "command": " ".join(["python", *sys.argv]), "runs": [], **provenance()}

    def save() -> None:
        (out / f"{args.name}.json").write_text(json.dumps(report, indent=2))

    if args.walk_only:
        n = args.walk_count
        if not n:
            runs = json.loads(Path(args.scaling).read_text())["runs"] if args.scaling else []
            timed = [r for r in runs if "resident_trainer_physics_steps_per_s" in r]
            if not timed:
                raise SystemExit("--walk-only needs --walk-count or a --scaling report with resident trainer rates")
            n = max(timed, key=lambda r: r["resident_trainer_physics_steps_per_s"])["num_envs"]
        time_to_walk(overrides, n, args, work, report, save)
    else:
        rows: dict[int, dict] = {}
        for n in args.counts:
            rows[n] = resident_row(overrides, n, args, work)
            report["runs"] = [rows[k] for k in sorted(rows)]
            print(rows[n], flush=True)
            save()
        for n in args.host_counts:
            rows.setdefault(n, {"num_envs": n}).update(host_row(overrides, n, args, work))
            report["runs"] = [rows[k] for k in sorted(rows)]
            print(rows[n], flush=True)
            save()
    save()
    (out / f"{args.name}.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
