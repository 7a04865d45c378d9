"""reward.swing_clearance: a swinging foot is charged for being below the clock's swing profile, never above
it and never in stance, so a blind policy on uneven ground can meet it by lifting its feet."""

import dataclasses

import pytest
import torch

from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.gaits import GAITS
from surrogait_train.rewards import compute_rewards, gait_reference


def gait_terms(env: LocomotionEnv, base_raise_m: float, phases: torch.Tensor) -> tuple[dict, torch.Tensor]:
    state = env.state
    state = dataclasses.replace(state, base_height=state.base_height + base_raise_m)  # every foot lifted with it
    cfg = dataclasses.replace(env.reward_cfg, swing_height=-1.0, swing_clearance=-1.0)
    action = torch.zeros(env.num_envs, env.action_size)
    gait = GAITS["trot"]
    _, terms = compute_rewards(
        state, action, action, env.joint_targets(action), env.commands, phases, gait, env.kinematics,
        env.nominal_feet_b, env.spec.foot_radius_m, env.kp, env.kd, env.torque_limit, env.default_joint_pos,
        (env.soft_joint_pos_lower, env.soft_joint_pos_upper), cfg, env.control_dt,
    )  # fmt: skip
    _, ref_height, stance = gait_reference(gait, phases, env.commands, env.nominal_feet_b, env.spec.foot_radius_m)
    return terms, (~stance * (ref_height - env.spec.foot_radius_m) ** 2).sum(-1)


def test_feet_on_the_ground_are_charged_for_the_swinging_legs_only():
    cfg = load_config(None, ["env.num_envs=2"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    env.reset(seed=0, randomize_episode_start=False)
    phases = torch.tensor([[0.75, 0.25, 0.25, 0.75]] * 2)  # FR and RL at the top of their swing
    terms, shortfall = gait_terms(env, 0.0, phases)
    expected = -float(shortfall.mean()) * env.control_dt
    assert expected < 0.0
    assert abs(terms["swing_clearance"] - expected) < 0.15 * abs(expected)  # standing feet sit near r, not at it


def test_feet_above_the_profile_are_not_charged():
    cfg = load_config(None, ["env.num_envs=2"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    env.reset(seed=0, randomize_episode_start=False)
    phases = torch.tensor([[0.75, 0.25, 0.25, 0.75]] * 2)
    terms, _ = gait_terms(env, 0.2, phases)  # every foot 20 cm up, above the 8 cm swing apex
    assert terms["swing_clearance"] == 0.0 and terms["swing_height"] < 0.0


def test_the_swing_apex_can_be_raised_and_the_contract_records_it():
    cfg = load_config(None, ["env.num_envs=2", "env.gait_swing_height_m=0.12"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    assert env.contract.gait.swing_height_m == 0.12 and env.contract.gait.period_s == GAITS["trot"].period_s
    phases = torch.tensor([[0.75, 0.25, 0.25, 0.75]])  # FR (SDK order: FR, FL, RR, RL) at its apex
    _, height, _ = gait_reference(env.gait, phases, torch.zeros(1, 3), env.nominal_feet_b, env.spec.foot_radius_m)
    assert float(height[0, 0]) == pytest.approx(env.spec.foot_radius_m + 0.12)
