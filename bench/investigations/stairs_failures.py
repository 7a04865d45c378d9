"""Where and how trots fail on the stairs course: stopped at a riser, fallen climbing, on the top or coming down.

    python bench/investigations/stairs_failures.py POLICY.onnx... [--risers 0.05 0.075 0.1] [--name stairs_failures]

Every trot crosses the 10 cm stairs in 0 % of the skills eval's episodes (the PPO baseline too). The course
(surrogait_core.terrain) is five risers up, at x = 0.8, 1.1, ... 2.0 m, a plateau to 3.0 m, five down to 4.2 m. Here
each policy walks it straight ahead as the eval does (the eval's seed and commands, vx 0.6-1.0 m/s, 12 s) at a few
riser heights, and each robot's run is put in one class by where its base was: crossed (past the eval's finish
line standing); stopped (no fall, not crossed; its furthest x); fell climbing (base before the plateau), on the top,
or coming down. For falls, the body's pitch at the fall (nose up +, deg) and whether it went over sideways (roll
larger than pitch): a robot that cannot lift its hind legs onto a riser stands nose-up with its front feet on the
steps and tips over sideways; one that dives nose-first fell forward down a riser.

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

from surrogait_core.terrain import COURSE_END_X, COURSE_START_X, STEP_DEPTH_M, STEP_HEIGHT_M  # noqa: E402
from surrogait_train.evaluate import CROSSED_X, TERRAIN_EVAL_VX, PolicyRollout, command_set  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
EPISODE_S = 12.0  # bench/skills.py's course episodes
STEPS = 5  # risers each way (surrogait_core.terrain.make_terrain)
TOP_X = COURSE_START_X + STEPS * STEP_DEPTH_M  # m: the last riser up; the plateau follows
DOWN_X = COURSE_END_X - STEPS * STEP_DEPTH_M  # m: the first riser down
CLASSES = ("crossed", "stopped", "fell climbing", "fell on top", "fell coming down")


def where(x: float) -> str:
    return "fell climbing" if x < TOP_X else "fell on top" if x < DOWN_X else "fell coming down"


def walk(path: str, episodes: int, riser_m: float) -> dict:
    rollout = PolicyRollout(path, episodes, EPISODE_S, num_threads=1, terrain="stairs",
                            terrain_difficulty=riser_m / STEP_HEIGHT_M)
    cmds = command_set(episodes, vx=TERRAIN_EVAL_VX, vy=(0, 0), yaw=(0, 0))
    fell, crossed = np.zeros(episodes, bool), np.zeros(episodes, bool)
    fall_x, fall_pitch, fall_sideways = np.full(episodes, np.nan), np.full(episodes, np.nan), np.zeros(episodes, bool)
    furthest_x = np.zeros(episodes)
    for step in rollout.steps(cmds):
        state = step.state
        running = ~fell & ~crossed
        x = rollout.env.base_position_w()[:, 0]
        furthest_x = np.where(running, np.maximum(furthest_x, x), furthest_x)
        new = running & step.fell
        g = state.projected_gravity_b.numpy()
        fall_x[new] = x[new]
        fall_pitch[new] = np.degrees(np.arcsin(np.clip(-g[new, 0], -1, 1)))  # nose up: gravity towards the tail
        fall_sideways[new] = np.abs(g[new, 1]) > np.abs(g[new, 0])
        fell |= new
        crossed |= ~fell & (x >= CROSSED_X)
    rollout.close()
    outcome = ["crossed" if crossed[i] else where(fall_x[i]) if fell[i] else "stopped" for i in range(episodes)]
    stopped = ~fell & ~crossed
    falls = fell.nonzero()[0]
    return {"policy": path, "riser_m": riser_m, "episodes": episodes,
            "counts": {k: outcome.count(k) for k in CLASSES},
            "stopped_at_x_m": sorted(round(float(v), 2) for v in furthest_x[stopped]),
            "fall_pitch_deg_median": None if not len(falls) else round(float(np.median(fall_pitch[falls])), 1),
            "falls_sideways": int(fall_sideways.sum()),
            "outcomes": outcome, "fall_x_m": [None if np.isnan(v) else round(float(v), 2) for v in fall_x]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+")
    parser.add_argument("--risers", type=float, nargs="+", default=[0.05, 0.075, 0.1], help="riser heights, m")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--name", default="stairs_failures")
    args = parser.parse_args()
    rows = []
    for path in args.policies:
        for riser in args.risers:
            rows.append(walk(path, args.episodes, riser))
            print(json.dumps({k: v for k, v in rows[-1].items() if k not in ("outcomes", "fall_x_m")}), flush=True)
    command = "python bench/investigations/stairs_failures.py " + " ".join(sys.argv[1:])
    report = {"machine": describe_machine(), "command": command, "episodes": args.episodes, "rows": rows}
    RESULTS.joinpath(f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    RESULTS.joinpath(f"{args.name}.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    lines = [f"# Where trots fail on the stairs ({report['machine']})", "", f"`{report['command']}`", "",
             f"{report['episodes']} robots per row, straight ahead over the stairs course as `bench/skills.py` walks "
             f"it (vx 0.6-1.0 m/s, 12 s, the eval's seed): five risers up (x 0.8-{TOP_X:.1f} m), a plateau to "
             f"{DOWN_X:.1f} m, five down. Each run in one class by the base's x; for the falls, the median pitch at "
             "the fall (nose up +) and how many went over sideways.", "",
             "| policy | riser | " + " | ".join(CLASSES)
             + " | stopped at x (m): median (range) | fall pitch ° (median) | sideways |",
             "|---|---|" + "---|" * len(CLASSES) + "---|---|---|"]
    for r in report["rows"]:
        counts = " | ".join(str(r["counts"][k]) for k in CLASSES)
        xs = r["stopped_at_x_m"]
        stopped = f"{np.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "–"
        pitch = "–" if r["fall_pitch_deg_median"] is None else f"{r['fall_pitch_deg_median']:+.0f}"
        lines.append(f"| `{Path(r['policy']).name}` | {r['riser_m'] * 100:g} cm | {counts} | {stopped} | {pitch} "
                     f"| {r['falls_sideways']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
