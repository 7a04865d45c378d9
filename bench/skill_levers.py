"""Which levers make the differentiable trainer learn the skills it could not (issue 34): one row per lever.

    python bench/skill_levers.py --row NAME [--budget-s 480] [--iterations N] [--seed S] [--init-from CKPT]
        [--terrains rough slope] [--episodes 16] [--out bench/results/skill_levers] -- overrides...

A row trains the differentiable trainer (SHAC through the surrogate) from the shipped config
(`configs/go2_trot.yaml`) with the row's overrides, from scratch unless `--init-from` names a checkpoint of this
trainer, for `--budget-s` seconds of training (or `--iterations`), then exports the policy and judges it through
the deployment path (`evaluate_policy`, onnxruntime). With `--snapshot-every N --select-best` the policy judged is
the best of the run's snapshots, chosen on other episodes (seed `SELECTION_SEED`, 8 per gait) than the ones that
judge it (the eval's held-out seed): most gaits that walk, then the smallest summed RMSEs. The judge:
- walk: each of the policy's gaits over its eval speeds (`--episodes` x 8 s): falls, vx and yaw-rate RMSE, WALKS;
- stand: a zero command (8 x 8 s): falls, |vx| and |vy| RMSE (the target: <= 0.05 m/s, no fall);
- each `--terrains` course, its gait's default (crossed share, falls).
The row is merged into OUT.json by name (a rerun replaces it) and OUT.md is rewritten from all rows, each with
the command that reproduces it, the samples and the training wall-clock on this machine.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from surrogait_core.policy.contract import read_contract
from surrogait_train.api import snapshot_callback, snapshots
from surrogait_train.config import load_config
from surrogait_train.evaluate import EVAL_SEED, STAND_RMSE_M_S, WALK_VX_RMSE, evaluate_policy
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402
from provenance import git_commit  # noqa: E402

RESULTS = Path(__file__).parent / "results"
EPISODE_S = 8.0
SELECTION_SEED = EVAL_SEED + 1  # snapshots are chosen on other episodes than the ones that judge the choice


def select_best(snapshots: list[tuple[int, Path]], gaits: list[str]) -> tuple[int, Path, list[dict]]:
    """The snapshot that falls least over its gaits, then walks in most, then tracks best (the summed vx and
    yaw-rate RMSEs of the robots that did not fall), on the selection episodes; and every score."""
    scores = []
    for iteration, path in snapshots:
        results = [evaluate_policy(path, num_episodes=8, episode_s=6.0, gait=g, seed=SELECTION_SEED) for g in gaits]
        falls = sum(int(sum(r.fell)) for r in results)
        walking = sum(r.walks for r in results)
        rmse = sum(r.vx_rmse + r.yaw_rate_rmse for r in results
                   if math.isfinite(r.vx_rmse) and math.isfinite(r.yaw_rate_rmse))
        scores.append({"iteration": iteration, "falls": falls, "walking_gaits": walking, "rmse_sum": round(rmse, 3)})
        print(f"  snapshot it{iteration}: {falls} falls, {walking} gaits walk, summed RMSE {rmse:.3f}", flush=True)
    best = min(range(len(scores)),
               key=lambda i: (scores[i]["falls"], -scores[i]["walking_gaits"], scores[i]["rmse_sum"]))
    return snapshots[best][0], snapshots[best][1], scores


def judge(policy: Path, gaits: list[str], terrains: list[str], episodes: int) -> dict:
    out: dict = {"walk": {}, "stand": {}, "terrain": {}}
    for gait in gaits:
        r = evaluate_policy(policy, num_episodes=episodes, episode_s=EPISODE_S, gait=gait)
        out["walk"][gait] = {"falls": int(sum(r.fell)), "episodes": r.episodes, "vx_rmse": round(r.vx_rmse, 3),
                             "yaw_rate_rmse": round(r.yaw_rate_rmse, 3), "walks": r.walks}
        z = evaluate_policy(policy, num_episodes=8, episode_s=EPISODE_S, gait=gait, commands=np.zeros((8, 3)))
        out["stand"][gait] = {"falls": int(sum(z.fell)), "vx_rmse": round(z.vx_rmse, 3),
                              "vy_rmse": round(z.vy_rmse, 3),
                              "holds": not any(z.fell) and max(z.vx_rmse, z.vy_rmse) <= STAND_RMSE_M_S}
    for terrain in terrains:
        r = evaluate_policy(policy, num_episodes=episodes, episode_s=12.0, terrain=terrain)
        out["terrain"][terrain] = {"crossed": round(r.crossed_rate, 3), "falls": int(sum(r.fell)),
                                   "episodes": r.episodes}
    return out


def cell_walk(w: dict) -> str:
    mark = " **WALKS**" if w["walks"] else ""
    return f"{w['falls']}/{w['episodes']} · {w['vx_rmse']:.3f} · {w['yaw_rate_rmse']:.3f}{mark}"


def markdown(report: dict) -> str:
    lines = [
        "# Levers for the differentiable trainer (issue 34)",
        "",
        "Each row trains the differentiable trainer alone (no PPO, no PPO-made start) with the row's overrides on "
        "top of `configs/go2_trot.yaml`, then judges the exported policy through the deployment path.",
        f"Walk: falls / episodes · vx RMSE (m/s) · yaw-rate RMSE (rad/s), {EPISODE_S:.0f} s episodes at the gait's "
        f"eval speeds; WALKS = no falls, vx RMSE <= {WALK_VX_RMSE}, yaw-rate RMSE <= 0.2.",
        f"Stand: zero command, falls · |vx| · |vy| RMSE (target <= {STAND_RMSE_M_S} m/s).",
        f"Samples = robots x steps; time = training wall-clock on {report['machine']} (other work shared the machine "
        "during some rows: compare samples, not seconds).",
        "",
        "| row | what it tests | samples | train s | walk | stand | terrain |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["rows"].values():
        j = row["judged"]
        walk = "<br>".join(f"{g}: {cell_walk(w)}" for g, w in j["walk"].items())
        stand = "<br>".join(f"{g}: {s['falls']} · {s['vx_rmse']:.3f} · {s['vy_rmse']:.3f}"
                            for g, s in j["stand"].items())
        terrain = "<br>".join(f"{t}: crossed {c['crossed']:.0%}, {c['falls']} fell" for t, c in j["terrain"].items())
        chosen = f" (best snapshot: iteration {row['selected']['iteration']})" if row.get("selected") else ""
        lines.append(f"| {row['name']} | {row['note']}{chosen} | {row['env_samples']:,} | {row['trained_s']:.0f} "
                     f"| {walk} | {stand} | {terrain or '-'} |")
    lines += ["", "Commands (each reproduces its row):", ""]
    lines += [f"- {row['name']} (commit {row['commit']}): `{row['command']}`" for row in report["rows"].values()]
    return "\n".join(lines) + "\n"


def commit() -> str:
    """The short commit the row was measured at ("+dirty": tracked files outside bench/results differed)."""
    head, dirty = git_commit()
    return "unknown" if head is None else head[:7] + ("+dirty" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", required=True, help="the row's name (a rerun replaces it)")
    parser.add_argument("--note", default="", help="what the row tests, for the table")
    parser.add_argument("--budget-s", type=float, default=480.0, help="training seconds (0: --iterations only)")
    parser.add_argument("--iterations", type=int, default=10**9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-from", default=None, help="a checkpoint or policy file of this trainer to start from")
    parser.add_argument("--config", default=None, help="the config the overrides apply to (default: go2_trot.yaml)")
    parser.add_argument("--terrains", nargs="*", default=[])
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--keep", default=None, help="copy the exported policy here")
    parser.add_argument("--snapshot-every", type=int, default=0, help="export a snapshot every N iterations")
    parser.add_argument("--select-best", action="store_true", help="judge the best snapshot, not the last")
    parser.add_argument("--reselect", action="store_true",
                        help="no training: choose again among the row's existing snapshots and judge the choice")
    parser.add_argument("--out", default=str(RESULTS / "skill_levers"))
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    path = out.with_suffix(".json")
    report = json.loads(path.read_text()) if path.exists() else {"benchmark": "skill_levers", "rows": {}}
    overrides = [*args.overrides, f"seed={args.seed}"]
    run_dir = Path("runs/skill_levers") / args.row
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    if args.reselect:  # the training as the row recorded it; only the choice among its snapshots is made again
        row = report["rows"][args.row]
        contract = read_contract(run_dir / "policy.onnx")
        gaits, trained = list(contract.gait_names), row
        commands = [row["command"], command]
    else:
        trainer = Trainer(load_config(args.config, overrides), run_dir)
        if args.init_from:
            trainer.init_from(args.init_from)
        start = time.perf_counter()
        callback = snapshot_callback(run_dir, args.snapshot_every) if args.snapshot_every else None
        trainer.train(max_iterations=args.iterations, budget_s=args.budget_s, progress=False, callback=callback)
        trained = {"iterations": trainer.iteration, "env_samples": trainer.env_steps,
                   "trained_s": round(time.perf_counter() - start, 1)}
        export_onnx(trainer.actor, trainer.env.contract, run_dir / "policy.onnx", trainer.provenance())
        trainer.env.close()
        gaits = list(trainer.env.contract.gait_names)
        commands = [command]
    policy = run_dir / "policy.onnx"
    selection = None
    if args.reselect or (args.select_best and args.snapshot_every):
        iteration, best, scores = select_best(snapshots(run_dir), gaits)
        policy = run_dir / "selected.onnx"
        policy.write_bytes(best.read_bytes())
        selection = {"iteration": iteration, "seed": SELECTION_SEED, "scores": scores}
    row = {
        "name": args.row, "note": args.note or report["rows"].get(args.row, {}).get("note", ""),
        "overrides": trained.get("overrides", overrides), "init_from": trained.get("init_from", args.init_from),
        "selected": selection,
        "iterations": trained["iterations"], "env_samples": trained["env_samples"], "trained_s": trained["trained_s"],
        "commit": commit(), "command": " && ".join(commands),
        "judged": judge(policy, gaits, args.terrains, args.episodes),
    }
    if args.keep:
        Path(args.keep).parent.mkdir(parents=True, exist_ok=True)
        Path(args.keep).write_bytes(policy.read_bytes())
    print(json.dumps(row, indent=1), flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = json.loads(path.read_text()) if path.exists() else report  # rows other runs wrote meanwhile
    report["machine"] = describe_machine()
    report["rows"][args.row] = row
    path.write_text(json.dumps(report, indent=1))
    out.with_suffix(".md").write_text(markdown(report))


if __name__ == "__main__":
    main()
