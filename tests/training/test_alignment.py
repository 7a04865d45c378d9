"""Alignment: the differentiable rollout's values are MuJoCo's exactly; its policy gradients are finite and non-zero."""

from __future__ import annotations

import pytest
import torch

from surrogait_train.diff_env import SurrogateRollout
from surrogait_train.env import LocomotionEnv
from surrogait_train.networks import Actor
from surrogait_train.surrogate import VARIANTS, Surrogate


def _make(cfg, variant):
    env = LocomotionEnv(cfg.env, cfg.reward, seed=3)
    cfg.surrogate.variant = variant
    sur = Surrogate(
        cfg.surrogate, env.kinematics, env.spec, env.model, env.kp, env.kd, env.control_dt, cfg.env.substeps
    )
    return env, SurrogateRollout(env, sur, cfg.surrogate.gradient_decay)


@pytest.mark.parametrize("variant", VARIANTS)
def test_forward_values_equal_mujoco_and_gradients_flow(tiny_config, variant):
    torch.manual_seed(0)
    actor = Actor(53, 12, [32, 32])
    with torch.no_grad():  # a policy that moves the legs noticeably
        actor.net[-1].weight.normal_(0, 0.3)
    plain, _ = _make(tiny_config, variant)
    diff_env, rollout = _make(tiny_config, variant)
    obs_plain, obs_diff = plain.reset(seed=5), diff_env.reset(seed=5)
    torch.testing.assert_close(obs_plain, obs_diff, rtol=0, atol=0)
    total = torch.zeros(())
    for _ in range(12):
        with torch.no_grad():
            a_plain = actor(obs_plain)
        a_diff = actor(obs_diff)
        obs_plain, r_plain, d_plain, _ = plain.step(a_plain)
        obs_diff, r_diff, d_diff, _ = rollout.step(a_diff)
        # value == MuJoCo's, bit for bit: same observations and rewards as the plain (non-differentiable) env
        assert torch.equal(obs_diff.detach(), obs_plain)
        assert torch.equal(r_diff.detach(), r_plain)
        assert torch.equal(d_plain, d_diff)
        sim = diff_env._sim_state()
        for name in ("joint_pos", "joint_vel", "base_lin_vel_b", "base_ang_vel_b", "base_height"):
            aligned = getattr(diff_env.state, name).detach()
            assert torch.equal(aligned, getattr(sim, name)), name
        total = total + r_diff.sum()
    total.backward()
    grads = torch.cat([p.grad.reshape(-1) for p in actor.parameters() if p.grad is not None])
    assert torch.isfinite(grads).all()
    assert grads.abs().sum() > 0
    plain.close()
    diff_env.close()
