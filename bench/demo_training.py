"""Does `make demo`'s training make a policy that WALKS and stands still? Its training step, seed after seed.

    python bench/demo_training.py [--robot go2] [--seeds 0 1 2] [--budget-s 120] [--name NAME] [key=value ...]

Each seed runs scripts/demo.py's training step as `make demo` runs it (the robot's trot config and its demo
recipe, DEMO_TRAINING_OVERRIDES[robot], for --budget-s of wall clock; six snapshots pre-flown through the demo's
session; the cleared best tracker judged by the eval's WALKS and by a zero command), with `seed=S` and any key=value
given here on top. Seeds stand in for what varies from one `make demo` to the next (how far the wall-clock budget gets).
Runs one seed at a time, alone on the machine, as the demo runs.

Writes bench/results/<name>.{json,md}: per seed the iterations trained, the snapshot chosen, the verdict; the count
that WALKS and stands still.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine  # noqa: E402
from provenance import git_commit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def load_demo_script():
    """scripts/demo.py, the `make demo` entry point (not a package module)."""
    spec = importlib.util.spec_from_file_location("make_demo", ROOT / "scripts" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def markdown(result: dict) -> str:
    rows = result["runs"]
    walks = sum(r["walks"] for r in rows)
    both = sum(r["walks"] and r["stands"] for r in rows)
    lines = [f"# make demo's training step, {result['robot']} ({result['name']})", "",
             f"Command: `{result['command']}`  ",
             f"Machine: {result['machine']}; commit {(result['commit'] or 'unknown')[:7]}"
             f"{' + uncommitted changes' if result['commit_dirty'] else ''}; date {result['date']}.", "",
             f"Recipe: the {result['robot']}_trot config with {' '.join(result['recipe'])}"
             + (f", and {' '.join(result['overrides'])}" if result["overrides"] else "")
             + f"; {result['budget_s']:.0f} s of training per seed.", "",
             "WALKS: the eval's definition (16 held-out episodes of 8 s: no fall, vx RMSE <= 0.15 m/s, yaw-rate RMSE "
             "<= 0.2 rad/s); stands: 4 episodes at a zero command, |vx| and |vy| RMSE <= 0.05 m/s, no fall.", "",
             "| seed | iterations trained | chosen (pre-flight) | falls | vx RMSE | yaw-rate RMSE | WALKS | "
             "stand drift | stands | wall s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['iterations_trained']} | {r['iteration']}"
                     f"{'' if r['cleared'] else ' (not cleared)'} | {r['falls']}/{r['episodes']} | "
                     f"{r['vx_rmse']:.3f} | {r['yaw_rate_rmse']:.3f} | {'yes' if r['walks'] else 'no'} | "
                     f"{r['stand_drift']:.3f} | {'yes' if r['stands'] else 'no'} | {r['wall_s']:.0f} |")
    lines += ["", f"**{walks}/{len(rows)} WALK; {both}/{len(rows)} walk and stand still.**", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", choices=("go2", "go1"), default="go2")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget-s", type=float, default=120.0, help="training wall clock per seed (the demo's)")
    parser.add_argument("--name", default=None, help="results file stem (default demo_training_<robot>)")
    parser.add_argument("--workdir", type=Path, default=ROOT / "runs" / "bench_demo_training")
    parser.add_argument("overrides", nargs="*", help="key=value on top of the demo's recipe")
    args = parser.parse_args(argv)
    name = args.name or f"demo_training_{args.robot}"
    demo = load_demo_script()
    from surrogait_train.api import DEMO_TRAINING_OVERRIDES

    commit, dirty = git_commit()
    result = {"name": name, "robot": args.robot, "budget_s": args.budget_s,
              "recipe": list(DEMO_TRAINING_OVERRIDES[args.robot]),
              "overrides": args.overrides, "machine": describe_machine(), "commit": commit,
              "commit_dirty": dirty,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": "python bench/demo_training.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "runs": []}
    for seed in args.seeds:
        start = time.monotonic()
        trained = demo.train(args.workdir / name / f"seed{seed}", args.budget_s, args.robot,
                             overrides=(*args.overrides, f"seed={seed}"))
        if trained is None:
            raise SystemExit("the trainer (surrogait_train) is not installed: run `make setup`")
        v = trained.verdict
        result["runs"].append({"seed": seed, "iterations_trained": trained.iterations_trained,
                               "iteration": trained.iteration, "cleared": trained.cleared, "episodes": v.episodes,
                               "falls": v.falls, "vx_rmse": v.vx_rmse, "yaw_rate_rmse": v.yaw_rate_rmse,
                               "walks": v.walks, "stand_drift": v.stand_drift, "stands": v.stands,
                               "wall_s": round(time.monotonic() - start, 1)})
        print(f"seed {seed}: {v.describe()}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    table = markdown(result)
    (RESULTS / f"{name}.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
