"""A residual policy on the clock-driven gait reference (`learner.residual_reference`): the reference is read from the
policy's own observation, so the exported file carries it and deployment runs it unchanged; at a zero command it
stands (`env.stand_speed_m_s`); a file's reference must match the run that starts from it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_train.config import ConfigError, load_config
from surrogait_train.evaluate import command_set, evaluate_policy
from surrogait_train.export import action_reference_of, export_onnx, parity_error
from surrogait_train.onnx_init import PolicyFileMismatch
from surrogait_train.reference import phases_from_clock
from surrogait_train.rewards import BALANCE_STEP_PITCH_MAX_M, balance_step, gait_reference, swing_path
from surrogait_train.trainer import Trainer

RESIDUAL = ["learner.residual_reference=true", "env.stand_speed_m_s=0.1"]
BALANCE_STEP = ["env.balance_step_roll_m=0.2", "env.balance_step_roll_rate_m_s=0.01", "env.balance_step_yaw_rate_s=0.2"]


def residual_trainer(tmp_path, tiny_overrides, *extra: str) -> Trainer:
    return Trainer(load_config(None, [*tiny_overrides, *RESIDUAL, *extra]), tmp_path)


@pytest.mark.parametrize("gaits", [["env.gait=pace"], ["env.gaits=[trot,pace,bound,gallop]"]])
def test_the_reference_read_from_the_observation_is_the_environments_clock_reference(tmp_path, tiny_overrides, gaits):
    trainer = residual_trainer(tmp_path, tiny_overrides, *gaits)
    env = trainer.env
    for _ in range(7):  # some way into the cycle, commands of every kind
        env.step(torch.zeros(env.num_envs, env.action_size))
    obs = env.observation(env.state, env.last_action)
    torch.testing.assert_close(trainer.actor.reference(obs), env.reference_action(), atol=1e-5, rtol=0)


def test_the_clock_features_give_back_each_legs_phase():
    phases = torch.rand(64, 4)
    angle = 2 * torch.pi * phases
    clock = torch.cat([torch.sin(angle), torch.cos(angle)], -1)
    torch.testing.assert_close(phases_from_clock(clock), phases, atol=1e-5, rtol=0)


def test_a_residual_policy_exports_with_its_reference_and_runs_the_same_in_onnxruntime(tmp_path, tiny_overrides):
    trainer = residual_trainer(tmp_path, tiny_overrides, "env.gaits=[trot,pace,bound,gallop]")
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "residual.onnx")
    assert parity_error(trainer.actor, path) < 1e-5
    assert action_reference_of(path) == {"kind": "gait_kinematic", "stand_speed_m_s": 0.1, "swing_height_m": 0.08}
    env = trainer.env
    obs = env.observation(env.state, env.last_action)
    with torch.no_grad():
        expected = trainer.actor(obs).numpy()
    np.testing.assert_allclose(OnnxPolicy(path).act(obs.numpy()), expected, atol=1e-5)


def test_at_a_zero_command_the_reference_stands_and_above_the_stand_speed_it_steps(tmp_path, tiny_overrides):
    env = residual_trainer(tmp_path, tiny_overrides).env
    phases = torch.tensor([[0.1, 0.6, 0.6, 0.1]]).repeat(3, 1)  # a trot: two legs in swing
    commands = torch.tensor([[0.0, 0.0, 0.0], [0.05, 0.0, 0.0], [0.5, 0.0, 0.0]])
    _, height, stance = gait_reference(env.gait, phases, commands, env.nominal_feet_b, env.spec.foot_radius_m, 0.1)
    apex = height - env.spec.foot_radius_m
    assert torch.all(apex[0] == 0), "a zero command lifts no foot"
    swing = ~stance[2]
    assert torch.allclose(apex[1][swing], 0.5 * apex[2][swing]), "half the stand speed lifts half as high"
    full = env.gait.swing_height_m * np.sin(0.2 * np.pi)  # legs at phase 0.6: a fifth of the way through swing
    assert torch.allclose(apex[2][swing], torch.full_like(apex[2][swing], full))


def test_a_file_with_a_reference_cannot_start_a_plain_run_nor_the_other_way(tmp_path, tiny_overrides):
    residual = residual_trainer(tmp_path / "r", tiny_overrides)
    path = export_onnx(residual.actor, residual.env.contract, tmp_path / "residual.onnx")
    plain = Trainer(load_config(None, [*tiny_overrides, "learner.residual_reference=false"]), tmp_path / "p")
    with pytest.raises(PolicyFileMismatch, match="residual_reference"):
        plain.init_from(path)
    again = residual_trainer(tmp_path / "again", tiny_overrides)
    again.init_from(path)  # the same reference: accepted, and the actor acts as the file
    obs = again.env.observation(again.env.state, again.env.last_action)
    with torch.no_grad():
        np.testing.assert_allclose(again.actor(obs).numpy(), OnnxPolicy(path).act(obs.numpy()), atol=1e-5)


def test_the_reference_alone_keeps_a_pace_standing_in_mujoco(tmp_path, tiny_overrides):
    """The untrained residual (network output zero) steps the pace open loop without falling for 3 s: the start a
    first-order learner gets, where a plain policy starts standing still."""
    trainer = residual_trainer(tmp_path, tiny_overrides, "env.gait=pace")
    with torch.no_grad():
        trainer.actor.net[-1].weight.zero_()
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "reference_only.onnx")
    result = evaluate_policy(path, num_episodes=4, episode_s=3.0, num_threads=1)
    assert result.fall_rate == 0.0
    stand = evaluate_policy(path, num_episodes=2, episode_s=3.0, num_threads=1, commands=np.zeros((2, 3)))
    assert stand.fall_rate == 0.0 and max(stand.vx_rmse, stand.vy_rmse) < 0.02


def test_the_balance_step_moves_every_foot_toward_the_side_the_body_falls_to(tmp_path, tiny_overrides):
    env = residual_trainer(tmp_path, tiny_overrides, "env.gait=pace").env
    roll = 0.1  # rad, left side up: the body tips to the right (-y)
    gravity_b = torch.tensor([[0.0, 0.0, -1.0], [0.0, -np.sin(roll), -np.cos(roll)], [0.0, 0.0, -1.0]],
                             dtype=torch.float32)
    ang_vel_b = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])  # rolling toward the right
    commands = torch.tensor([[0.5, 0.0, 0.0]]).repeat(3, 1)
    shift = balance_step(gravity_b, ang_vel_b, commands, env.nominal_feet_b, (0.2, 0.01, 0.0))
    torch.testing.assert_close(shift[..., 0], torch.zeros(3, 4))
    torch.testing.assert_close(shift[..., 1], torch.tensor([[0.0], [-0.2 * np.sin(roll)], [-0.02]],
                                                           dtype=torch.float32).expand(3, 4))
    phases = torch.full((3, 4), 0.3)
    still, _, _ = gait_reference(env.gait, phases, commands, env.nominal_feet_b, env.spec.foot_radius_m)
    moved, _, _ = gait_reference(env.gait, phases, commands, env.nominal_feet_b, env.spec.foot_radius_m,
                                 balance_shift_m=shift)
    torch.testing.assert_close(moved - still, shift)


def test_turning_faster_than_asked_moves_each_foot_along_its_hips_extra_velocity():
    feet = torch.tensor([[0.18, -0.17, -0.3], [0.18, 0.17, -0.3], [-0.27, -0.17, -0.3], [-0.27, 0.17, -0.3]])
    gravity_b = torch.tensor([[0.0, 0.0, -1.0]]).repeat(2, 1)
    ang_vel_b = torch.tensor([[0.0, 0.0, 0.5], [0.0, 0.0, 0.5]])  # rad/s, turning left
    commands = torch.tensor([[0.5, 0.0, 0.5], [0.5, 0.0, 0.0]])  # as asked; 0.5 rad/s faster than asked
    shift = balance_step(gravity_b, ang_vel_b, commands, feet, (0.0, 0.0, 0.2))
    torch.testing.assert_close(shift[0], torch.zeros(4, 2))
    hip_extra_velocity = 0.5 * torch.stack([-feet[:, 1], feet[:, 0]], dim=-1)  # (w - w_cmd) z x p
    torch.testing.assert_close(shift[1], 0.2 * hip_extra_velocity)
    assert shift[1, 0, 1] > 0 > shift[1, 2, 1], "front feet step left, rear feet right, about the turn"


def test_on_a_slope_the_pitch_term_centres_the_stance_under_the_centre_of_mass_along_gravity():
    feet = torch.tensor([[0.18, -0.17, -0.3], [0.18, 0.17, -0.3], [-0.27, -0.17, -0.3], [-0.27, 0.17, -0.3]])
    pitch, height_m = np.radians(15.0), 0.28
    # level; the body along a 15° slope facing uphill (gravity leans backward in its frame); facing downhill; a
    # slope steep enough to reach the term's limit
    gravity_b = torch.tensor([[0.0, 0.0, -1.0], [-np.sin(pitch), 0.0, -np.cos(pitch)],
                              [np.sin(pitch), 0.0, -np.cos(pitch)], [-0.6, 0.0, -0.8]], dtype=torch.float32)
    shift = balance_step(gravity_b, torch.zeros(4, 3), torch.tensor([[0.5, 0.0, 0.0]]).repeat(4, 1), feet,
                         (0.0, 0.0, 0.0, height_m))
    expected_x = torch.tensor([0.0, -height_m * np.sin(pitch), height_m * np.sin(pitch), -BALANCE_STEP_PITCH_MAX_M],
                              dtype=torch.float32)
    torch.testing.assert_close(shift[..., 0], expected_x[:, None].expand(4, 4))
    torch.testing.assert_close(shift[..., 1], torch.zeros(4, 4))
    # the stance's centre moves to within a centimetre of where gravity's line through the base meets the ground
    uphill = feet[:, :2] + shift[1]
    meets_ground_x = -height_m * np.tan(pitch)
    assert abs(float(uphill[:, 0].mean()) - float(feet[:, 0].mean()) - meets_ground_x) < 0.01


def test_a_balance_stepped_reference_exports_with_its_gains_and_carries_the_gradient_of_the_roll(
    tmp_path, tiny_overrides
):
    trainer = residual_trainer(tmp_path, tiny_overrides, "env.gait=pace", *BALANCE_STEP)
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "balance.onnx")
    assert parity_error(trainer.actor, path) < 1e-5
    assert action_reference_of(path) == {"kind": "gait_kinematic", "stand_speed_m_s": 0.1, "swing_height_m": 0.08,
                                         "balance_step_roll_m": 0.2, "balance_step_roll_rate_m_s": 0.01,
                                         "balance_step_yaw_rate_s": 0.2}
    env = trainer.env
    obs = env.observation(env.state, env.last_action).detach().requires_grad_(True)
    trainer.actor.reference(obs).sum().backward()
    start, end, _ = trainer.actor.reference.gravity
    assert obs.grad[:, start:end].abs().sum() > 0, "the trainer's gradient reaches the roll the reference answers"
    clock_start, clock_end, _ = trainer.actor.reference.clock
    assert torch.all(obs.grad[:, clock_start:clock_end] == 0), "the clock stays a constant of the step"
    plain = Trainer(load_config(None, [*tiny_overrides, "learner.residual_reference=false"]), tmp_path / "plain")
    with pytest.raises(PolicyFileMismatch, match="residual_reference"):
        plain.init_from(path)
    # the same reference with other gains: the network fine-tunes under this run's (a stage that adds the step)
    open_loop = residual_trainer(tmp_path / "open", tiny_overrides, "env.gait=pace")
    open_loop.init_from(path)
    torch.testing.assert_close(open_loop.actor.net[-1].weight, trainer.actor.net[-1].weight)


def test_a_reference_with_the_slope_stance_exports_with_its_gain_and_agrees_with_its_file(tmp_path, tiny_overrides):
    trainer = residual_trainer(tmp_path, tiny_overrides, "env.balance_step_pitch_m=0.28")
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "slope.onnx")
    assert parity_error(trainer.actor, path) < 1e-5
    assert action_reference_of(path) == {"kind": "gait_kinematic", "stand_speed_m_s": 0.1, "swing_height_m": 0.08,
                                         "balance_step_pitch_m": 0.28}
    env = trainer.env
    obs = env.observation(env.state, env.last_action).detach().requires_grad_(True)
    trainer.actor.reference(obs).sum().backward()
    start, end, _ = trainer.actor.reference.gravity
    assert obs.grad[:, start].abs().sum() > 0, "the trainer's gradient reaches the pitch the reference answers"


def test_the_balance_step_halves_the_sway_and_the_yaw_swing_of_the_pace_reference_in_mujoco(
    tmp_path, tiny_overrides
):
    """The open-loop pace reference sways sideways at ~0.25 m/s RMS and swings ~1 rad/s in yaw with no sideways or
    turn command: each step stands on one side's feet and pushes off one side, and nothing catches either
    (bench/results/pace_yaw_wander.md); fed back on the roll, roll rate and yaw rate it observes, it does less
    than half of both (0.08 m/s and 0.24 rad/s measured over 16 episodes)."""
    straight = command_set(4)
    straight[:, 1:] = 0.0
    judged = {}
    for name, extra in (("open loop", []), ("balance step", BALANCE_STEP)):
        trainer = residual_trainer(tmp_path / name, tiny_overrides, "env.gait=pace", *extra)
        with torch.no_grad():
            trainer.actor.net[-1].weight.zero_()
            trainer.actor.net[-1].bias.zero_()
        path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / f"{name}.onnx")
        result = evaluate_policy(path, num_episodes=4, episode_s=8.0, num_threads=1, gait="pace", commands=straight)
        assert result.fall_rate == 0.0, name
        judged[name] = (result.vy_rmse, result.yaw_rate_rmse)
    assert judged["balance step"][0] < 0.5 * judged["open loop"][0], judged
    assert judged["balance step"][1] < 0.5 * judged["open loop"][1], judged


def test_a_higher_stepping_run_starts_from_a_file_with_the_runs_swing_apex_in_its_reference(tmp_path, tiny_overrides,
                                                                                      capsys):
    trainer = residual_trainer(tmp_path, tiny_overrides)
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "trot.onnx")
    high = residual_trainer(tmp_path / "high", tiny_overrides, "env.gait_swing_height_m=0.12")
    high.init_from(path)  # the same residual on a foot path lifted higher: a stairs stage may start from a trot
    torch.testing.assert_close(high.actor.net[-1].weight, trainer.actor.net[-1].weight)
    assert "reference swing apex (0.12 m, the file's 0.08)" in capsys.readouterr().out
    assert high.actor.reference.describe()["swing_height_m"] == 0.12


def _share_of_step_clear_of(profile: str, riser_m: float, apex_m: float) -> float:
    """The share of a swing's forward travel over which the foot's bottom is above `riser_m` (apex `apex_m`)."""
    s = torch.linspace(0, 1, 10_001)
    lift, progress = swing_path(s, profile)
    clear = apex_m * lift > riser_m
    return float(progress[clear].max() - progress[clear].min())


def test_a_foot_lifted_first_clears_a_riser_over_most_of_its_step_where_the_sine_path_clears_it_over_a_third():
    sine, lifted = _share_of_step_clear_of("sine", 0.10, 0.12), _share_of_step_clear_of("lift_first", 0.10, 0.12)
    assert 0.35 < sine < 0.40 and 0.68 < lifted < 0.72, (sine, lifted)
    for profile in ("sine", "lift_first"):  # both leave the ground and land where the step starts and ends
        lift, progress = swing_path(torch.tensor([0.0, 0.5, 1.0]), profile)
        torch.testing.assert_close(lift, torch.tensor([0.0, 1.0, 0.0]), atol=1e-6, rtol=0)
        torch.testing.assert_close(progress, torch.tensor([0.0, 0.5, 1.0]))


def test_an_unknown_swing_profile_is_refused_by_name(tmp_path, tiny_overrides):
    with pytest.raises(ValueError, match="env.gait_swing_profile 'hop'.*sine, lift_first"):
        residual_trainer(tmp_path, tiny_overrides, "env.gait_swing_profile=hop")


def test_a_stairs_run_starts_from_a_trot_file_with_its_feet_lifted_first_and_exports_that_path(tmp_path,
                                                                                            tiny_overrides, capsys):
    trainer = residual_trainer(tmp_path, tiny_overrides)
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "trot.onnx")
    assert "swing_profile" not in action_reference_of(path), "a sine path is described as files before it were"
    stairs = residual_trainer(tmp_path / "stairs", tiny_overrides, "env.gait_swing_profile=lift_first")
    stairs.init_from(path)
    assert "reference swing path (lift_first, the file's sine)" in capsys.readouterr().out
    lifted = export_onnx(stairs.actor, stairs.env.contract, tmp_path / "stairs.onnx")
    assert action_reference_of(lifted)["swing_profile"] == "lift_first"
    env = stairs.env
    obs = env.observation(env.state, env.last_action)
    with torch.no_grad():
        np.testing.assert_allclose(OnnxPolicy(lifted).act(obs.numpy()), stairs.actor(obs).numpy(), atol=1e-5)
        # the exported graph steps on the new path: the same networks, other targets than the trot file's
        assert not np.allclose(OnnxPolicy(lifted).act(obs.numpy()), OnnxPolicy(path).act(obs.numpy()), atol=1e-4)


GAITS = "env.gaits=[trot,pace,bound,gallop]"
SLOPE_STANCE_TROT_PACE = ["env.balance_step_pitch_m=0.28", "env.balance_step_pitch_gaits=[trot,pace]"]


def test_only_the_named_gaits_reference_takes_the_slope_stance_and_the_file_knows_each_robots_gait(
    tmp_path, tiny_overrides
):
    trainer = residual_trainer(tmp_path, tiny_overrides, GAITS, *SLOPE_STANCE_TROT_PACE)
    env, reference = trainer.env, trainer.actor.reference
    env.gait_index[:] = np.arange(env.num_envs) % 4  # trot, pace, bound, gallop, trot, ...
    level = env.observation(env.state, env.last_action).detach()
    start, end, scale = reference.gravity
    tilted = level.clone()
    # the body along a 15° slope, facing uphill: gravity leans backward in its frame
    tilted[:, start:end] = torch.tensor([-np.sin(np.radians(15)), 0.0, -np.cos(np.radians(15))]) * scale
    with torch.no_grad():
        moved = (reference(tilted) - reference(level)).abs().amax(-1)
    trot_or_pace = torch.as_tensor(env.gait_index < 2)
    assert torch.all(moved[trot_or_pace] > 1e-3), "a trotting or pacing robot's stance moves on the slope"
    assert torch.all(moved[~trot_or_pace] == 0), "a bounding or galloping robot's reference ignores the pitch"
    # the reward's reference sees the same robots as the policy's (the gait index, the observed gait parameters)
    torch.testing.assert_close(reference.pitch_stance(level), env.pitch_stance())
    path = export_onnx(trainer.actor, env.contract, tmp_path / "stance.onnx")
    assert parity_error(trainer.actor, path) < 1e-5  # random observations of every gait
    assert action_reference_of(path)["balance_step_pitch_gaits"] == ["trot", "pace"]
    with torch.no_grad():
        expected = trainer.actor(tilted).numpy()
    np.testing.assert_allclose(OnnxPolicy(path).act(tilted.numpy()), expected, atol=1e-5)
    # a stage that gives every gait the stance starts from this file, under its own reference
    every_gait = residual_trainer(tmp_path / "every", tiny_overrides, GAITS, "env.balance_step_pitch_m=0.28")
    every_gait.init_from(path)
    torch.testing.assert_close(every_gait.actor.net[-1].weight, trainer.actor.net[-1].weight)


@pytest.mark.parametrize(("gaits", "named", "error"), [
    (GAITS, "[trot,canter]", "canter not among the policy's gaits"),
    ("env.gait=trot", "[trot]", "this policy has one gait"),
])
def test_slope_stance_gaits_the_policy_does_not_have_are_refused_by_name(tmp_path, tiny_overrides, gaits, named,
                                                                         error):
    with pytest.raises(ConfigError, match=rf"env.balance_step_pitch_gaits.*{error}"):
        residual_trainer(tmp_path, tiny_overrides, gaits, "env.balance_step_pitch_m=0.28",
                         f"env.balance_step_pitch_gaits={named}")


def test_the_slope_stance_beyond_its_deadband_ignores_a_strides_pitch_and_answers_the_slopes_excess():
    feet = torch.tensor([[0.18, -0.17, -0.3], [0.18, 0.17, -0.3], [-0.27, -0.17, -0.3], [-0.27, 0.17, -0.3]])
    deadband = np.sin(np.radians(5.0))
    # a stride's 3° pitch on level ground; a 15° slope facing uphill; facing downhill
    pitches = np.radians([3.0, 15.0, -15.0])
    gravity_b = torch.tensor(np.stack([-np.sin(pitches), 0 * pitches, -np.cos(pitches)], -1), dtype=torch.float32)
    shift = balance_step(gravity_b, torch.zeros(3, 3), torch.zeros(3, 3), feet, (0.0, 0.0, 0.0, 0.42, deadband))
    expected_x = torch.tensor([0.0, -0.42 * (np.sin(pitches[1]) - deadband), 0.42 * (np.sin(pitches[1]) - deadband)],
                              dtype=torch.float32)
    torch.testing.assert_close(shift[..., 0], expected_x[:, None].expand(3, 4))


def test_a_deadband_that_is_not_a_part_of_sin_pitch_is_refused_by_name(tmp_path, tiny_overrides):
    with pytest.raises(ConfigError, match="balance_step_pitch_deadband"):
        residual_trainer(tmp_path, tiny_overrides, "env.balance_step_pitch_m=0.28",
                         "env.balance_step_pitch_deadband=-0.1")
