"""Is a gait's yaw-rate error its turning, its sway within a step, or a slower wander? (issue 34)

    python bench/investigations/pace_yaw_wander.py [POLICY.onnx ...] [--gait pace] [--episodes 16] [--reference-only]

Each policy is judged twice through the eval path (PolicyRunner + onnxruntime on MuJoCo, the eval's held-out seed,
8 s episodes): at the eval's commands (vx, vy and yaw rate), and at the same forward speeds with vy and the yaw
rate zero. For each, the RMSEs of the body's instantaneous velocities (what WALKS judges) and of their averages
over each gait period (the eval's `*_gait_avg`, information only). A yaw error that stays when nothing asks for a
turn is not turn tracking; one that stays after averaging over a period is slower than the step: a wander.
`--reference-only` first judges the gait's clock-driven reference alone (`surrogait_train.reference`: a residual
policy of the shipped config whose network answers zero), exported to runs/pace_yaw_wander/reference_<gait>.onnx.
Writes bench/results/pace_yaw_wander.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from surrogait_train.config import load_config
from surrogait_train.evaluate import command_set, evaluate_policy
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"


def reference_only(gait: str, out: Path, overrides: list[str] = ()) -> Path:
    """The gait's reference as a policy: the shipped config's residual actor with its last layer zeroed
    (`overrides`: config overrides of the reference, e.g. its balance step gains)."""
    trainer = Trainer(load_config(None, [f"env.gait={gait}", "learner.residual_reference=true", "env.num_envs=1",
                                         *overrides]), out.parent / "run")
    with torch.no_grad():
        trainer.actor.net[-1].weight.zero_()
        trainer.actor.net[-1].bias.zero_()
    export_onnx(trainer.actor, trainer.env.contract, out, trainer.provenance())
    trainer.env.close()
    return out


def judge(policy: Path, gait: str, episodes: int) -> list[dict]:
    rows = []
    straight = command_set(episodes)
    straight[:, 1:] = 0.0
    for name, commands in (("eval commands", None), ("vy = yaw rate = 0", straight)):
        r = evaluate_policy(policy, num_episodes=episodes, episode_s=8.0, gait=gait, commands=commands)
        rows.append({"policy": policy.name, "commands": name, "falls": int(sum(r.fell)), "episodes": r.episodes,
                     "vx_rmse": round(r.vx_rmse, 3), "vy_rmse": round(r.vy_rmse, 3),
                     "yaw_rate_rmse": round(r.yaw_rate_rmse, 3), "vx_rmse_gait_avg": round(r.vx_rmse_gait_avg, 3),
                     "yaw_rate_rmse_gait_avg": round(r.yaw_rate_rmse_gait_avg, 3)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policies", nargs="*", type=Path)
    parser.add_argument("--reference-only", action="store_true", help="judge the gait's reference alone first")
    parser.add_argument("--reference-override", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for --reference-only (repeatable), e.g. env.balance_step_roll_m=0.1")
    parser.add_argument("--gait", default="pace")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--note", default="", help="where the policies come from, for the results page")
    args = parser.parse_args()
    policies = list(args.policies)
    if args.reference_only:
        out = Path("runs/pace_yaw_wander") / f"reference_{args.gait}.onnx"
        policies.insert(0, reference_only(args.gait, out, args.reference_override))
    rows = [row for p in policies for row in judge(p, args.gait, args.episodes)]
    machine = describe_machine()
    (RESULTS / "pace_yaw_wander.json").write_text(json.dumps({"gait": args.gait, "note": args.note, "rows": rows,
                                                              "machine": machine}, indent=1))
    lines = [f"# Where a {args.gait}'s yaw-rate error comes from (bench/investigations/pace_yaw_wander.py)", "",
             f"Machine: {machine}. {args.episodes} episodes x 8 s per row, the eval's held-out seed. RMSEs in m/s "
             "and rad/s; *period avg*: of the velocities averaged over each gait period.", "",
             *([args.note, ""] if args.note else []),
             "| policy | commands | falls | vx | vy | yaw rate | vx, period avg | yaw rate, period avg |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['policy']} | {r['commands']} | {r['falls']}/{r['episodes']} | {r['vx_rmse']} | {r['vy_rmse']} | "
              f"{r['yaw_rate_rmse']} | {r['vx_rmse_gait_avg']} | {r['yaw_rate_rmse_gait_avg']} |" for r in rows]
    (RESULTS / "pace_yaw_wander.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
