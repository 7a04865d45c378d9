"""Terrain courses: the shapes the issue asks for, where the robot walks, the same in every model that uses them."""

import mujoco
import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.terrain import (
    COURSE_END_X,
    COURSE_START_X,
    STEP_HEIGHT_M,
    TERRAINS,
    compile_with_terrain,
    make_terrain,
    scene_model,
    set_terrain_heights,
)

SCENE = load_robot_spec("go2").scene_path


def ground_by_ray(model: mujoco.MjModel, x: float, y: float) -> float:
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geom = np.zeros(1, np.int32)
    return 2.0 - mujoco.mj_ray(model, data, np.array([x, y, 2.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geom)


@pytest.mark.parametrize("kind", TERRAINS)
def test_the_robot_starts_on_flat_ground_and_the_ground_is_where_the_lookup_says(kind):
    terrain = make_terrain(kind, seed=2)
    model = scene_model(str(SCENE), kind, seed=2)
    assert terrain.height_at(np.array([0.0]), np.array([0.0]))[0] == 0.0
    rng = np.random.default_rng(0)
    for x, y in zip(rng.uniform(-1, 8, 40), rng.uniform(-1.5, 1.5, 40), strict=True):
        assert ground_by_ray(model, x, y) == pytest.approx(terrain.height_at(x, y), abs=1e-3)


def test_the_features_have_the_issues_dimensions():
    x = np.linspace(COURSE_START_X, COURSE_END_X, 400)
    y = np.zeros_like(x)
    rough = make_terrain("rough", seed=1).height_at(x, y)
    assert 0.02 < np.abs(rough).max() <= 0.04 + 1e-9
    slope = make_terrain("slope").height_at(x, y)
    steepest = np.degrees(np.arctan(np.abs(np.diff(slope) / np.diff(x)).max()))
    assert steepest == pytest.approx(15.0, abs=0.5) and slope.max() > 0.3, "15 degrees up and down"
    stairs = make_terrain("stairs").height_at(x, y)
    grid = make_terrain("stairs").heights
    risers = np.diff(np.unique(np.round(grid[len(grid) // 2], 6)))  # the grid's levels (the lookup blends risers)
    assert np.allclose(risers, STEP_HEIGHT_M) and len(risers) == 5, "5 steps of 10 cm up (then down)"
    assert make_terrain("stairs", difficulty=0.5).height_at(x, y).max() == pytest.approx(0.5 * stairs.max())
    assert slope[-1] == pytest.approx(0.0) and stairs[-1] == pytest.approx(0.0), "flat again after the course"


def test_a_models_course_can_be_exchanged_after_compiling():
    model = compile_with_terrain(mujoco.MjSpec.from_file(str(SCENE)), make_terrain("flat"))
    stairs = make_terrain("stairs")
    set_terrain_heights(model, stairs)
    for x in (1.0, 2.3, 3.1):
        assert ground_by_ray(model, x, 0.3) == pytest.approx(stairs.height_at(x, 0.3), abs=1e-3)


def test_unknown_terrain_and_difficulty_are_refused():
    with pytest.raises(ValueError, match="expected one of flat, rough, slope, stairs"):
        make_terrain("ice")
    with pytest.raises(ValueError, match="difficulty"):
        make_terrain("slope", difficulty=1.5)


def test_a_robot_rests_on_an_exchanged_course_rather_than_falling_through_it():
    """MuJoCo sizes a height field's collision bounds when it compiles: an exchanged course must stay inside them."""
    model = compile_with_terrain(mujoco.MjSpec.from_file(str(SCENE)), make_terrain("flat"))
    set_terrain_heights(model, make_terrain("stairs"))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    data.qpos[0], data.qpos[2] = 2.5, 0.5 + 0.35  # above the stairs' 0.5 m plateau
    for _ in range(500):
        mujoco.mj_step(model, data)
    assert data.qpos[2] > 0.5, f"the robot ended at z = {data.qpos[2]:.2f} m, through the plateau"


def test_a_coarser_grid_keeps_the_rough_courses_surface_and_the_ground_lookup_true():
    fine, coarse = make_terrain("rough", seed=4), make_terrain("rough", seed=4, cell_m=0.1)
    assert coarse.cell_m == 0.1 and coarse.heights.shape[1] < fine.heights.shape[1] / 3
    nodes = np.arange(COURSE_START_X, COURSE_END_X, 0.2)  # the rough course's own 0.2 m grid
    np.testing.assert_allclose(coarse.height_at(nodes, np.full_like(nodes, 0.4)),
                               fine.height_at(nodes, np.full_like(nodes, 0.4)), atol=1e-9)
    model = compile_with_terrain(mujoco.MjSpec.from_file(str(SCENE)), coarse)
    for x in (1.0, 2.3, 3.9):
        assert ground_by_ray(model, x, 0.4) == pytest.approx(coarse.height_at(x, 0.4), abs=2e-3)


def test_a_grid_coarser_than_the_rough_courses_own_is_refused():
    with pytest.raises(ValueError, match="terrain cell must be in"):
        make_terrain("rough", cell_m=0.5)
