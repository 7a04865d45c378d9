"""Trainer env steps per second as a fraction of raw batched MuJoCo stepping, against the number of robots.

    python bench/trainer_throughput.py [--num-envs 64 128 256 512] [--iterations 20] [overrides...]

For each robot count, a few SHAC iterations of the trainer (shipped config + overrides) are timed;
the rate counts everything an iteration does: MuJoCo stepping, the surrogate, rewards, actor
backward, critic updates. Warm-up iterations are not timed. Two raw rates come from the same
process (same model, robots and MuJoCo threads):
- the trainer's own workload: every physics call of the timed iterations is recorded and stepped
  again back to back with nothing else running (`PhysicsWorkload`); the headline fraction;
- standing robots (fixed standing targets), right before and right after; cheaper, since a
  standing robot's contacts barely change. Reported for reference.
The rollout runs torch on one thread next to MuJoCo's workers; the updates use `learner.update_threads`.

Writes bench/results/trainer_throughput.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from surrogait_train.config import load_config
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402
from mujoco_throughput import RATE_HEADER, PhysicsWorkload, rate_cells, rates_vs_raw, raw_control_steps_per_s  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def measure(num_envs: int, iterations: int, overrides: list[str], work: Path) -> dict:
    cfg = load_config(None, [*overrides, f"env.num_envs={num_envs}"])
    raw_before = raw_control_steps_per_s(cfg.env, seconds=3.0)
    trainer = Trainer(cfg, work / f"n{num_envs}")
    trainer.train(max_iterations=3, progress=False)  # warm-up: allocations, first normaliser updates
    workload = PhysicsWorkload(trainer.env.physics, max_records=iterations * cfg.learner.horizon)
    start_steps, start = trainer.env_steps, time.perf_counter()
    trainer.train(max_iterations=3 + iterations, progress=False)
    trainer_rate = (trainer.env_steps - start_steps) / (time.perf_counter() - start)
    workload_raw = workload.replay_steps_per_s()
    trainer.env.close()
    raw_after = raw_control_steps_per_s(cfg.env, seconds=3.0)
    return {
        "num_envs": num_envs,
        "iterations": iterations,
        **rates_vs_raw(trainer_rate, workload_raw, raw_before, raw_after),
    }


def markdown(report: dict) -> str:
    lines = [
        "# Trainer throughput vs raw batched MuJoCo",
        "",
        f"Machine: {report['machine']}; load average at start {report['loadavg_start']}. "
        f"Torch {report['torch']}, MuJoCo on {report['mujoco_threads']} threads.",
        "Raw (workload): the trainer's own physics calls stepped again bare. Raw (standing): standing robots.",
        "",
        f"| robots | {RATE_HEADER} |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        lines.append(f"| {r['num_envs']} | {rate_cells(r)} |")
    lines += ["", f"Command: `{report['command']}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--out", default=str(RESULTS / "trainer_throughput"))
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="trainer_throughput_"))
    report = {
        "machine": describe_machine(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "torch": torch.__version__,
        "mujoco_threads": load_config(None, args.overrides).env.num_threads,
        "command": " ".join(["python", *sys.argv]),
        "runs": [],
    }
    for n in args.num_envs:
        report["runs"].append(measure(n, args.iterations, args.overrides, work))
        print(report["runs"][-1], flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
