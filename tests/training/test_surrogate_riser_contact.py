"""The riser as a contact (`surrogate.riser_contact_width_m`): on stairs a blind policy's toe meets the riser. MuJoCo's
touch sensor counts that push, so in value the surrogate already pins the blocked foot; the riser contact adds, in
gradient only, that lifting the foot above the riser's top frees the base it holds back."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from surrogait_core.terrain import make_terrain
from surrogait_train.config import load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.state import RobotState
from surrogait_train.surrogate import RobotDynamics, Surrogate

RISER_M = 0.10
FRONT_LEGS = (0, 1)  # SDK order FR FL RR RL
PRESSING = (100.0, 100.0, 100.0, 100.0)  # N on the touch sensors: the front toes against the riser, the hind feet down


@pytest.fixture
def env(tiny_config):
    env = LocomotionEnv(tiny_config.env, tiny_config.reward, seed=0)
    yield env
    env.close()


def forward_speed_and_lift_gradient(env, tiny_config, width_m: float, riser_ahead_m: float):
    """For a standing robot whose front feet swing forward (1 m/s relative to the base) against a riser
    `riser_ahead_m` above their ground: the next forward speed of the base, and its derivative along the joint
    targets that lift both front feet (1 m of foot height)."""
    surrogate = Surrogate(dataclasses.replace(tiny_config.surrogate, variant="noslip", riser_contact_width_m=width_m),
                          env.kinematics, env.spec, env.model, env.kp, env.kd, env.control_dt,
                          tiny_config.env.substeps)
    stance = torch.as_tensor(env.spec.default_joint_pos, dtype=torch.float32).unsqueeze(0)
    feet_b, jac = env.kinematics(stance)
    swing, lift = torch.zeros(1, 12), torch.zeros(1, 12)
    for leg in FRONT_LEGS:  # joint motions that move the foot forward / up, from its Jacobian
        inv = torch.linalg.inv(jac[0, leg])
        swing[0, 3 * leg:3 * leg + 3] = inv @ torch.tensor([1.0, 0.0, 0.0])
        lift[0, 3 * leg:3 * leg + 3] = inv @ torch.tensor([0.0, 0.0, 1.0])
    base_height = -float(feet_b[0, :, 2].mean()) + env.spec.foot_radius_m
    state = RobotState(stance, swing, torch.zeros(1, 3), torch.zeros(1, 3), torch.tensor([[0.0, 0.0, -1.0]]),
                       torch.tensor([base_height]))
    ahead = torch.zeros(1, 4)
    ahead[0, list(FRONT_LEGS)] = riser_ahead_m
    dynamics = RobotDynamics(kp=torch.as_tensor(env.kp).expand(1, 12), kd=torch.as_tensor(env.kd).expand(1, 12),
                             added_mass_kg=torch.zeros(1), delay_substeps=torch.zeros(1, dtype=torch.long),
                             held_targets=stance.clone(), ground_under_feet_m=torch.zeros(1, 4),
                             ground_ahead_of_feet_m=ahead)
    targets = stance.clone().requires_grad_(True)
    nxt = surrogate(state, targets, torch.tensor([PRESSING]), dynamics)
    (grad,) = torch.autograd.grad(nxt.base_lin_vel_b[0, 0], targets)
    return float(nxt.base_lin_vel_b[0, 0].detach()), float((grad * lift).sum())


def test_the_riser_contact_changes_no_value(env, tiny_config):
    assert forward_speed_and_lift_gradient(env, tiny_config, 0.05, RISER_M)[0] == pytest.approx(
        forward_speed_and_lift_gradient(env, tiny_config, 0.0, RISER_M)[0], abs=0.0)


def test_lifting_a_foot_blocked_by_a_riser_frees_the_base(env, tiny_config):
    speed, without = forward_speed_and_lift_gradient(env, tiny_config, 0.0, RISER_M)
    assert speed < 0.0, "the front feet pushing forward against the riser hold the base back"
    _, blocked = forward_speed_and_lift_gradient(env, tiny_config, 0.05, RISER_M)
    assert blocked - without > 0.25, (blocked, without)  # measured: 0.49 (m/s per m of lift), of 6.1 in all
    # no riser in the way (the ground ahead is the ground under the feet): the lever says nothing
    _, no_riser = forward_speed_and_lift_gradient(env, tiny_config, 0.05, 0.0)
    assert no_riser == pytest.approx(without, abs=1e-6)
    # a steeper weight says it louder
    _, steeper = forward_speed_and_lift_gradient(env, tiny_config, 0.02, RISER_M)
    assert steeper - without == pytest.approx(2.5 * (blocked - without), rel=1e-3)


def test_a_foot_already_above_the_riser_is_not_blocked(env, tiny_config):
    _, without = forward_speed_and_lift_gradient(env, tiny_config, 0.0, RISER_M)
    # the "riser" 2 cm below the feet's soles: they pass over it
    _, over = forward_speed_and_lift_gradient(env, tiny_config, 0.05, -0.02)
    assert over == pytest.approx(without, abs=1e-6)


def test_the_environment_says_where_the_ground_rises_ahead_of_each_foot():
    cfg = load_config(None, ["env.num_envs=2", "env.terrain=stairs"])
    env = LocomotionEnv(cfg.env, cfg.reward, seed=1)
    env.reset(randomize_episode_start=False)
    qpos = np.tile(env.spec.standing_qpos, (env.num_envs, 1))
    qpos[:, 0] = 0.6  # the front feet (~0.19 m ahead of the base) a few cm before the first 10 cm riser at 0.8 m
    qpos[:, 2] += make_terrain("stairs").height_at(0.6, 0.0)
    env._mj_state[:] = env.physics.state_from_qpos(qpos, np.zeros((env.num_envs, env.model.nv)))
    state = env._sim_state()
    under, ahead = env.foot_ground_offset(state).numpy(), env.foot_ground_ahead(state).numpy()
    np.testing.assert_allclose(under, 0.0, atol=1e-6)
    np.testing.assert_allclose(ahead[:, :2], RISER_M, atol=1e-6)  # the front feet: the riser is in their way
    np.testing.assert_allclose(ahead[:, 2:], 0.0, atol=1e-6)  # the hind feet: level ground ahead
    dynamics = env.robot_dynamics()
    assert torch.equal(dynamics.ground_ahead_of_feet_m, torch.as_tensor(ahead))
    env.close()


def test_an_environment_that_cannot_say_where_the_ground_rises_is_refused_by_name(env, tiny_config):
    surrogate = Surrogate(dataclasses.replace(tiny_config.surrogate, riser_contact_width_m=0.05), env.kinematics,
                          env.spec, env.model, env.kp, env.kd, env.control_dt, tiny_config.env.substeps)
    stance = torch.as_tensor(env.spec.default_joint_pos, dtype=torch.float32).unsqueeze(0)
    state = RobotState(stance, torch.zeros(1, 12), torch.zeros(1, 3), torch.zeros(1, 3),
                       torch.tensor([[0.0, 0.0, -1.0]]), torch.tensor([0.3]))
    on_a_course = RobotDynamics(kp=torch.as_tensor(env.kp).expand(1, 12), kd=torch.as_tensor(env.kd).expand(1, 12),
                                added_mass_kg=torch.zeros(1), delay_substeps=torch.zeros(1, dtype=torch.long),
                                held_targets=stance, ground_under_feet_m=torch.zeros(1, 4))  # the ground ahead unsaid
    with pytest.raises(ValueError, match="riser_contact_width_m"):
        surrogate(state, stance, torch.tensor([PRESSING]), on_a_course)
