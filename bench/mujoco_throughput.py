"""Raw batched MuJoCo stepping throughput of the training model (PD actuators, 4 physics steps per control step).

    python bench/mujoco_throughput.py [--num-envs 64] [--seconds 5]

Also imported by bench/train_to_walk.py to measure the raw rate in the same run as training.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from surrogait_train.config import EnvConfig
from surrogait_train.env import LocomotionEnv


def raw_control_steps_per_s(cfg: EnvConfig, seconds: float = 3.0) -> float:
    """Control steps per second (robots x policy steps) of bare batched physics with fixed standing targets."""
    env = LocomotionEnv(cfg, seed=0)
    env.reset(seed=0)
    targets = np.tile(env.spec.default_joint_pos, (cfg.num_envs, 1))
    state = env._mj_state.copy()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, _ = env.physics.step(state, targets)
        steps += cfg.num_envs
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate


def rates_vs_raw(trainer_steps_per_s: float, raw_before: float, raw_after: float) -> dict:
    """The trainer's rate next to the raw rate (mean of the measurements before and after it) and their ratio."""
    raw = 0.5 * (raw_before + raw_after)
    return {
        "trainer_env_steps_per_s": round(trainer_steps_per_s, 1),
        "raw_mujoco_steps_per_s": round(raw, 1),
        "raw_before_after": [round(raw_before, 1), round(raw_after, 1)],
        "trainer_fraction_of_raw": round(trainer_steps_per_s / raw, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    cfg = EnvConfig(num_envs=args.num_envs, num_threads=args.threads)
    rate = raw_control_steps_per_s(cfg, args.seconds)
    print(json.dumps({"num_envs": args.num_envs, "threads": args.threads, "control_steps_per_s": round(rate)}))


if __name__ == "__main__":
    main()
