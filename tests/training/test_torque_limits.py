"""reward.torque_limits: joint torques past a fraction of each motor's limit are charged, so a gait keeps its
peaks clear of the safety monitor's torque rule; torques inside that fraction cost nothing. The torque is read at each
control period's end, or (reward.torque_limits_at "physics_peak") at each joint's largest over the period's physics
steps, where a landing's impact is."""

import dataclasses

import pytest
import torch

from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.gaits import GAITS
from surrogait_train.rewards import compute_rewards, peak_torque


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


def test_a_peak_torque_is_what_the_motor_delivers_with_the_pd_laws_gradient():
    kp, kd, limit = torch.tensor([20.0, 20.0]), torch.tensor([0.5, 0.5]), torch.tensor([10.0, 10.0])
    targets = torch.tensor([[0.2, 1.0]], requires_grad=True)  # asks 4 N m of one motor, 20 of the other
    joint_pos, joint_vel = torch.zeros(1, 2), torch.zeros(1, 2)
    tau = peak_torque(kp, kd, targets, joint_pos, joint_vel, limit)
    assert torch.allclose(tau, torch.tensor([[4.0, 10.0]]))  # the second motor at its limit
    tau.sum().backward()
    # past the limit the value stops, not the gradient: the saturated motor still says which way is less
    assert torch.allclose(targets.grad, torch.tensor([[20.0, 20.0]]))


def landing_robot(torque_limits_at: str) -> LocomotionEnv:
    """One standing robot whose joints are spun to 20 rad/s (as a landing's impact spins them) as its next control
    period starts: the damping torque peaks at once and has decayed by the period's end."""
    cfg = load_config(None, ["env.num_envs=1", "env.num_threads=1", f"reward.torque_limits_at={torque_limits_at}"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    env.reset(seed=0, randomize_episode_start=False)
    env._mj_state[0, env.physics.layout.qvel.start + 6 : env.physics.layout.qvel.stop] = 20.0
    return env


def test_the_physics_peak_charges_a_landing_that_the_period_end_does_not_see():
    env = landing_robot("physics_peak")
    targets = env.default_joint_pos.expand(1, -1).clone().requires_grad_(True)
    state, _ = env.advance_physics(targets.detach().double().numpy())
    cfg = dataclasses.replace(env.reward_cfg, torque_limits=-1.0, soft_torque_limit_fraction=0.5)

    def charged(peak_joint_state):
        reward, terms = compute_rewards(
            state, torch.zeros(1, 12), torch.zeros(1, 12), targets, env.commands, env.phases(), GAITS["trot"],
            env.kinematics, env.nominal_feet_b, env.spec.foot_radius_m, env.kp, env.kd, env.torque_limit,
            env.default_joint_pos, (env.soft_joint_pos_lower, env.soft_joint_pos_upper), cfg, env.control_dt,
            term_means_on_host=False, peak_joint_state=peak_joint_state,
        )  # fmt: skip
        return reward, float(terms["torque_limits"])

    (reward_end, at_end), (reward_peak, at_peak) = charged(None), charged(env.peak_joint_state())
    assert at_peak < at_end < 0.0  # the impact's torque, less of it by the period's end
    # the two rewards differ by that term alone; its gradient reaches the targets that would have softened it
    (reward_peak - reward_end).sum().backward()
    assert targets.grad.abs().sum() > 0


def test_an_unknown_torque_reading_is_refused_by_name():
    with pytest.raises(ValueError, match="torque_limits_at 'landing'"):
        landing_robot("landing")
