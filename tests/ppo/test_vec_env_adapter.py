"""The rsl_rl adapter's interface logic, on a tiny stand-in environment.

Only the adapter's shape/bookkeeping is tested here; the PPO path on the real MuJoCo
environment is tested in test_ppo_real_env.py.
"""

import dataclasses

import pytest
import torch
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict

from surrogait_train.ppo.config import PPOConfig, apply_overrides
from surrogait_train.ppo.vec_env import RslRlVecEnv


@dataclasses.dataclass
class _Contract:
    control_dt_s: float = 0.02


class PointEnv:
    """x' = x + 0.1 a; reward -|x|^2; robot i times out after `limit` steps, 'falls' if |x| > 3."""

    def __init__(self, num_envs: int = 6, obs_size: int = 5, action_size: int = 3, limit: int = 7):
        self.num_envs, self.obs_size, self.action_size, self.limit = num_envs, obs_size, action_size, limit
        self.contract = _Contract()
        self.max_episode_length = limit
        self.x = torch.zeros(num_envs, obs_size)
        self.t = torch.zeros(num_envs, dtype=torch.long)

    def reset(self, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(self.num_envs, self.obs_size, generator=g)
        self.t.zero_()
        return self.x.clone()

    def step(self, actions):
        self.x[:, : self.action_size] += 0.1 * actions
        self.t += 1
        reward = -(self.x**2).sum(-1)
        fell = self.x.abs().amax(-1) > 3.0
        timeout = self.t >= self.limit
        done = fell | timeout
        self.x[done] = 0.0
        self.t[done] = 0
        # requires_grad output: the real env's values may carry a graph; the adapter must detach it.
        return self.x.clone().requires_grad_(True), reward, done, {"time_outs": timeout & ~fell, "fall_rate": 0.5}


def test_observations_are_a_policy_group_of_the_contract_size():
    vec = RslRlVecEnv(PointEnv(), seed=3)
    obs = vec.get_observations()
    assert isinstance(obs, TensorDict)
    assert list(obs.keys()) == ["policy"]
    assert obs["policy"].shape == (6, 5)
    assert vec.num_actions == 3 and vec.max_episode_length == 7


def test_step_shapes_time_outs_and_episode_lengths():
    vec = RslRlVecEnv(PointEnv(limit=2), seed=0)
    zero = torch.zeros(6, 3)
    obs, rew, done, extras = vec.step(zero)
    assert not obs["policy"].requires_grad
    assert rew.shape == (6,) and done.shape == (6,) and rew.dtype == torch.float32
    assert torch.equal(vec.episode_length_buf, torch.ones(6, dtype=torch.long))
    obs, rew, done, extras = vec.step(zero)
    assert done.bool().all()
    assert torch.equal(extras["time_outs"], torch.ones(6))  # time limit, not falls: PPO bootstraps these
    assert torch.equal(vec.episode_length_buf, torch.zeros(6, dtype=torch.long))
    assert extras["log"] == {"Env/fall_rate": 0.5}  # time_outs is not repeated in the log
    assert vec.env_steps == 12


def test_a_fall_is_not_a_time_out():
    env = PointEnv(num_envs=2, limit=100)
    vec = RslRlVecEnv(env, seed=0)
    _, _, done, extras = vec.step(torch.tensor([[100.0, 0, 0], [0.0, 0, 0]]))
    assert done.tolist() == [1, 0]
    assert extras["time_outs"].tolist() == [0.0, 0.0]


def test_wrong_action_shape_is_a_clear_error():
    vec = RslRlVecEnv(PointEnv(), seed=0)
    with pytest.raises(ValueError, match=r"expects \(6, 3\)"):
        vec.step(torch.zeros(6, 4))


def test_rsl_rl_runner_accepts_the_adapter_and_uses_the_requested_actor():
    torch.manual_seed(0)
    cfg = PPOConfig(num_steps_per_env=4, num_mini_batches=2, actor_hidden=[16, 8], critic_hidden=[16])
    vec = RslRlVecEnv(PointEnv(), seed=0)
    runner = OnPolicyRunner(vec, cfg.runner_cfg(), log_dir=None, device="cpu")
    runner.learn(2)
    linear = [m for m in runner.alg.get_policy().mlp if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linear] == [(5, 16), (16, 8), (8, 3)]
    assert isinstance(runner.alg.get_policy().mlp[1], torch.nn.ELU)
    assert vec.env_steps == 2 * 4 * 6


def test_ppo_overrides_are_typed_and_checked():
    cfg = apply_overrides(PPOConfig(), ["entropy_coef=0.005", "ppo.num_steps_per_env=48", "actor_hidden=[64, 64]"])
    assert cfg.entropy_coef == 0.005 and cfg.num_steps_per_env == 48 and cfg.actor_hidden == [64, 64]
    with pytest.raises(ValueError, match="unknown PPO config key"):
        apply_overrides(PPOConfig(), ["entropy=0.1"])
    with pytest.raises(ValueError, match="expects a int"):
        apply_overrides(PPOConfig(), ["num_steps_per_env=abc"])
