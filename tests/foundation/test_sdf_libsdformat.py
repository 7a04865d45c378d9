"""The generated Gazebo files, read by the real SDF parser rather than by our own XML reading.

Debian 12's libsdformat 12 (scripts/setup.sh installs libsdformat-dev) is the parser; gz sim 8 (Harmonic) reads
SDF with libsdformat 14, which cannot be installed here. A small C++ program (sdf_check.cc), compiled here
once per source, loads each file strictly (warnings, unknown and deprecated elements are errors) and prints
what the parser understood: link poses resolved in the model frame, joints with their axes and limits, plugins
with their elements. These tests compare that with the MJCF the files are generated from, and check the
spawn: every joint inside its range from the first step (the spawn-pose system's positions, as the parser
hands them to it), the folded robot clear of the ground.

Not checked here (no Gazebo): that gz sim's PythonSystemLoader runs the spawn-pose system and that the
physics applies its reset before the first step (test_gz_spawn_pose checks the system's own logic).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import mujoco
import numpy as np
import pytest

from surrogait_core.robot_spec import ROBOTS, load_robot_spec
from surrogait_description import gz_spawn_pose

REPO = Path(__file__).resolve().parents[2]
DESCRIPTION = REPO / "ros2_ws/src/surrogait_description"
SDF_DIR = DESCRIPTION / "sdf"
CHECK_SOURCE = Path(__file__).with_name("sdf_check.cc")
PKG = "sdformat12"  # Debian 12's libsdformat-dev
SPAWN_LOADER = "gz::sim::systems::PythonSystemLoader"
MARGIN_RAD = 0.05  # a spawn position this far inside its joint's range at least


def _generator():
    spec = importlib.util.spec_from_file_location("generate_sdf", DESCRIPTION / "tools/generate_sdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sdf_check() -> Path:
    """The checker, compiled against libsdformat (cached by source and library version: ~10 s the first time)."""
    if shutil.which("pkg-config") is None or subprocess.run(["pkg-config", "--exists", PKG]).returncode:
        pytest.fail(f"libsdformat ({PKG}.pc) is not installed: run `make setup` (scripts/setup.sh installs "
                    "libsdformat-dev on Debian)")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", PKG], check=True, capture_output=True,
                           text=True).stdout.split()
    version = subprocess.run(["pkg-config", "--modversion", PKG], check=True, capture_output=True, text=True).stdout
    digest = hashlib.sha256(CHECK_SOURCE.read_bytes() + version.encode()).hexdigest()[:16]
    binary = Path(tempfile.gettempdir()) / "surrogait-sdf-check" / f"sdf_check-{digest}"
    if not binary.is_file():
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".partial")
        subprocess.run(["g++", "-std=c++17", str(CHECK_SOURCE), *flags, "-o", str(partial)], check=True)
        partial.replace(binary)  # atomic: a concurrent run never executes a half-written file
    return binary


@pytest.fixture(scope="module")
def parsed(sdf_check) -> dict[str, dict]:
    """{path relative to sdf/: what libsdformat understood} for every generated model and world."""
    files = [SDF_DIR / "models" / robot / "model.sdf" for robot in ROBOTS] + \
            [SDF_DIR / "worlds" / f"{robot}_flat.sdf" for robot in ROBOTS]
    run = subprocess.run([str(sdf_check), str(SDF_DIR / "models"), *map(str, files)], capture_output=True, text=True)
    # Some complaints go to the console only (a version newer than the parser's, say): none may appear.
    assert "Error" not in run.stderr and "Warning" not in run.stderr, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert run.returncode == 0, [r["errors"] for r in results]
    return {str(Path(r["file"]).relative_to(SDF_DIR)): r for r in results}


def test_every_file_parses_cleanly_in_the_version_it_declares(parsed):
    generator = _generator()
    for name, result in parsed.items():
        assert result["errors"] == [], name
        assert result["declared_version"] == generator.SDF_VERSION == result["parser_version"], name


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_parser_reads_the_mjcf_kinematics_and_limits(parsed, robot):
    (sdf_model,) = parsed[f"models/{robot}/model.sdf"]["models"]
    model = mujoco.MjModel.from_xml_path(str(load_robot_spec(robot).mjcf_path))
    data = mujoco.MjData(model)
    data.qpos[:] = 0.0
    data.qpos[3] = 1.0  # every joint at 0, the base at the origin: the model frame
    mujoco.mj_kinematics(model, data)
    for body in range(1, model.nbody):
        name = model.body(body).name
        pose = np.array(sdf_model["links"][name]["pose"])
        np.testing.assert_allclose(pose[:3], data.xpos[body], atol=1e-9, err_msg=name)
        assert abs(abs(float(pose[3:] @ data.xquat[body])) - 1.0) < 1e-9, name  # same rotation (q or -q)
    hinges = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    revolute = {n: j for n, j in sdf_model["joints"].items() if j["type"] == "revolute"}
    assert sorted(revolute) == sorted(model.joint(j).name for j in hinges)
    for j in hinges:
        joint = revolute[model.joint(j).name]
        assert (joint["lower"], joint["upper"]) == pytest.approx(tuple(model.jnt_range[j]), abs=1e-9)
        np.testing.assert_allclose(joint["axis_in_child"], model.jnt_axis[j], atol=1e-12)
        actuator = next(a for a in range(model.nu) if model.actuator_trnid[a, 0] == j)
        assert joint["effort"] == pytest.approx(model.actuator_ctrlrange[actuator, 1])


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_robot_spawns_lying_with_every_joint_inside_its_range(parsed, robot):
    world = parsed[f"worlds/{robot}_flat.sdf"]
    sdf_model = next(m for m in world["models"] if m["name"] == robot)
    spawners = [p for p in sdf_model["plugins"] if p["name"] == SPAWN_LOADER]
    assert len(spawners) == 1, "one spawn-pose system in the model"
    (spawner,) = spawners
    assert spawner["filename"] == "gz-sim-python-system-loader-system"
    module = spawner["elements"]["module_name"]
    assert module == gz_spawn_pose.__name__ and importlib.util.find_spec(module) is not None
    # What the system will be handed (the plugin element as libsdformat parsed it), read by its own parser.
    positions = gz_spawn_pose.parse_joint_positions(spawner["elements"][gz_spawn_pose.PLUGIN_ELEMENT])
    joints = {n: j for n, j in sdf_model["joints"].items() if j["type"] == "revolute"}
    assert sorted(positions) == sorted(joints), "every joint is placed, none twice"
    spec = load_robot_spec(robot)
    np.testing.assert_allclose([positions[f"{n}_joint"] for n in spec.joint_names], spec.lying_joint_pos)
    for name, q in positions.items():
        lower, upper = joints[name]["lower"], joints[name]["upper"]
        assert lower + MARGIN_RAD <= q <= upper - MARGIN_RAD, (name, q, lower, upper)
    # Why the system exists: at gz sim's default of 0 the calves would start outside their own range.
    assert all(not j["lower"] <= 0.0 <= j["upper"] for n, j in joints.items() if n.endswith("_calf_joint"))
    # Placed just above the ground (upright, at the height the parser resolved), lying folded.
    pose = np.array(sdf_model["pose"])
    np.testing.assert_allclose(pose[3:], [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    gap = _generator().lowest_point(model, positions, base_height=float(pose[2]))
    assert 0.0 < gap <= 0.02, f"the lying robot's lowest point is {gap:.3f} m above the ground"


def test_the_rehearsal_simulator_starts_from_the_same_lying_pose():
    """One lying pose: the MuJoCo rehearsal's start (sim.mujoco.core) is the description's, as Gazebo's is."""
    from surrogait_rehearsal.sim.mujoco.core import LYING_JOINT_POS

    for robot in ROBOTS:
        np.testing.assert_allclose(LYING_JOINT_POS, load_robot_spec(robot).lying_joint_pos)
