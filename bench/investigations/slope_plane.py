"""How steep a slope can a trot walk up and down, without the course's kinks?

    python bench/investigations/slope_plane.py POLICY.onnx... [--degrees 8 11 13 15 18] [--name slope_plane]

Each policy walks an endless slope: level ground under gravity tilted by the angle (`randomization.ground_tilt_deg`'s
physics, surrogait_train.randomization.tilted_gravity), nominal robot otherwise, 32 robots from the eval's seed
commanded straight ahead at 0.6-1.0 m/s for 10 s, once facing uphill and once downhill. Per cell: how many fell,
and the forward speed (body frame) over the command of those still standing, after the first second. The slope
course (`bench/skills.py`, `slope_falls.py`) adds the ramp's foot and top to this; here is the slope alone.

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

from surrogait_core.policy.onnx_policy import OnnxPolicy  # noqa: E402
from surrogait_core.policy.policy_runner import PolicyRunner  # noqa: E402
from surrogait_train.env import LocomotionEnv  # noqa: E402
from surrogait_train.evaluate import EVAL_SEED, TERRAIN_EVAL_VX, command_set, eval_env_config, has_fallen  # noqa: E402
from surrogait_train.randomization import RobotVariation, tilted_gravity  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
EPISODE_S, SETTLE_S = 10.0, 1.0
DIRECTIONS = {"up": np.pi, "down": 0.0}  # the downhill heading: behind the robot (it faces uphill), or ahead


def walk(path: str, degrees: float, direction: str, episodes: int) -> dict:
    policy = OnnxPolicy(path)
    c = policy.contract
    env = LocomotionEnv(eval_env_config(c, episodes, EPISODE_S), seed=EVAL_SEED)
    env.reset(seed=EVAL_SEED, randomize_episode_start=False)
    slope = RobotVariation.nominal(episodes, env.foot_friction())
    slope.gravity_dir_w = tilted_gravity(np.full(episodes, np.radians(degrees)), np.full(episodes,
                                                                                         DIRECTIONS[direction]))
    env.set_variation(slope)
    state = env._sim_state()
    runner = PolicyRunner(policy)
    runner.reset(num_robots=episodes)
    cmds = command_set(episodes, vx=TERRAIN_EVAL_VX, vy=(0, 0), yaw=(0, 0))
    standing = np.ones(episodes, bool)
    speed_share = []
    for t in range(int(round(EPISODE_S / c.control_dt_s))):
        terms = runner.terms(state.base_ang_vel_b.numpy(), state.projected_gravity_b.numpy(), state.joint_pos.numpy(),
                             state.joint_vel.numpy(), cmds, np.full(episodes, t * c.control_dt_s),
                             state.base_lin_vel_b.numpy())
        state, _ = env.advance_physics(runner.act(terms).joint_targets)
        standing &= ~has_fallen(state, env.cfg)
        if t * c.control_dt_s >= SETTLE_S and standing.any():
            speed_share += list(state.base_lin_vel_b.numpy()[standing, 0] / cmds[standing, 0])
    env.close()
    return {"policy": path, "degrees": degrees, "direction": direction, "falls": int((~standing).sum()),
            "speed_share": round(float(np.mean(speed_share)), 3) if speed_share else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+")
    parser.add_argument("--degrees", type=float, nargs="+", default=[8.0, 11.0, 13.0, 15.0, 18.0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--name", default="slope_plane")
    args = parser.parse_args()
    machine = describe_machine()
    rows = []
    for path in args.policies:
        for degrees in args.degrees:
            for direction in DIRECTIONS:
                rows.append(walk(path, degrees, direction, args.episodes))
                print(json.dumps(rows[-1]), flush=True)
    command = "python bench/investigations/slope_plane.py " + " ".join(sys.argv[1:])
    report = {"machine": machine, "command": command, "episodes": args.episodes, "rows": rows}
    RESULTS.joinpath(f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    RESULTS.joinpath(f"{args.name}.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    degrees = sorted({r["degrees"] for r in report["rows"]})
    lines = [f"# How steep an endless slope trots walk ({report['machine']})", "", f"`{report['command']}`", "",
             f"{report['episodes']} robots per cell on level ground under tilted gravity, commanded straight ahead at "
             "0.6-1.0 m/s for 10 s, facing uphill or downhill. Cell: falls · forward speed over the command of those "
             "standing (after 1 s).", "",
             "| policy | direction | " + " | ".join(f"{d:g}°" for d in degrees) + " |",
             "|---|---|" + "---|" * len(degrees)]
    for path in dict.fromkeys(r["policy"] for r in report["rows"]):
        for direction in DIRECTIONS:
            cells = {r["degrees"]: r for r in report["rows"] if r["policy"] == path and r["direction"] == direction}
            text = [f"{cells[d]['falls']} · {cells[d]['speed_share'] if cells[d]['speed_share'] is not None else '-'}"
                    if d in cells else "" for d in degrees]
            lines.append(f"| `{Path(path).name}` | {direction} | " + " | ".join(text) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
