"""reward.support_balance: the body is charged by its horizontal distance from the centroid of its scheduled stance
feet, so a pace (two legs of one side in stance) is asked to sway over them; a trot's diagonal is under the body."""

import dataclasses

import torch

from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.gaits import GAITS
from surrogait_train.rewards import compute_rewards


def support_term(env: LocomotionEnv, gait: str, phases: list[float]) -> float:
    action = torch.zeros(env.num_envs, env.action_size)
    cfg = dataclasses.replace(env.reward_cfg, support_balance=-1.0)
    _, terms = compute_rewards(
        env.state, action, action, env.joint_targets(action), env.commands, torch.tensor([phases]), GAITS[gait],
        env.kinematics, env.nominal_feet_b, env.spec.foot_radius_m, env.kp, env.kd, env.torque_limit,
        env.default_joint_pos, (env.soft_joint_pos_lower, env.soft_joint_pos_upper), cfg, env.control_dt,
    )  # fmt: skip
    return terms["support_balance"] / env.control_dt


def test_a_pace_is_asked_to_sway_over_its_stance_side_and_a_trot_is_not():
    cfg = load_config(None, ["env.num_envs=1"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    env.reset(seed=0, randomize_episode_start=False)
    level = torch.tensor([[0.0, 0.0, -1.0]])
    env.state = dataclasses.replace(env.state, joint_pos=env.default_joint_pos.unsqueeze(0), projected_gravity_b=level)
    feet_xy = env.nominal_feet_b[:, :2]  # the default pose's feet (SDK order FR, FL, RR, RL)
    trot = support_term(env, "trot", [0.25, 0.75, 0.75, 0.25])  # FR and RL in stance: a diagonal
    pace = support_term(env, "pace", [0.25, 0.75, 0.25, 0.75])  # FR and RR in stance: the right side
    expected_trot = float((0.5 * (feet_xy[0] + feet_xy[3])).square().sum())
    expected_pace = float((0.5 * (feet_xy[0] + feet_xy[2])).square().sum())
    assert abs(-trot - expected_trot) < 1e-6 and expected_trot < 0.003, "a diagonal passes within 5 cm of the base"
    assert abs(-pace - expected_pace) < 1e-6 and expected_pace > 0.025, "one side's is a half-width (17 cm) away"
