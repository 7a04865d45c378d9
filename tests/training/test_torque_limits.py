"""reward.torque_limits: joint torques past a fraction of each motor's limit are charged, so a gait keeps its
peaks clear of the safety monitor's torque rule; torques inside that fraction cost nothing."""

import dataclasses

import torch

from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.gaits import GAITS
from surrogait_train.rewards import compute_rewards


def torque_limits_term(env: LocomotionEnv, target_offset_rad: float) -> float:
    state = env.state
    action = torch.zeros(env.num_envs, env.action_size)
    targets = state.joint_pos + target_offset_rad  # kp x offset of torque on every joint (at rest)
    cfg = dataclasses.replace(env.reward_cfg, torque_limits=-1.0, soft_torque_limit_fraction=0.7)
    _, terms = compute_rewards(
        state, action, action, targets, env.commands, env.phases(), GAITS["trot"], env.kinematics,
        env.nominal_feet_b, env.spec.foot_radius_m, env.kp, env.kd, env.torque_limit, env.default_joint_pos,
        (env.soft_joint_pos_lower, env.soft_joint_pos_upper), cfg, env.control_dt,
    )  # fmt: skip
    return terms["torque_limits"]


def test_torques_past_the_soft_fraction_are_charged_by_their_excess():
    cfg = load_config(None, ["env.num_envs=1"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    env.reset(seed=0, randomize_episode_start=False)
    env.state = dataclasses.replace(env.state, joint_vel=torch.zeros_like(env.state.joint_vel))
    limit, kp = env.torque_limit, env.kp
    small = 0.5 * float((limit / kp).min())  # half of the smallest limit on every joint
    assert torque_limits_term(env, small) == 0.0
    large = 0.9 * float((limit / kp).min())  # past 0.7 of the hip and thigh limits, not the calf's
    tau = (kp * large).clamp(max=limit)
    expected = -float((tau - 0.7 * limit).clamp(min=0).sum()) * env.control_dt
    assert expected < 0
    assert abs(torque_limits_term(env, large) - expected) < 1e-6
