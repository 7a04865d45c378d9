"""Training and evaluation on terrain: heights from the ground under the robot, a course per robot, a curriculum."""

import mujoco
import numpy as np
import pytest
import torch

from surrogait_core.terrain import TERRAINS, make_terrain
from surrogait_train.config import load_config
from surrogait_train.env import TERRAIN_LEVELS, LocomotionEnv


def make_env(*overrides: str) -> LocomotionEnv:
    cfg = load_config(None, ["env.num_envs=8", "env.episode_length_s=10", *overrides])
    return LocomotionEnv(cfg.env, cfg.reward, seed=1)


def place(env: LocomotionEnv, x: float) -> None:
    """Every robot standing at (x, 0) on whatever ground is there."""
    qpos = np.tile(env.spec.standing_qpos, (env.num_envs, 1))
    qpos[:, 0] = x
    qpos[:, 2] += make_terrain("stairs").height_at(x, 0.0) if env.cfg.terrain == "stairs" else 0.0
    env._mj_state[:] = env.physics.state_from_qpos(qpos, np.zeros((env.num_envs, env.model.nv)))


def test_the_base_height_is_measured_from_the_ground_under_the_robot():
    env = make_env("env.terrain=stairs")
    env.reset(randomize_episode_start=False)
    place(env, 2.5)  # on the top of the stairs, 0.5 m up
    assert env.base_position_w()[0, 2] > 0.7
    np.testing.assert_allclose(env._sim_state().base_height.numpy(), env.spec.standing_base_height_m, atol=1e-4)


