"""Each robot stands from its keyframe under torque-limited joint PD."""

import mujoco
import numpy as np
import pytest

from surrogait_core.robot_spec import ROBOTS, load_robot_spec


def _roll_pitch(quat_wxyz):
    w, x, y, z = quat_wxyz
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1, 1))
    return roll, pitch


@pytest.mark.parametrize("robot", ROBOTS)
def test_robot_stands_for_five_seconds_under_nominal_pd(robot):
    """The keyframe is the equilibrium under the nominal gains (kp 40, kd 1); softer gains sag further."""
    spec = load_robot_spec(robot)
    kp, kd = spec.nominal_kp, spec.nominal_kd
    model = mujoco.MjModel.from_xml_path(str(spec.scene_path))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("stand").id)
    qadr = model.jnt_qposadr[model.actuator_trnid[:, 0]]
    dadr = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    start_height = data.qpos[2]
    heights, tilts = [], []
    for _ in range(int(5.0 / model.opt.timestep)):
        tau = kp * (spec.default_joint_pos - data.qpos[qadr]) - kd * data.qvel[dadr]
        data.ctrl[:] = np.clip(tau, -spec.joint_torque_limit, spec.joint_torque_limit)
        mujoco.mj_step(model, data)
        heights.append(data.qpos[2])
        tilts.append(np.abs(_roll_pitch(data.qpos[3:7])).max())
    assert np.max(np.abs(np.array(heights) - start_height)) < 0.02
    assert np.degrees(max(tilts)) < 2.0
