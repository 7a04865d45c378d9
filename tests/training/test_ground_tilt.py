"""A slope on level ground: `randomization.ground_tilt_deg` leans each robot's gravity, and the state, the foot
heights the rewards measure and the physics all see the slope a course's ramp would give."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from surrogait_train.config import ConfigError, EnvConfig, RandomizationConfig, SurrogateConfig
from surrogait_train.env import LocomotionEnv
from surrogait_train.randomization import sample_variation, tilted_gravity
from surrogait_train.surrogate import Surrogate

STILL = dict(friction=[1.0, 1.0], added_base_mass_kg=[0.0, 0.0], base_com_offset_m=0.0, kp_scale=[1.0, 1.0],
             kd_scale=[1.0, 1.0], action_delay_s=[0.0, 0.0], push_interval_s=[100.0, 100.0])


def _env(tilt: list[float], n: int = 6, **env) -> LocomotionEnv:
    r = RandomizationConfig(enabled=True, ground_tilt_deg=tilt, **STILL)
    e = LocomotionEnv(EnvConfig(num_envs=n, num_threads=1, **env), seed=0, randomization=r)
    e.reset(seed=0, randomize_episode_start=False)
    return e


def _hold_pose(env: LocomotionEnv, steps: int):
    targets = np.tile(env.spec.default_joint_pos, (env.num_envs, 1))
    for _ in range(steps):
        state, touch = env.advance_physics(targets)
    return state, touch


def test_gravity_leans_by_the_tilt_towards_the_downhill_heading():
    down = tilted_gravity(np.radians([0.0, 10.0, 15.0]), np.radians([0.0, 90.0, 180.0]))
    np.testing.assert_allclose(np.linalg.norm(down, axis=1), 1.0)
    np.testing.assert_allclose(np.degrees(np.arccos(-down[:, 2])), [0.0, 10.0, 15.0], atol=1e-9)
    assert down[1, 1] > 0 and abs(down[1, 0]) < 1e-12  # downhill towards +y
    assert down[2, 0] < 0  # downhill towards -x


def test_each_robot_stands_on_its_own_slope_and_the_rewards_measure_its_feet_from_that_ground():
    env = _env([12.0, 12.0])
    down = env.variation.gravity_dir_w
    np.testing.assert_allclose(np.degrees(np.arccos(-down[:, 2])), 12.0, atol=1e-6)
    assert len({tuple(d.round(6)) for d in down}) == env.num_envs  # each its own downhill heading
    for i, model in enumerate(env.physics.models):
        np.testing.assert_allclose(model.opt.gravity, 9.81 * down[i], rtol=1e-3)

    state, touch = _hold_pose(env, 10)  # 0.2 s: settled on its feet, before the held pose sags downhill
    assert (touch > 1.0).all(), "every foot on the ground"
    # the IMU sees the slope: the body lies on the plane, gravity ~12 deg off its z axis
    body_tilt = np.degrees(np.arccos(-state.projected_gravity_b[:, 2].numpy()))
    np.testing.assert_allclose(body_tilt, 12.0, atol=3.0)
    # as on a course, the base height is measured vertically to the ground under it (standing: ~0.3 m)
    assert ((state.base_height > 0.26) & (state.base_height < 0.36)).all()
    feet_b = env.kinematics(state.joint_pos)[0]
    up = -state.projected_gravity_b.unsqueeze(1)
    foot_height = state.base_height[:, None] + (feet_b * up).sum(-1) - env.foot_ground_offset(state)
    # a foot on the ground is its radius above it, uphill and downhill feet alike (without the offset they
    # would differ by ~2 x 0.19 m x sin 12 deg = 8 cm)
    np.testing.assert_allclose(foot_height.numpy(), env.spec.foot_radius_m, atol=0.01)


def test_a_slope_pulls_the_robot_downhill_and_level_ground_does_not():
    tilted, level = _env([15.0, 15.0], 4), _env([0.0, 0.0], 4)
    x_tilted, x_level = tilted.base_position_w(), level.base_position_w()
    _hold_pose(tilted, 50)
    _hold_pose(level, 50)
    moved = tilted.base_position_w() - x_tilted
    downhill = tilted.variation.gravity_dir_w[:, :2] / np.linalg.norm(tilted.variation.gravity_dir_w[:, :2], axis=1,
                                                                       keepdims=True)
    assert ((moved[:, :2] * downhill).sum(-1) > 0.01).all(), "the held pose sags and creeps downhill"
    assert np.abs(level.base_position_w()[:, :2] - x_level[:, :2]).max() < 0.01


def test_level_ground_is_the_world_as_before():
    env = _env([])
    np.testing.assert_array_equal(env.variation.gravity_dir_w, np.tile([0.0, 0.0, -1.0], (env.num_envs, 1)))
    assert not env.variation.ground_tilted
    assert env.foot_ground_offset(env.state) is None
    np.testing.assert_array_equal(env.physics.models[0].opt.gravity, env.model.opt.gravity)


@pytest.mark.parametrize("tilt", [[10.0, 5.0], [-1.0, 5.0], [0.0, 45.0], [5.0]])
def test_an_impossible_tilt_range_is_refused_by_name(tilt):
    with pytest.raises(ConfigError, match="ground_tilt_deg"):
        _env(tilt)


def test_a_tilt_on_a_terrain_course_is_refused():
    with pytest.raises(ConfigError, match="ground_tilt_deg.*terrain"):
        _env([0.0, 10.0], terrain="slope")


def test_the_surrogate_falls_along_the_tilted_gravity():
    """The surrogate's ballistic prior follows the projected gravity it is given: no contact, no twist, and the
    base's velocity grows along the leaning gravity."""
    env = _env([15.0, 15.0], 2)
    sur = Surrogate(SurrogateConfig(), env.kinematics, env.spec, env.model, env.kp, env.kd, env.control_dt, 4)
    state = env.state
    nxt = sur(state, env.default_joint_pos.expand(2, -1), torch.zeros(2, 4))
    dv = (nxt.base_lin_vel_b - state.base_lin_vel_b) / env.control_dt
    torch.testing.assert_close(dv / 9.81, state.projected_gravity_b, atol=0.05, rtol=0)


