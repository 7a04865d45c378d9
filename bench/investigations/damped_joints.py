"""Why trots stop tracking on damped joints: how fast they go, how far their legs lag, how hard their motors push.

    python bench/investigations/damped_joints.py POLICY.onnx... [--name damped_joints]

The robustness matrix's "damped joints" cell (2 N m s/rad and 0.3 N m of friction loss on every leg joint, as in
MuJoCo Menagerie's models; ours have 0.1 and 0.2) is the one every shipped trot misses, on vx tracking alone (vx RMSE
0.23-0.31 against 0.2, no falls). Here each policy walks straight ahead on flat ground (32 robots, vx 0.3-1.0 m/s,
10 s, the eval's seed) at four levels of joint damping and friction loss, and after the first second this records
its forward speed (body frame) as a share of the command, over all commands and at 0.8 m/s and above; how far each
leg's thigh and calf lag their targets (RMS of target - measured, rad); and the motors' torque (the PD law, clipped
at the limit) as a share of the limit, its 99th percentile and how often it is at the limit. A policy whose motors
are at their limit cannot go faster on such legs; one whose motors have room could, by asking for more.

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

from surrogait_core.wire.motor_driver_law import pd_torque  # noqa: E402
from surrogait_train.conditions import EvalCondition  # noqa: E402
from surrogait_train.evaluate import PolicyRollout, command_set  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
EPISODE_S = 10.0
SETTLE_S = 1.0
# (joint damping N m s/rad, friction loss N m); None: the model's own (0.1, 0.2). The last is the matrix's cell.
LEVELS = ((None, None), (0.5, 0.1), (1.0, 0.2), (2.0, 0.3))
FAST_VX = 0.8  # m/s: "at speed"


def walk(path: str, episodes: int, damping: float | None, friction_loss: float | None) -> dict:
    condition = EvalCondition("damped", joint_damping=damping, joint_friction_loss=friction_loss)
    rollout = PolicyRollout(path, episodes, EPISODE_S, num_threads=1, condition=condition)
    c = rollout.contract
    cmds = command_set(episodes, vx=(0.3, 1.0), vy=(0, 0), yaw=(0, 0))
    limit = np.asarray(rollout.env.spec.joint_torque_limit)
    thigh, calf = np.arange(1, 12, 3), np.arange(2, 12, 3)  # SDK order: hip, thigh, calf per leg
    fell = np.zeros(episodes, bool)
    share, share_fast, lag_thigh, lag_calf, torque = [], [], [], [], []
    for step in rollout.steps(cmds):
        t, targets, state = step.t, step.joint_targets, step.state
        q, qd = step.before.joint_pos.numpy(), step.before.joint_vel.numpy()
        tau = pd_torque(np.asarray(c.kp), np.asarray(c.kd), targets, q, qd, torque_limit=limit)
        fell |= step.fell
        ok = ~fell
        if t * c.control_dt_s < SETTLE_S or not ok.any():
            continue
        ratio = state.base_lin_vel_b.numpy()[ok, 0] / cmds[ok, 0]
        share += list(ratio)
        share_fast += list(ratio[cmds[ok, 0] >= FAST_VX])
        lag_thigh += list((targets[ok][:, thigh] - q[ok][:, thigh]).ravel())
        lag_calf += list((targets[ok][:, calf] - q[ok][:, calf]).ravel())
        torque += list((np.abs(tau[ok]) / limit).ravel())
    rollout.close()
    torque = np.asarray(torque)
    rms = lambda x: round(float(np.sqrt(np.mean(np.square(x)))), 3)  # noqa: E731
    return {"policy": path, "joint_damping": damping, "joint_friction_loss": friction_loss, "falls": int(fell.sum()),
            "speed_share": round(float(np.mean(share)), 3), "speed_share_fast": round(float(np.mean(share_fast)), 3),
            "thigh_lag_rms_rad": rms(lag_thigh), "calf_lag_rms_rad": rms(lag_calf),
            "torque_share_p99": round(float(np.percentile(torque, 99)), 3),
            "at_torque_limit": round(float((torque >= 0.999).mean()), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--name", default="damped_joints")
    args = parser.parse_args()
    machine = describe_machine()
    rows = []
    for path in args.policies:
        for damping, friction_loss in LEVELS:
            rows.append(walk(path, args.episodes, damping, friction_loss))
            print(json.dumps(rows[-1]), flush=True)
    command = "python bench/investigations/damped_joints.py " + " ".join(sys.argv[1:])
    report = {"machine": machine, "command": command, "episodes": args.episodes, "rows": rows}
    RESULTS.joinpath(f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    RESULTS.joinpath(f"{args.name}.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    lines = [f"# Trots on damped joints ({report['machine']})", "", f"`{report['command']}`", "",
             f"{report['episodes']} robots per row, 10 s straight ahead on flat ground at 0.3-1.0 m/s, judged "
             "after the first second while standing: forward speed over the command (all commands; those of "
             "0.8 m/s and more), the RMS of each thigh's and calf's target minus its angle, and the motors' PD "
             "torque over the limit (99th percentile; share of joint-steps at the limit). The last level of each "
             "policy is the robustness matrix's \"damped joints\" cell; the first is the model's own joints "
             "(0.1 N m s/rad, 0.2 N m).", "",
             "| policy | damping N m s/rad · friction loss N m | falls | speed / command | at ≥ 0.8 m/s "
             "| thigh lag rad | calf lag rad | torque / limit p99 | at the limit |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        level = "model's own" if r["joint_damping"] is None else f"{r['joint_damping']} · {r['joint_friction_loss']}"
        lines.append(f"| `{Path(r['policy']).name}` | {level} | {r['falls']} | {r['speed_share']:.2f} "
                     f"| {r['speed_share_fast']:.2f} | {r['thigh_lag_rms_rad']:.3f} | {r['calf_lag_rms_rad']:.3f} "
                     f"| {r['torque_share_p99']:.2f} | {r['at_torque_limit']:.1%} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
