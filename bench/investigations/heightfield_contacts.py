"""A flat height field is not a plane: contacts per foot and falls of walking policies, by grid cell.

    python bench/investigations/heightfield_contacts.py [POLICY.onnx ...] [--cells 0.025 0.05 0.1 0.2]
        [--episodes 64] [--seconds 10] [--out bench/results/heightfield_contacts]

MuJoCo collides a geom with a height field one grid triangle (a prism) at a time and keeps a contact for
each prism it reaches (MuJoCo's docs: a height field's features should be large against the geoms that
touch it). A Go2 foot is a 2 cm sphere; the courses' grid was 2.5 cm. This measures, on height fields flat
to ±0.04 mm (the rough course at difficulty 0.001) and on the scene's plane:

1. contacts per foot of the robot standing (PD on its default pose, 1 s), averaged over placements of the
   robot shifted within a cell;
2. falls of each policy walking straight ahead (the eval's deployment path, vx 0.3-0.7 m/s, no turning,
   so no robot reaches the height field's edges), `--episodes` robots × `--seconds`.

Writes OUT.json (machine, date, command, every figure) and OUT.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results
ROOT = Path(__file__).resolve().parents[2]
PRETRAINED = Path("ros2_ws/src/surrogait_bringup/policies")  # relative to ROOT, where the bench runs from
FLAT_DIFFICULTY = 1e-3  # the rough course at this level: heights within ±0.04 mm
PLANE = "plane"


def ground_config(ground: str | float) -> dict:
    """EnvConfig / evaluate_policy fields for the plane or a flat height field of cell `ground` (m)."""
    if ground == PLANE:
        return {"terrain": "flat"}
    return {"terrain": "rough", "terrain_difficulty": FLAT_DIFFICULTY, "terrain_cell_m": float(ground)}


def contacts_per_foot(ground: str | float, placements: int, seed: int = 0) -> float:
    """Mean contacts per foot of the robot standing still on `ground`, over `placements` shifts of it."""
    import mujoco

    from surrogait_train.config import EnvConfig
    from surrogait_train.env import LocomotionEnv

    env = LocomotionEnv(EnvConfig(num_envs=1, **ground_config(ground)), seed=seed)
    model, spec = env.model, env.spec
    feet = {model.geom(name).id for name in spec.foot_names}
    rng = np.random.default_rng(seed)
    counts = []
    for _ in range(placements):
        data = mujoco.MjData(model)
        data.qpos[:] = spec.standing_qpos
        data.qpos[:2] += rng.uniform(0.0, 0.2, 2)  # anywhere within the coarsest cell
        data.ctrl[:] = spec.default_joint_pos  # the actuators are PD on position targets
        for _ in range(int(1.0 / model.opt.timestep)):
            mujoco.mj_step(model, data)
        pairs = [(c.geom1, c.geom2) for c in data.contact[: data.ncon]]
        counts.append(sum((g1 in feet) or (g2 in feet) for g1, g2 in pairs) / len(feet))
    env.close()
    return float(np.mean(counts))


def walking_falls(policy: str, ground: str | float, episodes: int, seconds: float) -> int:
    from surrogait_train.evaluate import command_set, evaluate_policy

    commands = command_set(episodes, vx=(0.3, 0.7), vy=(0.0, 0.0), yaw=(0.0, 0.0))
    result = evaluate_policy(policy, episodes, seconds, commands=commands, **ground_config(ground))
    return int(round(result.fall_rate * episodes))


def markdown(report: dict) -> str:
    grounds = report["grounds"]
    label = {PLANE: "plane"} | {g: f"height field, {g * 100:g} cm cells" for g in grounds if g != PLANE}
    lines = ["# A flat height field is not a plane: contacts per foot and falls, by grid cell", "",
             f"Machine: {report['machine']}. Date: {report['date']}. Command: `{report['command']}`.", "",
             "Height fields flat to ±0.04 mm (the rough course at difficulty 0.001). Contacts: per foot of the "
             f"robot standing, mean over {report['placements']} placements within a cell. Falls: "
             f"{report['episodes']} robots × {report['seconds']:g} s walking straight ahead at 0.3-0.7 m/s "
             "(the eval's deployment path).", "",
             "| ground | contacts per standing foot | "
             + " | ".join(f"falls: {Path(p).name}" for p in report["policies"]) + " |",
             "|---|---|" + "---|" * len(report["policies"])]
    for g in grounds:
        row = report["rows"][str(g)]
        falls = " | ".join(f"{row['falls'][p]}/{report['episodes']}" for p in report["policies"])
        lines.append(f"| {label[g]} | {row['contacts_per_foot']:.2f} | {falls} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policies", nargs="*",
                    default=[str(PRETRAINED / "go2_trot_nominal.onnx"), str(PRETRAINED / "go2_trot.onnx")])
    ap.add_argument("--cells", nargs="+", type=float, default=[0.025, 0.05, 0.1, 0.2])
    ap.add_argument("--episodes", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--placements", type=int, default=20)
    ap.add_argument("--out", type=Path, default=RESULTS / "heightfield_contacts")
    args = ap.parse_args(argv)
    for p in args.policies:
        if not Path(p).is_file():
            ap.error(f"policy {p} not found (run from the repository root, {ROOT})")
    grounds: list[str | float] = [PLANE, *args.cells]
    command = " ".join(["python bench/investigations/heightfield_contacts.py",
                        shlex.join(argv if argv is not None else sys.argv[1:])])
    command = command.rstrip()
    report = {"machine": describe_machine(),
              "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"), "command": command,
              "policies": args.policies, "grounds": grounds, "episodes": args.episodes, "seconds": args.seconds,
              "placements": args.placements, "rows": {}}
    for g in grounds:
        row = {"contacts_per_foot": contacts_per_foot(g, args.placements), "falls": {}}
        for p in args.policies:
            row["falls"][p] = walking_falls(p, g, args.episodes, args.seconds)
        report["rows"][str(g)] = row
        print(f"{g}: {row}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
