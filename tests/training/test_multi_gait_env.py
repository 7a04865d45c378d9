"""A multi-gait environment: each robot walks with its own gait, sees its parameters, and keeps its
clock's phase when it switches gait (as the policy node does on the robot)."""

import numpy as np
import pytest
import torch

from surrogait_core.policy.gait import gait_features
from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv

GAITS = ["trot", "pace", "bound", "gallop"]


def make_env(*overrides: str) -> LocomotionEnv:
    cfg = load_config(None, ["env.num_envs=32", f"env.gaits=[{','.join(GAITS)}]",
                             "env.gait_lin_vel_x=[[0.0,1.0],[0.0,1.0],[0.5,1.5],[0.5,1.5]]", *overrides])
    return LocomotionEnv(cfg.env, cfg.reward, seed=3)


def test_each_robot_sees_its_own_gaits_parameters_and_clock():
    env = make_env()
    obs = env.reset()
    contract = env.contract
    assert contract.gait_names == tuple(GAITS) and contract.command_ranges.lin_vel_x == (0.0, 1.5)
    assert set(env.gait_index) == {0, 1, 2, 3}, "every gait is trained"
    terms = env.raw_terms(env.state, env.last_action)
    expected = np.stack([gait_features(contract.gaits[i]) for i in env.gait_index])
    np.testing.assert_allclose(terms["gait_params"].numpy(), expected, rtol=1e-6)
    # the observation carries them, scaled as the contract says
    start = sum(t.size for t in contract.observation[:-1])
    np.testing.assert_allclose(obs[:, start:].numpy(), expected * contract.term("gait_params").scale, rtol=1e-6)
    offsets = np.array([contract.gaits[i].phase_offsets for i in env.gait_index])
    np.testing.assert_allclose(env.phases().numpy(), np.mod(offsets, 1.0), atol=1e-6)


def test_fast_gaits_are_commanded_fast():
    env = make_env("env.zero_command_prob=0.0")
    env.reset()
    vx = env.commands[:, 0].numpy()
    fast = np.isin(env.gait_index, [2, 3])
    assert np.all(vx[fast] >= 0.5) and np.all(vx[fast] <= 1.5) and np.all(vx[~fast] <= 1.0)


def test_a_gait_switch_keeps_the_clock_running():
    env = make_env("env.gait_switch_prob=1.0", "env.command_resample_s=0.1", "env.episode_length_s=100")
    env.reset(randomize_episode_start=False)
    periods = np.array([g.period_s for g in env.contract.gaits])
    phase, switched = env.gait_phase.copy(), False
    for _ in range(12):
        index = env.gait_index.copy()
        env.step(torch.zeros(env.num_envs, 12))
        # one step at the rate of the gait walked during it, whatever gait comes next
        np.testing.assert_allclose(env.gait_phase, phase + env.control_dt / periods[index], atol=1e-9)
        phase = env.gait_phase.copy()
        switched |= bool(np.any(env.gait_index != index))
    assert switched


def test_rewards_and_the_reference_are_finite_for_every_gait():
    env = make_env()
    env.reset()
    _, reward, _, _ = env.step(env.reference_action())
    assert torch.isfinite(reward).all() and torch.isfinite(env.reference_action()).all()


def test_gait_ranges_must_match_the_gaits():
    with pytest.raises(ValueError, match="one \\[low, high\\] per gait"):
        make_env("env.gait_lin_vel_x=[[0.0,1.0]]")
