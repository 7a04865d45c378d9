"""Training keeps joint targets inside the soft joint range its exported contract carries, and
penalises joint positions outside it (legged_gym's soft_dof_pos_limit and dof_pos_limits)."""

from __future__ import annotations

import numpy as np
import torch

from surrogait_core.policy.locomotion_contract import soft_joint_range
from surrogait_core.robot_spec import load_robot_spec
from surrogait_train.config import EnvConfig, RewardConfig
from surrogait_train.env import LocomotionEnv, make_contract
from surrogait_train.rewards import soft_range_violation

SPEC = load_robot_spec("go2")


def test_the_contract_carries_the_configs_soft_range_and_the_default_pose():
    contract = make_contract(EnvConfig(soft_joint_range_fraction=0.8))
    lower, upper = soft_joint_range(SPEC.joint_pos_lower, SPEC.joint_pos_upper, 0.8)
    np.testing.assert_allclose(contract.soft_joint_pos_lower, lower)
    np.testing.assert_allclose(contract.soft_joint_pos_upper, upper)
    np.testing.assert_array_equal(contract.default_joint_pos, SPEC.default_joint_pos)
    assert EnvConfig().soft_joint_range_fraction == 0.9  # the one place the default is defined


def test_env_clips_joint_targets_to_the_soft_range_and_steps_with_them():
    env = LocomotionEnv(EnvConfig(num_envs=2, num_threads=1), seed=0)
    try:
        lower = torch.tensor(env.contract.soft_joint_pos_lower)
        upper = torch.tensor(env.contract.soft_joint_pos_upper)
        actions = torch.tensor([[9.0] * 12, [-9.0] * 12], requires_grad=True)  # 2.25 rad from the default pose
        unclipped = (env.action_offset + env.action_scale * actions).detach()
        clipped = (unclipped > upper) | (unclipped < lower)
        assert clipped[0].any() and clipped[1].any()
        targets = env.joint_targets(actions)
        torch.testing.assert_close(targets.detach(), unclipped.clamp(lower.float(), upper.float()))
        targets.sum().backward()
        assert not actions.grad[clipped].any(), "a clipped target does not depend on its action"
        assert actions.grad[~clipped].all()
        env.reset(seed=0)
        _, _, _, info = env.step(torch.zeros(2, 12))
        assert "joint_pos_limits" in info["terms"]
    finally:
        env.close()


def test_soft_range_penalty_is_the_distance_outside_the_range_and_zero_inside():
    lower, upper = torch.tensor([-1.0, 0.0]), torch.tensor([1.0, 2.0])
    q = torch.tensor([[0.5, 1.0], [1.2, -0.3], [-1.1, 2.0]])
    torch.testing.assert_close(soft_range_violation(q, lower, upper), torch.tensor([0.0, 0.5, 0.1]))
    assert RewardConfig().joint_pos_limits < 0
