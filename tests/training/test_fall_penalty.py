"""reward.fall: a fall costs once, on the step it happens, so ending an episode is never a way out of penalties."""

import numpy as np
import torch

from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv


def step_with_half_the_robots_on_their_side(*overrides: str) -> tuple[torch.Tensor, dict]:
    cfg = load_config(None, ["env.num_envs=4", *overrides])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=3)
    env.reset(seed=3, randomize_episode_start=False)
    qpos = np.tile(env.spec.standing_qpos, (4, 1))
    qpos[:2, 3:7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # rolled 90 degrees: a fall
    env._mj_state[:] = env.physics.state_from_qpos(qpos, np.zeros((4, env.model.nv)))
    _, reward, _, info = env.step(torch.zeros(4, env.action_size))
    return reward, info


def test_a_fall_is_charged_once_on_the_step_it_happens():
    plain, plain_info = step_with_half_the_robots_on_their_side()
    charged, info = step_with_half_the_robots_on_their_side("reward.fall=-5")
    assert info["fell"].tolist() == [True, True, False, False] == plain_info["fell"].tolist()
    np.testing.assert_allclose((charged - plain).numpy(), [-5.0, -5.0, 0.0, 0.0], atol=1e-5)
    assert info["terms"]["fall"] == -2.5 and "fall" not in plain_info["terms"]