def _gaits_env(tilt_gaits: list[str], n: int = 32) -> LocomotionEnv:
    r = RandomizationConfig(enabled=True, ground_tilt_deg=[10.0, 10.0], ground_tilt_gaits=tilt_gaits, **STILL)
    cfg = EnvConfig(num_envs=n, num_threads=1, gaits=["trot", "pace", "bound", "gallop"],
                    gait_lin_vel_x=[[0.0, 1.0], [0.0, 1.0], [0.5, 1.5], [0.5, 1.5]], gait_switch_prob=1.0,
                    command_resample_s=0.1, episode_length_s=0.5)
    e = LocomotionEnv(cfg, seed=0, randomization=r)
    e.reset(seed=0, randomize_episode_start=False)
    return e


def test_only_the_gaits_named_get_the_slopes_and_a_robot_on_one_switches_only_among_them():
    env = _gaits_env(["trot", "pace"])
    climbing = {0, 1}  # trot, pace
    seen_tilted, seen_level_fast = 0, 0
    for _ in range(60):  # gait switches every 5 steps, new episodes every 25
        env.step(torch.zeros(env.num_envs, env.action_size))
        tilted = env.variation.tilted()
        assert all(int(g) in climbing for g in env.gait_index[tilted])
        seen_tilted += int(tilted.sum())
        seen_level_fast += int((~tilted & ~np.isin(env.gait_index, list(climbing))).sum())
    assert seen_tilted > 0 and seen_level_fast > 0


def test_a_slope_gait_the_policy_does_not_have_is_refused_by_name():
    with pytest.raises(ConfigError, match="canter not among the policy's gaits"):
        _gaits_env(["trot", "canter"])
    with pytest.raises(ConfigError, match="this policy has one gait"):
        r = RandomizationConfig(enabled=True, ground_tilt_deg=[5.0, 10.0], ground_tilt_gaits=["trot"], **STILL)
        LocomotionEnv(EnvConfig(num_envs=2, num_threads=1), seed=0, randomization=r)


def test_a_tilt_share_leaves_the_rest_of_the_robots_on_level_ground_and_the_tilted_ones_as_before():
    rng_all, rng_share = np.random.default_rng(5), np.random.default_rng(5)
    every = sample_variation(RandomizationConfig(ground_tilt_deg=[10.0, 10.0], **STILL), rng_all, 400, 0.005)
    share = sample_variation(RandomizationConfig(ground_tilt_deg=[10.0, 10.0], ground_tilt_share=0.25, **STILL),
                             rng_share, 400, 0.005)
    tilted = share.tilted()
    assert every.tilted().all() and 60 < tilted.sum() < 140  # a quarter of 400 (binomial sd 8.7)
    np.testing.assert_array_equal(share.gravity_dir_w[tilted], every.gravity_dir_w[tilted])  # the same slopes
    np.testing.assert_array_equal(share.gravity_dir_w[~tilted], np.tile([0.0, 0.0, -1.0], ((~tilted).sum(), 1)))


@pytest.mark.parametrize("share", [0.0, 1.5])
def test_a_tilt_share_outside_zero_to_one_is_refused_by_name(share):
    with pytest.raises(ConfigError, match="ground_tilt_share"):
        LocomotionEnv(EnvConfig(num_envs=2, num_threads=1), seed=0, randomization=RandomizationConfig(
            enabled=True, ground_tilt_deg=[0.0, 10.0], ground_tilt_share=share, **STILL))
