"""A few SHAC iterations reduce the loss on a fixed seed.

The problem is made deterministic and fixed: every iteration restarts the same robots with the
same commands (seed 11), exploration noise is off, and the critic is zero and frozen, so the actor
loss is exactly the negative discounted reward of the window. First-order gradients through the
surrogate-aligned rollout must then reduce it step after step.
"""

from __future__ import annotations

import pytest
import torch

from surrogait_train.trainer import Trainer


def test_few_iterations_reduce_the_loss(tiny_config, tmp_path):
    cfg = tiny_config
    cfg.learner.action_noise_std = 0.0
    cfg.learner.critic_lr = 0.0
    cfg.learner.actor_lr = 1e-3
    cfg.env.zero_command_prob = 0.0
    trainer = Trainer(cfg, tmp_path / "run")
    with torch.no_grad():
        for critic in (trainer.learner.critic, trainer.learner.target_critic):
            critic.net[-1].weight.zero_()
            critic.net[-1].bias.zero_()
    losses = []
    for _ in range(6):
        trainer.env.reset(seed=11, randomize_episode_start=False)
        trainer.learner.obs = None
        losses.append(trainer.learner.iterate().actor_loss)
    trainer.env.close()
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False)), losses
    assert losses[-1] < losses[0] - 0.02 * abs(losses[0]), losses


def test_an_actor_gradient_far_above_the_running_mean_is_skipped(tiny_config, tmp_path):
    """A spike (norm > grad_spike_factor x running mean) leaves the actor unchanged; normal steps move it."""
    trainer = Trainer(tiny_config, tmp_path / "run")
    learner = trainer.learner
    before = [p.detach().clone() for p in learner.actor.parameters()]
    learner.grad_norm_mean = 1e-9  # any real gradient is a spike against this mean
    stats = learner.iterate()
    assert stats.update_skipped and stats.grad_norm > 0
    assert all(torch.equal(a, b) for a, b in zip(before, learner.actor.parameters(), strict=True))

    learner.cfg.grad_spike_factor = 0.0  # rejection off: the same situation updates the actor
    learner.grad_norm_mean = 1e-9
    stats = learner.iterate()
    trainer.env.close()
    assert not stats.update_skipped
    assert any(not torch.equal(a, b) for a, b in zip(before, learner.actor.parameters(), strict=True))


def test_a_spike_shortens_the_gradients_reach_until_updates_are_accepted_again(tiny_config, tmp_path):
    """After a skipped update the per-step gradient decay shrinks; accepted updates grow it back to the config's."""
    trainer = Trainer(tiny_config, tmp_path / "run")
    learner, configured = trainer.learner, tiny_config.surrogate.gradient_decay
    learner.grad_norm_mean = 1e-9
    stats = learner.iterate()
    assert stats.update_skipped and stats.gradient_decay == configured  # the window ran with the configured g
    shrunk = trainer.rollout.decay
    assert shrunk == configured * tiny_config.learner.spike_decay_factor
    assert learner.state_dict()["gradient_decay"] == shrunk  # resumable

    learner.grad_norm_mean = 1e9  # nothing is a spike now
    stats = learner.iterate()
    assert not stats.update_skipped and stats.gradient_decay == shrunk
    assert shrunk < trainer.rollout.decay <= configured
    for _ in range(30):
        learner._adapt_gradient_decay(spiked=False)
    trainer.env.close()
    assert trainer.rollout.decay == configured


def test_updates_run_on_their_own_thread_count_and_restore_the_rollouts():
    from surrogait_train.shac import torch_threads

    torch.set_num_threads(1)
    with pytest.raises(RuntimeError):
        with torch_threads(2):
            assert torch.get_num_threads() == 2
            raise RuntimeError("an update failed")
    assert torch.get_num_threads() == 1
    with torch_threads(0):  # 0 leaves the count alone
        assert torch.get_num_threads() == 1
