"""The MJCF is the one description: MuJoCo, Pinocchio and the generated URDF must agree on it."""

import importlib.util
import sys
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from surrogait_core.robot_spec import ROBOTS, load_robot_spec

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "ros2_ws/src/surrogait_description/tools/generate_descriptions.py"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_descriptions", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _mujoco_feet_in_base(model, data, joint_pos_model):
    data.qpos[:] = 0
    data.qpos[3] = 1.0  # base at the origin, identity orientation: world frame == base frame
    data.qpos[7:] = joint_pos_model
    mujoco.mj_kinematics(model, data)
    return np.array([data.site_xpos[model.site(f"{leg}_foot").id] for leg in ("FL", "FR", "RL", "RR")])


def _pinocchio_feet_in_base(pmodel, pdata, joint_pos_model):
    q = pin.neutral(pmodel)
    q[7:] = joint_pos_model
    pin.framesForwardKinematics(pmodel, pdata, q)
    return np.array([pdata.oMf[pmodel.getFrameId(f"{leg}_foot")].translation for leg in ("FL", "FR", "RL", "RR")])


@pytest.mark.parametrize("robot", ROBOTS)
def test_mujoco_and_pinocchio_read_the_same_robot(robot):
    spec = load_robot_spec(robot)
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    pmodel = pin.buildModelFromMJCF(str(spec.mjcf_path))

    assert abs(sum(i.mass for i in pmodel.inertias) - model.body_mass.sum()) < 1e-9
    pin_joints = [n.removesuffix("_joint") for n in pmodel.names[2:]]
    assert pin_joints == list(spec.model_joint_names)
    hinge_range = model.jnt_range[1:]
    np.testing.assert_allclose(pmodel.lowerPositionLimit[7:], hinge_range[:, 0], atol=1e-12)
    np.testing.assert_allclose(pmodel.upperPositionLimit[7:], hinge_range[:, 1], atol=1e-12)

    data, pdata = mujoco.MjData(model), pmodel.createData()
    rng = np.random.default_rng(0)
    for _ in range(200):
        q = rng.uniform(hinge_range[:, 0], hinge_range[:, 1])
        np.testing.assert_allclose(
            _mujoco_feet_in_base(model, data, q), _pinocchio_feet_in_base(pmodel, pdata, q), atol=1e-6
        )


@pytest.mark.parametrize("robot", ROBOTS)
def test_urdf_matches_mjcf(robot):
    spec = load_robot_spec(robot)
    urdf_path = spec.mjcf_path.parent.parent / "urdf" / f"{robot}.urdf"
    assert urdf_path.read_text() == _generator().urdf_text(spec.mjcf_path), "URDF is stale: rerun the generator"
    urdf = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
    mjcf = pin.buildModelFromMJCF(str(spec.mjcf_path))
    assert abs(sum(i.mass for i in urdf.inertias) - spec.total_mass_kg) < 1e-9
    np.testing.assert_allclose(urdf.lowerPositionLimit[7:], mjcf.lowerPositionLimit[7:])
    np.testing.assert_allclose(urdf.effortLimit[6:], spec.to_model_order(spec.joint_torque_limit))
    rng = np.random.default_rng(1)
    du, dm = urdf.createData(), mjcf.createData()
    for _ in range(50):
        q = pin.randomConfiguration(mjcf)
        pin.framesForwardKinematics(urdf, du, q)
        pin.framesForwardKinematics(mjcf, dm, q)
        for leg in ("FL", "FR", "RL", "RR"):
            np.testing.assert_allclose(
                du.oMf[urdf.getFrameId(f"{leg}_foot")].translation,
                dm.oMf[mjcf.getFrameId(f"{leg}_foot")].translation,
                atol=1e-9,
            )
        rng.random()


def test_mjcf_matches_the_fact_sheets():
    gen = _generator()
    for facts in (gen.GO2, gen.GO1):
        spec = load_robot_spec(facts.name)
        written = spec.mjcf_path.read_text().split("<keyframe>")[0].rstrip()
        assert written == gen.mjcf_text(facts).split("</mujoco>")[0].rstrip()
        hip, thigh_f, calf = facts.hip_range, facts.front_thigh_range, facts.calf_range
        assert tuple(spec.joint_pos_lower[:3]) == (hip[0], thigh_f[0], calf[0])
        assert tuple(spec.joint_pos_upper[6:9]) == (hip[1], facts.rear_thigh_range[1], calf[1])
        np.testing.assert_array_equal(spec.joint_torque_limit[:3], facts.torque_limits)


def test_total_masses_match_the_fact_sheets():
    assert load_robot_spec("go2").total_mass_kg == pytest.approx(15.2, abs=0.05)
    assert load_robot_spec("go1").total_mass_kg == pytest.approx(12.7, abs=0.1)


def test_angles_are_radians():
    """The classic MJCF pitfall: without angle="radian" the limits would be read as degrees."""
    model = mujoco.MjModel.from_xml_path(str(load_robot_spec("go2").mjcf_path))
    assert model.jnt_range[model.joint("FL_calf_joint").id][0] == pytest.approx(-2.7227)