def ray_height(model: mujoco.MjModel, x: float) -> float:
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geom = np.zeros(1, np.int32)
    return 2.0 - mujoco.mj_ray(model, data, np.array([x, 0.1, 2.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geom)


def test_mixed_terrain_gives_each_robot_its_own_course_and_a_curriculum():
    env = make_env("env.terrain=mixed")
    env.reset(randomize_episode_start=False)
    assert set(env.terrain_kind) == set(range(len(TERRAINS))) and np.all(env.terrain_level == 0)
    for i in range(len(TERRAINS)):  # each model holds its robot's course, at the easiest level
        course = make_terrain(TERRAINS[env.terrain_kind[i]], difficulty=TERRAIN_LEVELS[0])
        assert ray_height(env.physics.models[i], 2.5) == pytest.approx(course.height_at(2.5, 0.1), abs=1e-3)
    rows = np.ones(env.num_envs, dtype=bool)
    env.crossed[:] = [True, True, False, False, False, False, False, False]
    fell = np.array([False, True, True, False, False, False, False, False])
    env.terrain_level[:] = 1
    env._update_curriculum(rows, fell)
    # crossed: harder (even if it fell afterwards); fell before crossing: easier; neither: the same
    assert env.terrain_level.tolist() == [2, 2, 0, 1, 1, 1, 1, 1]
    env._reset_rows(rows)
    stairs = int(np.flatnonzero(env.terrain_kind == TERRAINS.index("stairs"))[0])
    level = TERRAIN_LEVELS[env.terrain_level[stairs]]
    expected = make_terrain("stairs", seed=int(env.terrain_level[stairs]), difficulty=level).height_at(2.5, 0.1)
    assert ray_height(env.physics.models[stairs], 2.5) == pytest.approx(expected, abs=1e-3)
    # each course's robots' mean difficulty is in the step info (PPO logs it as Env/terrain_difficulty/<course>)
    _, _, _, info = env.step(torch.zeros(env.num_envs, env.action_size))
    difficulty = np.asarray(TERRAIN_LEVELS)[env.terrain_level]
    by_course = {name: difficulty[env.terrain_kind == k].mean() for k, name in enumerate(TERRAINS)}
    assert info["terrain_difficulty"] == pytest.approx(by_course)


def test_a_mixed_run_can_start_its_robots_spread_over_the_curriculum():
    spread = make_env("env.terrain=mixed", "env.num_envs=32", f"env.terrain_start_level_max={len(TERRAIN_LEVELS) - 1}")
    assert set(spread.terrain_level) == set(range(len(TERRAIN_LEVELS)))
    easy = make_env("env.terrain=mixed", "env.terrain_start_level_max=1")
    assert set(easy.terrain_level) <= {0, 1}
    with pytest.raises(ValueError, match="env.terrain_start_level_max 4: expected 0..3"):
        make_env("env.terrain=mixed", "env.terrain_start_level_max=4")


def test_a_mixed_run_climbs_the_curriculum_levels_it_is_given():
    env = make_env("env.terrain=mixed", "env.terrain_kinds=[stairs]", "env.terrain_levels=[0.5,0.6,0.7]",
                   "env.terrain_start_level_max=2")
    assert env.terrain_levels == (0.5, 0.6, 0.7)
    rows = np.ones(env.num_envs, dtype=bool)
    env.terrain_level[:] = 2
    env.crossed[:] = True
    env._update_curriculum(rows, np.zeros(env.num_envs, dtype=bool))
    assert np.all(env.terrain_level == 2)  # the top level is the last
    env._set_terrain_levels(np.ones(env.num_envs, dtype=np.int64))
    env._reset_rows(rows)
    expected = make_terrain("stairs", seed=1, difficulty=0.6).height_at(2.5, 0.1)  # a 6 cm riser's plateau
    assert ray_height(env.physics.models[0], 2.5) == pytest.approx(expected, abs=1e-3)
    assert env.terrain_difficulty == {"stairs": pytest.approx(0.6)}


@pytest.mark.parametrize("levels", ["[]", "[0.5,0.5]", "[0.7,0.6]", "[0.5,1.5]"])
def test_a_curriculum_that_is_not_a_ladder_is_refused(levels):
    with pytest.raises(ValueError, match="env.terrain_levels .*easiest first"):
        make_env("env.terrain=mixed", f"env.terrain_levels={levels}")


def test_an_unknown_terrain_is_refused():
    with pytest.raises(ValueError, match="env.terrain 'ice'"):
        make_env("env.terrain=ice")


def test_eval_on_a_course_walks_straight_and_counts_who_crossed():
    from surrogait_rehearsal.harness.nodes import shipped_policy_path
    from surrogait_train.evaluate import TERRAIN_EVAL_VX, evaluate_policy

    result = evaluate_policy(shipped_policy_path(), num_episodes=4, episode_s=2.0, terrain="slope")
    commands = np.array(result.commands)
    assert np.all(commands[:, 1:] == 0.0) and np.all((commands[:, 0] >= TERRAIN_EVAL_VX[0]) & (commands[:, 0] <= 1.0))
    # 2 s at most 1 m/s cannot reach the course's end 4.8 m ahead: no robot crossed
    assert result.terrain == "slope" and result.crossed_rate == 0.0
    flat = evaluate_policy(shipped_policy_path(), num_episodes=4, episode_s=2.0)
    assert flat.terrain == "flat" and flat.crossed_rate is None


def test_a_robot_that_passed_the_finish_standing_has_crossed_whatever_it_does_afterwards():
    from surrogait_train.evaluate import CourseJudge

    judge = CourseJudge(3, finish_x=4.8)
    judge.update(np.array([4.9, 3.0, 2.0]), np.array([False, False, True]))  # robot 0 crosses, robot 2 falls
    # robot 0 steps off the height field's end later; robot 1 falls on the course
    judge.update(np.array([9.0, 3.1, 2.0]), np.array([True, True, False]))
    assert judge.crossed.tolist() == [True, False, False]
    assert judge.fell.tolist() == [False, True, True]
    assert not judge.running.any()
    np.testing.assert_array_equal(judge.fall_x, [np.nan, 3.1, 2.0])  # where each fell; robot 0 did not


def test_a_robot_that_falls_as_it_reaches_the_finish_has_not_crossed():
    from surrogait_train.evaluate import CourseJudge

    judge = CourseJudge(1, finish_x=4.8)
    judge.update(np.array([4.85]), np.array([True]))
    assert judge.fell.tolist() == [True] and judge.crossed.tolist() == [False]


def test_on_flat_ground_only_falls_end_a_run():
    from surrogait_train.evaluate import CourseJudge

    judge = CourseJudge(2, finish_x=None)
    judge.update(np.array([50.0, 1.0]), np.array([False, True]))
    assert judge.running.tolist() == [True, False] and not judge.crossed.any()


def test_each_foot_is_measured_from_the_ground_under_it():
    env = make_env("env.terrain=stairs")
    env.reset(randomize_episode_start=False)
    place(env, 0.7)  # base before the first 10 cm riser (at 0.8 m), front feet already on it
    offset = env.foot_ground_offset(env._sim_state()).numpy()  # SDK leg order FR, FL, RR, RL
    np.testing.assert_allclose(offset[:, :2], 0.1, atol=1e-6)
    np.testing.assert_allclose(offset[:, 2:], 0.0, atol=1e-6)
    assert make_env().foot_ground_offset(env._sim_state()) is None, "flat ground: nothing to correct"


def test_a_mixed_run_may_deal_its_robots_only_some_course_kinds():
    env = make_env("env.terrain=mixed", "env.terrain_kinds=[flat,stairs]")
    env.reset(randomize_episode_start=False)
    assert [TERRAINS[k] for k in env.terrain_kind] == ["flat", "stairs"] * (env.num_envs // 2)
    stairs = int(np.flatnonzero(env.terrain_kind == TERRAINS.index("stairs"))[0])
    expected = make_terrain("stairs", difficulty=TERRAIN_LEVELS[0]).height_at(2.5, 0.1)
    assert ray_height(env.physics.models[stairs], 2.5) == pytest.approx(expected, abs=1e-3)
    _, _, _, info = env.step(torch.zeros(env.num_envs, env.action_size))
    assert set(info["terrain_difficulty"]) == {"flat", "stairs"}
    with pytest.raises(ValueError, match="env.terrain_kinds: unknown 'ice'"):
        make_env("env.terrain=mixed", "env.terrain_kinds=[flat,ice]")


def test_a_mixed_run_logs_how_far_up_the_curriculum_each_course_is(tmp_path, tiny_overrides):
    import csv

    from surrogait_train.api import train_and_export

    train_and_export([*tiny_overrides, "env.terrain=mixed", "env.terrain_kinds=[flat,stairs]"], budget_s=0,
                     out_path=tmp_path / "go2.onnx", run_dir=tmp_path / "run", max_iterations=2)
    with open(tmp_path / "run" / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2
    assert float(rows[-1]["terrain_stairs"]) == float(rows[-1]["terrain_flat"]) == TERRAIN_LEVELS[0]
    assert "terrain_rough" not in rows[-1]


def test_robots_on_a_course_are_steered_back_along_it_and_flat_robots_keep_their_commands():
    env = make_env("env.terrain=mixed", "env.terrain_kinds=[flat,stairs]", "env.course_heading_gain=1.0",
                   "env.zero_command_prob=0.0", "env.ang_vel_yaw=[-0.5,0.5]")
    env.reset(randomize_episode_start=False)
    on_course = env.terrain_kind == TERRAINS.index("stairs")
    assert np.all(env.commands[torch.as_tensor(on_course), 1].numpy() == 0.0), "no sideways command on a course"
    drawn_flat = env.commands[torch.as_tensor(~on_course)].clone()
    # turn every robot 0.3 rad to the left of the course's direction (+x): the course robots are told to turn right
    qpos = env._mj_state[:, env.physics.layout.qpos]
    qpos[:, 3:7] = [np.cos(0.15), 0.0, 0.0, np.sin(0.15)]
    env._mj_state[:] = env.physics.state_from_qpos(qpos, np.zeros((env.num_envs, env.model.nv)))
    env.step(torch.zeros(env.num_envs, env.action_size))
    yaw = env.commands[:, 2].numpy()
    assert np.all(yaw[on_course] < -0.2) and np.all(yaw[on_course] >= -0.5)
    torch.testing.assert_close(env.commands[torch.as_tensor(~on_course)], drawn_flat)
