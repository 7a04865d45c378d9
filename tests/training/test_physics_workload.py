"""The throughput benches' raw baseline: a trainer's own physics calls, recorded and stepped again bare."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from surrogait_train.config import EnvConfig
from surrogait_train.env import LocomotionEnv

_PATH = Path(__file__).resolve().parents[2] / "bench" / "mujoco_throughput.py"
_spec = importlib.util.spec_from_file_location("mujoco_throughput", _PATH)
mt = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("mujoco_throughput", mt)
_spec.loader.exec_module(mt)


def _env() -> LocomotionEnv:
    env = LocomotionEnv(EnvConfig(num_envs=3, num_threads=1), seed=0)
    env.reset(seed=0)
    return env


def test_recorded_calls_replay_to_the_same_states():
    env = _env()
    workload = mt.PhysicsWorkload(env.physics)
    rng = np.random.default_rng(0)
    outputs = []
    for _ in range(4):
        targets = env.spec.default_joint_pos + 0.2 * rng.standard_normal((3, 12))
        env.advance_physics(targets)
        outputs.append(env._mj_state.copy())
    records = list(workload.records)
    assert len(records) == 4
    for inputs, expected in zip(records, outputs, strict=True):
        np.testing.assert_array_equal(env.physics.step(*inputs)[0], expected)  # MuJoCo is deterministic
    assert workload.replay_steps_per_s() > 0
    env.close()


def test_a_long_run_keeps_an_even_sample_in_bounded_memory():
    env = _env()
    workload = mt.PhysicsWorkload(env.physics, max_records=4)
    targets = np.tile(env.spec.default_joint_pos, (3, 1))
    first_state = env._mj_state.copy()
    for _ in range(10):
        env.advance_physics(targets)
    # calls 0-4 fill the sample past 4 records: it keeps calls 0, 2, 4 and records every 2nd call; call 6
    # joins, call 8 overfills it again: calls 0, 4, 8 remain and every 4th call is recorded
    assert workload.stride == 4
    assert len(workload.records) == 3
    np.testing.assert_array_equal(workload.records[0][0], first_state)
    env.close()


def test_fractions_are_reported_against_both_baselines():
    rates = mt.rates_vs_raw(500.0, workload_raw=1000.0, standing_before=1900.0, standing_after=2100.0)
    assert rates["trainer_fraction_of_raw"] == 0.5
    assert rates["standing_raw_steps_per_s"] == 2000.0
    assert rates["trainer_fraction_of_standing_raw"] == 0.25
