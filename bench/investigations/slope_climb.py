"""How do trots climb the 15° slope: how fast, how straight, how hard?

    python bench/investigations/slope_climb.py POLICY.onnx... [--name slope_climb]

Each policy walks the slope course as `bench/skills.py`'s cell does (32 robots straight ahead at 0.6-1.0 m/s for
12 s, the eval's seed and falls), and while a robot's base is on the way up (`slope_falls.py`'s zones) this
records its forward speed (body frame) against its command, its yaw rate (asked: 0), its heading off straight
up the ramp, and its largest commanded joint torque as a share of the motor's limit. Asked because the trots that
fall "before the ramp" in `slope_falls.md` had climbed part of the way, turned, and slid back (docs/training-log.md,
2026-12-06 (13)).

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
from slope_falls import TOP_X  # noqa: E402

from surrogait_core.terrain import COURSE_START_X  # noqa: E402
from surrogait_core.wire.motor_driver_law import pd_torque  # noqa: E402
from surrogait_train.evaluate import CROSSED_X, TERRAIN_EVAL_VX, PolicyRollout, command_set  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
EPISODE_S = 12.0


def climb(path: str, episodes: int) -> dict:
    rollout = PolicyRollout(path, episodes, EPISODE_S, num_threads=1, terrain="slope")
    c, env = rollout.contract, rollout.env
    cmds = command_set(episodes, vx=TERRAIN_EVAL_VX, vy=(0, 0), yaw=(0, 0))
    limit = np.asarray(env.spec.joint_torque_limit)
    running, fell, crossed = np.ones(episodes, bool), np.zeros(episodes, bool), np.zeros(episodes, bool)
    speed_share, yaw_rate, heading, torque = [], [], [], []
    for step in rollout.steps(cmds):
        targets, state, now_fell = step.joint_targets, step.state, step.fell
        pos = env.base_position_w()
        fell |= running & now_fell
        crossed |= running & ~now_fell & (pos[:, 0] >= CROSSED_X)
        running &= ~now_fell & (pos[:, 0] < CROSSED_X)
        up = running & (pos[:, 0] > COURSE_START_X + 0.3) & (pos[:, 0] < TOP_X)  # every foot on the ramp
        if up.any():
            w, x, y, z = env._mj_state[up][:, env.physics.layout.qpos][:, 3:7].T
            yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
            tau = pd_torque(np.asarray(c.kp), np.asarray(c.kd), targets[up], state.joint_pos.numpy()[up],
                            state.joint_vel.numpy()[up], torque_limit=limit)
            speed_share += list(state.base_lin_vel_b.numpy()[up, 0] / cmds[up, 0])
            yaw_rate += list(np.abs(state.base_ang_vel_b.numpy()[up, 2]))
            heading += list(np.degrees(np.abs(yaw)))
            torque += list(np.abs(tau / limit).max(-1))
    rollout.close()
    row = {"policy": path, "crossed": round(float(crossed.mean()), 3), "falls": int(fell.sum()),
           "ramp_steps": len(heading)}
    if not heading:  # no robot got every foot onto the ramp (a policy that stops at its foot)
        return {**row, "climb_speed_share": None, "yaw_rate_rad_s": None, "turned_30deg_share": None,
                "torque_share_p99": None}
    return {**row, "climb_speed_share": round(float(np.mean(speed_share)), 3),
            "yaw_rate_rad_s": round(float(np.mean(yaw_rate)), 3),
            "turned_30deg_share": round(float((np.asarray(heading) > 30).mean()), 3),
            "torque_share_p99": round(float(np.percentile(torque, 99)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--name", default="slope_climb")
    args = parser.parse_args()
    machine = describe_machine()
    rows = []
    for path in args.policies:
        rows.append(climb(path, args.episodes))
        print(json.dumps(rows[-1]), flush=True)
    command = "python bench/investigations/slope_climb.py " + " ".join(sys.argv[1:])
    report = {"machine": machine, "command": command, "episodes": args.episodes, "rows": rows}
    RESULTS.joinpath(f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    RESULTS.joinpath(f"{args.name}.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    lines = [f"# How trots climb the 15° slope ({report['machine']})", "", f"`{report['command']}`", "",
             f"{report['episodes']} robots per row, 12 s straight over the slope course at 0.6-1.0 m/s. On the way up "
             "(every foot on the ramp, not fallen): forward speed as a share of the command, |yaw rate| (asked: 0), "
             "the share of those steps turned more than 30° off straight up, and the 99th percentile of the largest "
             "commanded joint torque over the motor's limit.", "",
             "| policy | crossed | falls | climb speed / command | \\|yaw rate\\| rad/s | turned > 30° "
             "| torque / limit (p99) |",
             "|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        if r["ramp_steps"] == 0:
            lines.append(f"| `{Path(r['policy']).name}` | {r['crossed']:.0%} | {r['falls']} | never on the ramp "
                         "| - | - | - |")
            continue
        lines.append(f"| `{Path(r['policy']).name}` | {r['crossed']:.0%} | {r['falls']} "
                     f"| {r['climb_speed_share']:.2f} | {r['yaw_rate_rad_s']:.2f} | {r['turned_30deg_share']:.0%} "
                     f"| {r['torque_share_p99']:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
