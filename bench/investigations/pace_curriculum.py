"""The trot-to-pace curriculum of training/README.md ("Where it stands"): stages that shift the rear legs' clocks.

    python bench/investigations/pace_curriculum.py --start RUN/checkpoint.pt [--deltas 0.1 0.2 0.3 0.4 0.5]
                                    [--iterations 150] [--period 0.35] [--duty 0.5]
                                    [--work-dir runs/pace_curriculum] [overrides...]

A stage walks the gait whose phase offsets (SDK leg order FR, FL, RR, RL, cycles) are the trot's
(0, 0.5, 0.5, 0) with the rear pair shifted by delta: delta 0 is the trot, 0.5 the pace, and in between a
four-beat lateral-sequence walk. Each stage is `surrogait-train train --init-from` the previous stage's
checkpoint (the first from `--start`, a trot run's), `--iterations` iterations at a constant actor learning rate
of 5e-4, with `overrides` added (e.g. `learner.horizon=32`, `surrogate.variant=gauss`,
"env.lin_vel_x=[0.0,0.5]"). The in-between gaits are not in surrogait_train.gaits.GAITS (none is one of the
issue's gaits), so this script adds them to it for its own process; each exported policy's contract carries
its gait, so it evaluates anywhere. Every stage's policy is judged by `evaluate_policy` on 16 commands spread
over 0-0.5 m/s and 16 over 0.3-1.0 m/s (8 s episodes).

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

from surrogait_core.policy.contract import GaitSpec  # noqa: E402
from surrogait_train import cli, gaits  # noqa: E402
from surrogait_train.evaluate import command_set, evaluate_policy  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results
SPEED_RANGES = ((0.0, 0.5), (0.3, 1.0))  # m/s


def shifted_trot(delta: float, period_s: float, duty: float) -> GaitSpec:
    name = f"trot_rear{round(delta * 100):02d}_p{round(period_s * 100)}_d{round(duty * 100)}"
    return GaitSpec(name, period_s=period_s, duty_factor=duty,
                    phase_offsets=(0.0, 0.5, (0.5 + delta) % 1.0, delta % 1.0), swing_height_m=0.08)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", required=True, help="checkpoint of the trot to start from")
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.4, 0.5])
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--period", type=float, default=0.35)
    parser.add_argument("--duty", type=float, default=0.5)
    parser.add_argument("--work-dir", default="runs/pace_curriculum")
    parser.add_argument("--name", default="pace_curriculum")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    if not Path(args.start).is_file():
        parser.error(f"--start: checkpoint {args.start} not found (train a trot first: surrogait-train train)")
    machine = describe_machine()
    stages, previous = [], args.start
    for delta in args.deltas:
        gait = shifted_trot(delta, args.period, args.duty)
        gaits.GAITS[gait.name] = gait  # this process only (module docstring)
        run = Path(args.work_dir) / gait.name
        code = cli.main(["train", "--run-dir", str(run), "--no-progress", "--export", "--init-from", previous,
                         f"env.gait={gait.name}", f"max_iterations={args.iterations}", "learner.actor_lr=5e-4",
                         "learner.lr_decay=false", *args.overrides])
        if code:
            return code
        previous = str(run / "checkpoint.pt")
        row = {"delta": delta, "gait": gait.name, "policy": str(run / "policy.onnx")}
        for lo, hi in SPEED_RANGES:
            r = evaluate_policy(run / "policy.onnx", num_episodes=16, episode_s=8.0,
                                commands=command_set(16, vx=(lo, hi)))
            row[f"vx_{lo:g}_{hi:g}"] = {"falls": int(sum(r.fell)), "vx_rmse": r.vx_rmse}
        stages.append(row)
        print(json.dumps(row), flush=True)
    command = "python bench/investigations/pace_curriculum.py " + " ".join(sys.argv[1:])
    report = {"machine": machine, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": command,
              "period_s": args.period, "duty_factor": args.duty, "iterations": args.iterations,
              "overrides": args.overrides, "stages": stages}
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    header = " | ".join(f"falls/16 · vx RMSE, {lo:g}-{hi:g} m/s" for lo, hi in SPEED_RANGES)
    lines = [f"# Trot-to-pace curriculum ({args.name})", "",
             f"Machine: {machine}. Date: {report['date']}. Command: `{command}`.", "",
             f"| delta (rear pair's shift, cycles; 0.5 = pace) | {header} |", "|---|---|---|"]
    for row in stages:
        cells = [f"{row[f'vx_{lo:g}_{hi:g}']['falls']} · {row[f'vx_{lo:g}_{hi:g}']['vx_rmse']:.3f}"
                 for lo, hi in SPEED_RANGES]
        lines.append(f"| {row['delta']:g} | " + " | ".join(cells) + " |")
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
