"""Where on the slope do trots fall, and from how steep a slope on?

    python bench/investigations/slope_falls.py POLICY.onnx[:GAIT]... [--degrees 5 10 15] [--name slope_falls]

For each policy (a multi-gait file's gait after a colon) and slope angle: `evaluate_policy` on the slope course
(32 robots walked straight ahead at 0.6-1.0 m/s for 12 s, as `bench/skills.py`'s cell; the angle is the course's
difficulty × 15°), the share that crossed, and where the others fell: on the way up, on the plateau, or on the way
down (the base's x when it fell; surrogait_core.terrain: the ramp climbs for 0.4 of the course, a plateau of 0.2,
then down). Asked because the trot trained alone crosses the 15° slope in 3 % of episodes and the multi-gait file's
trot in 62 % (docs/training-log.md, 2026-12-06 (12)).

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

from surrogait_core.terrain import COURSE_LENGTH_M, COURSE_START_X, SLOPE_DEG  # noqa: E402
from surrogait_train.evaluate import evaluate_policy  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
TOP_X = COURSE_START_X + 0.4 * COURSE_LENGTH_M  # m: the ramp's top, where the plateau begins
DOWN_X = COURSE_START_X + 0.6 * COURSE_LENGTH_M  # m: the plateau's end, where the way down begins


def where(fall_x_m: float) -> str:
    if fall_x_m < COURSE_START_X:
        return "before"
    return "up" if fall_x_m < TOP_X else "plateau" if fall_x_m < DOWN_X else "down"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+", help="POLICY.onnx or POLICY.onnx:GAIT")
    parser.add_argument("--degrees", type=float, nargs="+", default=[5.0, 10.0, 15.0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--name", default="slope_falls")
    args = parser.parse_args()
    machine = describe_machine()
    rows = []
    for spec in args.policies:
        path, _, gait = spec.partition(":")
        for degrees in args.degrees:
            r = evaluate_policy(path, num_episodes=args.episodes, episode_s=12.0, terrain="slope", gait=gait or None,
                                terrain_difficulty=degrees / SLOPE_DEG, num_threads=1)
            places = [where(x) for x in r.fall_x_m if x is not None]
            row = {"policy": path, "gait": r.gait, "degrees": degrees, "crossed": round(r.crossed_rate, 3),
                   "falls": int(sum(r.fell)), **{k: places.count(k) for k in ("before", "up", "plateau", "down")},
                   "fall_x_m": r.fall_x_m}
            print(json.dumps({k: v for k, v in row.items() if k != "fall_x_m"}), flush=True)
            rows.append(row)
    command = "python bench/investigations/slope_falls.py " + " ".join(sys.argv[1:])
    report = {"machine": machine, "command": command, "episodes": args.episodes, "rows": rows}
    RESULTS.joinpath(f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    RESULTS.joinpath(f"{args.name}.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    lines = [f"# Where on the slope trots fall ({report['machine']})", "", f"`{report['command']}`", "",
             f"{report.get('episodes', 32)} robots per row, 12 s, straight over the slope course at 0.6-1.0 m/s; "
             f"falls by where the base was: before the ramp (x < {COURSE_START_X} m: back at its foot, most after "
             f"climbing part of the way and sliding back, slope_climb.md), up the ramp (to {TOP_X} m), on the "
             f"plateau (to {DOWN_X} m), down the ramp (past it).", "",
             "| policy | gait | slope | crossed | falls | before | up | plateau | down |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| `{Path(r['policy']).name}` | {r['gait']} | {r['degrees']:g}° | {r['crossed']:.0%} | {r['falls']} | "
              f"{r['before']} | {r['up']} | {r['plateau']} | {r['down']} |" for r in report["rows"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
