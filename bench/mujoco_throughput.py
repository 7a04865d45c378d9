"""Raw batched MuJoCo stepping throughput of the training model (PD actuators, 4 physics steps per control step).

    python bench/mujoco_throughput.py [--num-envs 64] [--seconds 5]

Also imported by bench/train_to_walk.py and bench/trainer_throughput.py, which measure two raw rates in the
same run as training: standing robots (`raw_control_steps_per_s`) and the trainer's own recorded physics
inputs stepped again bare (`PhysicsWorkload`).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from surrogait_train.config import EnvConfig
from surrogait_train.env import LocomotionEnv
from surrogait_train.physics import BatchedPhysics


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


class PhysicsWorkload:
    """Records the (state, joint targets) inputs a trainer hands to MuJoCo, to step them again bare.

    Walking, stumbling and falling robots cost MuJoCo more than standing ones (more contacts change), so
    the like-for-like raw rate for a trainer is its own physics inputs stepped back to back with nothing
    else running. Records every `stride`-th call; beyond `max_records` it keeps every other record and
    doubles the stride, so a long run keeps an even sample in bounded memory.
    """

    def __init__(self, physics: BatchedPhysics, max_records: int = 400, stride: int = 1):
        self.physics, self.max_records, self.stride = physics, max_records, stride
        self.records: list[tuple[np.ndarray, ...]] = []  # (state, joint targets[, held targets, delay steps])
        self._calls = 0
        self._step = physics.step
        physics.step = self._recording_step  # instance attribute: only this physics object records

    def _recording_step(self, state: np.ndarray, joint_targets: np.ndarray, *delayed):
        if self._calls % self.stride == 0:
            self.records.append(tuple(np.array(x, copy=True) for x in (state, joint_targets, *delayed)))
            if len(self.records) > self.max_records:
                self.records, self.stride = self.records[::2], 2 * self.stride
        self._calls += 1
        return self._step(state, joint_targets, *delayed)

    def replay_steps_per_s(self) -> float:
        """Control steps per second (robots x policy steps) of stepping the recorded inputs back to back."""
        if not self.records:
            raise ValueError("no physics calls recorded: run the trainer before replaying its workload")
        self._step(*self.records[0])  # wake the worker threads
        start = time.perf_counter()
        for inputs in self.records:
            self._step(*inputs)
        return len(self.records) * len(self.records[0][0]) / (time.perf_counter() - start)


def rates_vs_raw(
    trainer_steps_per_s: float, workload_raw: float, standing_before: float, standing_after: float
) -> dict:
    """The trainer's rate as a fraction of raw MuJoCo stepping of its own workload, and of standing robots.

    The first is the like-for-like figure (the same physics inputs, nothing else running); the second
    (mean of the standing measurements before and after training) is the cheapest stepping the model allows.
    """
    standing = 0.5 * (standing_before + standing_after)
    return {
        "trainer_env_steps_per_s": round(trainer_steps_per_s, 1),
        "raw_mujoco_steps_per_s": round(workload_raw, 1),
        "trainer_fraction_of_raw": round(trainer_steps_per_s / workload_raw, 3),
        "standing_raw_steps_per_s": round(standing, 1),
        "standing_raw_before_after": [round(standing_before, 1), round(standing_after, 1)],
        "trainer_fraction_of_standing_raw": round(trainer_steps_per_s / standing, 3),
    }


RATE_HEADER = "trainer steps/s | raw (workload) steps/s | fraction | raw (standing) steps/s | fraction"


def rate_cells(run: dict) -> str:
    """The `rates_vs_raw` fields of a run as markdown table cells, in RATE_HEADER's order."""
    return (
        f"{run['trainer_env_steps_per_s']} | {run['raw_mujoco_steps_per_s']} | {run['trainer_fraction_of_raw']} | "
        f"{run['standing_raw_steps_per_s']} | {run['trainer_fraction_of_standing_raw']}"
    )


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
