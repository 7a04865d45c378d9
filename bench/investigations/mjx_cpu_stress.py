"""Step many robots with MJX on JAX's CPU device for a while: the reproducer of the XLA CPU pool deadlock.

    python bench/investigations/mjx_cpu_stress.py [--robots 256] [--steps 100] [--start-jax-first]

With `--start-jax-first`, JAX's CPU backend starts before `surrogait_train.mjx_physics` is imported, as it did
before that module started it with a one-thread pool: on 2 cores this hung within 60 control steps in 2 runs of 2
(every thread asleep in `jax::ParallelBatchMap`; mjx_physics.py's `_start_cpu_backend_with_one_thread` says why).
Run that case under `timeout`. Prints the seconds per control step and the pool's thread count.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--start-jax-first", action="store_true", help="the old start-up: a pool of all cores")
    args = parser.parse_args()
    if args.start_jax_first:
        import jax

        jax.devices()
    from surrogait_train.config import EnvConfig
    from surrogait_train.env import LocomotionEnv
    from surrogait_train.mjx_physics import _xla_cpu_pool_threads

    env = LocomotionEnv(EnvConfig(num_envs=args.robots, backend="mjx"))
    env.reset(seed=0)
    targets = np.tile(env.spec.default_joint_pos, (args.robots, 1))
    state, _ = env.physics.step(env._mj_state.copy(), targets)  # compiles
    print(f"XLA CPU pool threads: {_xla_cpu_pool_threads()} (CPUs: {len(os.sched_getaffinity(0))})", flush=True)
    start = time.perf_counter()
    for step in range(args.steps):
        state, _ = env.physics.step(state, targets)
        if step % 20 == 19:
            print(f"{step + 1} control steps", flush=True)
    per_step = (time.perf_counter() - start) / args.steps
    print(f"{args.steps} control steps of {args.robots} robots: {per_step:.3f} s each")


if __name__ == "__main__":
    main()
