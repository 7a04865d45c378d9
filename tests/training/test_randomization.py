"""Domain randomisation: drawn per episode, applied to the robot's own model, seen by the surrogate, off by default."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
import torch

from surrogait_bringup.policies import shipped_policy
from surrogait_train.conditions import ROBUSTNESS_MATRIX, EvalCondition, condition_by_name
from surrogait_train.config import ConfigError, EnvConfig, RandomizationConfig, load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.physics import floating_base_body
from surrogait_train.randomization import RobotVariation
from surrogait_train.surrogate import RobotDynamics, Surrogate

ON = RandomizationConfig(enabled=True)


def _env(n: int = 4, randomization: RandomizationConfig | None = None, **env) -> LocomotionEnv:
    return LocomotionEnv(EnvConfig(num_envs=n, num_threads=1, **env), seed=0, randomization=randomization)


def _stand(env: LocomotionEnv, steps: int) -> None:
    for _ in range(steps):
        env.step(torch.zeros(env.num_envs, env.action_size))


def test_randomisation_is_off_unless_enabled_and_off_means_the_nominal_world():
    plain, off = _env(), _env(randomization=RandomizationConfig())
    assert off.randomization is None and off.physics.models is None
    torch.testing.assert_close(plain.reset(seed=1), off.reset(seed=1), rtol=0, atol=0)
    a = torch.full((4, 12), 0.3)
    torch.testing.assert_close(plain.step(a)[0], off.step(a)[0], rtol=0, atol=0)


def test_each_robot_gets_its_own_model_with_parameters_inside_the_ranges():
    env = _env(n=16, randomization=ON)
    env.reset(seed=2)
    base = floating_base_body(env.model)
    v = env.variation
    for i, model in enumerate(env.physics.models):
        assert model.geom_friction[0, 0] == pytest.approx(v.friction[i])
        assert model.body_mass[base] == pytest.approx(env.model.body_mass[base] + v.added_base_mass_kg[i])
        np.testing.assert_allclose(model.actuator_gainprm[:, 0], env.kp.numpy() * v.kp_scale[i], rtol=1e-6)
        np.testing.assert_allclose(model.actuator_biasprm[:, 2], -env.kd.numpy() * v.kd_scale[i], rtol=1e-6)
    assert np.all((v.friction >= 0.2) & (v.friction <= 1.5))
    assert np.all((v.added_base_mass_kg >= -1.0) & (v.added_base_mass_kg <= 3.0))
    assert np.all(np.abs(v.base_com_offset_m) <= 0.03)
    assert set(v.action_delay_steps) <= {0, 1, 2, 3, 4} and len(set(v.action_delay_steps)) > 1
    assert env.model.body_mass[base] == pytest.approx(6.921)  # the shared nominal model is untouched


def test_a_new_episode_draws_new_parameters():
    env = _env(n=8, randomization=ON)
    env.reset(seed=3)
    before = env.variation.friction.copy()
    env._reset_rows(np.array([True] * 4 + [False] * 4))
    assert np.all(env.variation.friction[:4] != before[:4])
    np.testing.assert_array_equal(env.variation.friction[4:], before[4:])


def test_a_full_period_of_delay_holds_the_previous_targets_for_the_whole_period():
    targets_new = np.tile(np.array([0.3, 1.2, -1.2] * 4), (2, 1))
    runs = []
    for delay in (0, 4):
        env = _env(n=2)
        env.reset(seed=4, randomize_episode_start=False)
        variation = RobotVariation.nominal(2, env.foot_friction())
        variation.action_delay_steps[:] = delay
        env.set_variation(variation)
        held = env.held_targets.copy()
        state, _ = env.advance_physics(targets_new)
        runs.append(state.joint_pos.numpy())
        np.testing.assert_array_equal(env.held_targets, targets_new)  # the next period starts from these
    plain = _env(n=2)
    plain.reset(seed=4, randomize_episode_start=False)
    state_held, _ = plain.advance_physics(held)
    np.testing.assert_allclose(runs[1], state_held.joint_pos.numpy(), atol=1e-6)  # delayed = still the old targets
    assert np.abs(runs[0] - runs[1]).max() > 0.01


def test_a_push_kicks_the_base_in_its_heading_frame():
    env = _env(n=1)
    env.reset(seed=5)
    layout = env.physics.layout
    yaw = np.pi / 2  # facing world +y: its left is world -x
    env._mj_state[0, layout.qpos.start + 3 : layout.qpos.start + 7] = [np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]
    before = env._mj_state[0, layout.qvel.start : layout.qvel.start + 3].copy()
    env.push_base(np.array([0]), np.array([[0.0, 0.6, 0.0]]))
    after = env._mj_state[0, layout.qvel.start : layout.qvel.start + 3]
    np.testing.assert_allclose(after - before, [-0.6, 0.0, 0.0], atol=1e-12)


def test_training_pushes_robots_every_few_seconds():
    env = _env(n=8, randomization=dataclasses.replace(ON, push_interval_s=[0.1, 0.2]))
    env.reset(seed=6, randomize_episode_start=False)
    first = env.next_push_step.copy()
    assert np.all((first >= 5) & (first <= 10))  # 0.1-0.2 s at 50 Hz
    _stand(env, 11)
    assert np.all(env.next_push_step > first)


def test_sensor_noise_enters_the_observation_only_when_enabled():
    for randomization, noisy in ((None, False), (ON, True)):
        env = _env(randomization=randomization)
        env.reset(seed=7)
        a, b = env.observation(env.state, env.last_action), env.observation(env.state, env.last_action)
        assert bool((a != b).any()) == noisy


def _surrogate(env: LocomotionEnv, variant: str = "srb") -> Surrogate:
    cfg = load_config(None, [f"surrogate.variant={variant}"]).surrogate
    return Surrogate(cfg, env.kinematics, env.spec, env.model, env.kp, env.kd, env.control_dt, env.cfg.substeps)


def _dynamics(env: LocomotionEnv, delay: int, added_mass: float) -> RobotDynamics:
    n = env.num_envs
    return RobotDynamics(
        kp=env.kp.expand(n, -1), kd=env.kd.expand(n, -1), added_mass_kg=torch.full((n,), added_mass),
        delay_substeps=torch.full((n,), delay), held_targets=torch.as_tensor(env.held_targets, dtype=torch.float32),
    )  # fmt: skip


def test_the_surrogate_sees_the_delay_no_gradient_reaches_targets_that_arrive_after_the_period():
    env = _env(n=2)
    env.reset(seed=8)
    surrogate = _surrogate(env, "joint")
    for delay, reaches in ((0, True), (2, True), (4, False)):
        targets = torch.tensor(env.held_targets, dtype=torch.float32).requires_grad_(True)
        touch = torch.zeros(2, 4)
        out = surrogate(env.state, targets + 0.1, touch, _dynamics(env, delay, 0.0))
        (grad,) = torch.autograd.grad(out.joint_pos.sum(), targets)
        assert bool(grad.abs().sum() > 0) == reaches


def test_the_surrogate_sees_the_added_mass():
    env = _env(n=2)
    env.reset(seed=9)
    surrogate = _surrogate(env, "srb")
    targets = torch.tensor(env.held_targets, dtype=torch.float32) + 0.2
    touch = torch.full((2, 4), 50.0)
    light = surrogate(env.state, targets, touch, _dynamics(env, 0, 0.0))
    heavy = surrogate(env.state, targets, touch, _dynamics(env, 0, 3.0))
    dv_light = light.base_lin_vel_b - env.state.base_lin_vel_b
    dv_heavy = heavy.base_lin_vel_b - env.state.base_lin_vel_b
    assert not torch.allclose(dv_light, dv_heavy)


def test_randomisation_is_configured_as_data_and_impossible_ranges_are_refused():
    cfg = load_config(None, ["randomization.enabled=true", "randomization.friction=[0.5,1.0]"])
    assert cfg.randomization.enabled and cfg.randomization.friction == [0.5, 1.0]
    with pytest.raises(ConfigError, match="action_delay_s"):
        _env(randomization=dataclasses.replace(ON, action_delay_s=[0.0, 0.05]))
    with pytest.raises(ConfigError, match="friction"):
        _env(randomization=dataclasses.replace(ON, friction=[1.0, 0.5]))


def test_the_robustness_matrix_has_every_condition_the_issue_names():
    names = [c.name for c in ROBUSTNESS_MATRIX]
    assert names == [
        "nominal", "friction 0.25", "+3 kg", "-1 kg", "kp x 0.8", "delay 10 ms", "delay 20 ms", "push 0.6 m/s",
        "flipping vy, yaw", "other contact model", "damped joints",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="robustness matrix has"):
        condition_by_name("ice")


def test_a_condition_changes_the_world_the_eval_robots_live_in():
    env = _env(n=3, model_variant="other_contact_model")
    assert env.model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    v = condition_by_name("delay 20 ms").variation(3, env.foot_friction(), env.cfg.physics_dt_s)
    assert list(v.action_delay_steps) == [4, 4, 4]
    assert condition_by_name("nominal").variation(3, 1.0, 0.005) is None
    flip = EvalCondition(command_flip_period_s=2.0)
    cmds = np.array([[0.5, 0.2, 0.3]])
    np.testing.assert_array_equal(flip.commands_at(cmds, 1.0), cmds)
    np.testing.assert_array_equal(flip.commands_at(cmds, 2.5), [[0.5, -0.2, -0.3]])
    push = condition_by_name("push 0.6 m/s")
    kicks = [push.push_at_step(t, 0.02) for t in range(500)]
    assert sorted(k for k in kicks if k) == [-0.6, 0.6]


def test_eval_under_a_condition_reports_it():
    from surrogait_train.evaluate import evaluate_policy

    policy = shipped_policy("go2_trot.onnx")
    result = evaluate_policy(policy, num_episodes=2, episode_s=1.5, condition=condition_by_name("+3 kg"))
    assert result.condition == "+3 kg" and result.episodes == 2
    nominal = evaluate_policy(policy, num_episodes=2, episode_s=1.5)
    assert result.vx_rmse != nominal.vx_rmse


def test_joint_damping_and_friction_loss_are_randomised_per_robot_and_reach_mujoco_and_the_surrogate():
    """Public models of the Go2 damp its joints from 0.1 to 2 N m s/rad: training can draw each robot's."""
    cfg = dataclasses.replace(ON, joint_damping=[0.1, 2.0], joint_friction_loss=[0.0, 0.3])
    env = _env(n=6, randomization=cfg)
    env.reset(seed=0)
    damping, friction_loss = env.variation.joint_damping, env.variation.joint_friction_loss
    assert np.all((damping >= 0.1) & (damping <= 2.0)) and len(set(damping.round(6))) == 6
    legs = env.model.jnt_dofadr[env.model.jnt_type != mujoco.mjtJoint.mjJNT_FREE]
    for i, model in enumerate(env.physics.models):
        np.testing.assert_allclose(model.dof_damping[legs], damping[i])
        np.testing.assert_allclose(model.dof_frictionloss[legs], friction_loss[i])
    dynamics = env.robot_dynamics()
    np.testing.assert_allclose(dynamics.joint_damping.squeeze(-1).numpy(), damping, rtol=1e-6)
    # without the ranges nothing is drawn: a config's random stream, and so its robots, stay as they were
    plain = _env(n=6, randomization=ON)
    plain.reset(seed=0)
    np.testing.assert_array_equal(plain.variation.friction, env.variation.friction)
    assert np.isnan(plain.variation.joint_damping).all() and plain.robot_dynamics().joint_damping is None


def test_the_damped_joints_condition_damps_every_leg_joint():
    v = condition_by_name("damped joints").variation(2, 1.0, 0.005)
    assert list(v.joint_damping) == [2.0, 2.0] and list(v.joint_friction_loss) == [0.3, 0.3]
