"""The zeroth-order (likelihood-ratio) share of the actor's update (learner.zeroth_order_weight)."""

from __future__ import annotations

import pytest
import torch

from surrogait_train.trainer import Trainer


def test_the_likelihood_ratio_needs_exploration_noise(tiny_config, tmp_path):
    tiny_config.learner.zeroth_order_weight = 0.5
    tiny_config.learner.action_noise_std = 0.0
    with pytest.raises(ValueError, match="action_noise_std"):
        Trainer(tiny_config, tmp_path / "run")


def test_the_weight_is_a_share_between_zero_and_one(tiny_config, tmp_path):
    tiny_config.learner.zeroth_order_weight = 1.5
    with pytest.raises(ValueError, match=r"zeroth_order_weight must be in \[0, 1\]"):
        Trainer(tiny_config, tmp_path / "run")


def _one_update(cfg, run_dir, weight: float):
    cfg.learner.zeroth_order_weight = weight
    cfg.learner.action_noise_std = 0.3
    cfg.learner.grad_spike_factor = 0.0
    trainer = Trainer(cfg, run_dir)
    trainer.env.reset(seed=11, randomize_episode_start=False)
    trainer.learner.obs = None
    before = [p.detach().clone() for p in trainer.learner.actor.parameters()]
    stats = trainer.learner.iterate()
    step = torch.cat([(p.detach() - b).flatten() for p, b in zip(trainer.learner.actor.parameters(), before,
                                                                   strict=True)])
    trainer.env.close()
    return stats, step


def test_a_mixed_update_turns_the_first_order_step_without_growing_it(tiny_config, tmp_path):
    first, step_first = _one_update(tiny_config, tmp_path / "a", 0.0)
    mixed, step_mixed = _one_update(tiny_config, tmp_path / "b", 0.5)
    # the same window (same seed, same noise): only the update's direction differs
    assert mixed.actor_loss == pytest.approx(first.actor_loss)
    cosine = torch.nn.functional.cosine_similarity(step_first, step_mixed, dim=0)
    assert 0.0 < cosine < 0.999, cosine
    # the mix of two unit directions is at most as long as each: the first-order norm bounds it
    assert mixed.grad_norm <= first.grad_norm * (1 + 1e-5), (mixed.grad_norm, first.grad_norm)


def test_advantages_are_the_windows_discounted_td_errors_cut_at_episode_ends(tiny_config, tmp_path):
    trainer = Trainer(tiny_config, tmp_path / "run")
    learner = trainer.learner
    with torch.no_grad():
        learner.target_critic.net[-1].weight.zero_()
        learner.target_critic.net[-1].bias.zero_()
    h, n = 4, 2
    obs = torch.zeros(h, n, trainer.env.obs_size)
    rew = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    done = torch.zeros(h, n, dtype=torch.bool)
    done[1, 0] = True  # robot 0's episode ends after step 1
    next_value = torch.zeros(h, n)
    got = learner._advantages(obs, rew, done, next_value)
    gl = tiny_config.learner.gamma * tiny_config.learner.lam
    expected = torch.tensor([[1.0, gl**2], [0.0, gl], [gl, 1.0], [1.0, 0.0]])
    expected = (expected - expected.mean()) / expected.std()
    trainer.env.close()
    torch.testing.assert_close(got, expected)
