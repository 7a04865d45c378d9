"""Does a short Go1 training run end with a yaw drift of its own, or does the Go1 model turn every policy one way?

For each seed: the demo's training (`configs/go1_trot.yaml` and the Go1's demo recipe, 120 s; the finding below
was measured with the recipe of its day, 512 robots), then the final policy walks straight (vx 0.5 and 1.0 m/s, no
sideways or turn command) on 16 robots in the trainer's environment through the deployment runner; prints the mean
yaw rate after the first second, and its range over the robots. A policy file instead of a seed is measured as it
is (the shipped ones, for comparison).

    python bench/investigations/go1_yaw_drift.py 0 1 2 ros2_ws/src/surrogait_bringup/policies/go1_trot.onnx

Finding (2026-12-05, 2-core machine; docs/training-log.md, 2026-12-05 (5)): +0.09 / -0.07 rad/s (seed 0, at 0.5 /
1.0 m/s), -0.05 / -0.20 (seed 1), -0.20 / +0.11 (seed 2); shipped go1_trot -0.03 / +0.03, go2_trot +0.01 / -0.01.
The sign changes with the seed and the speed: the short run's own bias, not the model's.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_train.api import DEMO_TRAINING_OVERRIDES, train_and_export
from surrogait_train.config import EnvConfig, default_config_path
from surrogait_train.env import LocomotionEnv

EVAL_SEED = 10000


def straight_yaw_rate(path: str, vx: float, robots: int = 16, seconds: float = 8.0) -> tuple[float, float, float]:
    """Mean yaw rate (rad/s) walking straight at `vx` after the first second, and its least and largest per robot."""
    policy = OnnxPolicy(path)
    c = policy.contract
    env = LocomotionEnv(EnvConfig(robot=c.robot, num_envs=robots, num_threads=2, physics_dt_s=c.control_dt_s / 4,
                                  substeps=4, kp=list(c.kp), kd=list(c.kd), episode_length_s=seconds + 1.0,
                                  init_joint_noise_rad=0.02), seed=EVAL_SEED)
    runner = PolicyRunner(policy)
    runner.reset(num_robots=robots)
    env.reset(seed=EVAL_SEED, randomize_episode_start=False)
    state, commands, yaw = env.state, np.tile([vx, 0.0, 0.0], (robots, 1)), []
    for t in range(int(seconds / c.control_dt_s)):
        terms = runner.terms(state.base_ang_vel_b.numpy(), state.projected_gravity_b.numpy(),
                             state.joint_pos.numpy(), state.joint_vel.numpy(), commands,
                             np.full(robots, t * c.control_dt_s), state.base_lin_vel_b.numpy())
        state, _ = env.advance_physics(runner.act(terms).joint_targets)
        if t * c.control_dt_s >= 1.0:
            yaw.append(state.base_ang_vel_b.numpy()[:, 2])
    env.close()
    per_robot = np.array(yaw).mean(0)
    return float(per_robot.mean()), float(per_robot.min()), float(per_robot.max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="a seed to train the demo's Go1 policy with, or a policy .onnx")
    parser.add_argument("--budget-s", type=float, default=120.0, help="training seconds per seed (the demo's)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="go1_yaw_drift."))
    for run in args.runs:
        if run.endswith(".onnx"):
            path = run
        else:
            out = work / f"seed{run}" / "policy.onnx"
            out.parent.mkdir(parents=True)
            train_and_export([*DEMO_TRAINING_OVERRIDES["go1"], f"seed={int(run)}"], budget_s=args.budget_s,
                             out_path=out, config_path=default_config_path("go1_trot"), run_dir=out.parent / "training",
                             progress=False)
            path = str(out)
        for vx in (0.5, 1.0):
            mean, low, high = straight_yaw_rate(path, vx)
            print(f"{run}: vx {vx}: mean yaw rate {mean:+.3f} rad/s (per robot {low:+.3f}..{high:+.3f})", flush=True)


if __name__ == "__main__":
    main()
