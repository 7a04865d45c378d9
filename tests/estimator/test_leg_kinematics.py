"""Pinocchio leg kinematics against MuJoCo on the same MJCF."""

import mujoco
import numpy as np
import pytest

from surrogait_core.estimator.leg_kinematics import LegKinematics
from surrogait_core.robot_spec import load_robot_spec


@pytest.fixture(scope="module")
def spec():
    return load_robot_spec("go2")


@pytest.fixture(scope="module")
def kin(spec):
    return LegKinematics(spec)


def _random_joints(spec, rng):
    return rng.uniform(spec.joint_pos_lower, spec.joint_pos_upper)


def test_foot_positions_and_velocities_match_mujoco(spec, kin):
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(7)
    site_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, f) for f in spec.foot_names]
    base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "base")
    jacp = np.zeros((3, model.nv))
    for _ in range(50):
        q_sdk, dq_sdk = _random_joints(spec, rng), rng.normal(0.0, 5.0, 12)
        # A random base pose too: the answer must be relative to the base, whatever its pose.
        data.qpos[0:3] = rng.normal(0.0, 1.0, 3)
        quat = rng.normal(size=4)
        data.qpos[3:7] = quat / np.linalg.norm(quat)
        data.qpos[7:] = spec.to_model_order(q_sdk)
        data.qvel[:] = 0.0
        data.qvel[6:] = spec.to_model_order(dq_sdk)
        mujoco.mj_forward(model, data)
        rot_wb = data.xmat[base].reshape(3, 3)
        pos_b, vel_b = kin.feet(q_sdk, dq_sdk)
        for leg, sid in enumerate(site_ids):
            expected_pos = rot_wb.T @ (data.site_xpos[sid] - data.xpos[base])
            mujoco.mj_jacSite(model, data, jacp, None, sid)
            expected_vel = rot_wb.T @ (jacp @ data.qvel)  # base at rest: only the joints move the foot
            np.testing.assert_allclose(pos_b[leg], expected_pos, atol=1e-6)
            np.testing.assert_allclose(vel_b[leg], expected_vel, atol=1e-6)


def test_imu_lever_arm_is_the_mjcf_site(spec, kin):
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    np.testing.assert_allclose(kin.imu_pos_b, model.site("imu").pos, atol=1e-9)
    assert np.linalg.norm(kin.imu_pos_b) > 0.01  # the Go2's IMU is ~5 cm off the base origin


def test_inverse_kinematics_round_trip(spec, kin):
    rng = np.random.default_rng(3)
    q_true = spec.default_joint_pos + rng.normal(0.0, 0.15, 12)
    target = kin.foot_positions(q_true)
    q = kin.joints_for_feet(target, spec.default_joint_pos)
    np.testing.assert_allclose(kin.foot_positions(q), target, atol=1e-9)
