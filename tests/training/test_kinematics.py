"""The surrogate's leg kinematics agree with Pinocchio (built from the same MJCF) to 1e-5."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest
import torch

from surrogait_core.robot_spec import load_robot_spec
from surrogait_train.kinematics import LegKinematics


@pytest.mark.parametrize("robot", ["go2", "go1"])
def test_foot_positions_match_pinocchio(robot):
    spec = load_robot_spec(robot)
    kin = LegKinematics(mujoco.MjModel.from_xml_path(str(spec.mjcf_path)), dtype=torch.float64)
    pmodel = pin.buildModelFromMJCF(str(spec.mjcf_path))
    pdata = pmodel.createData()
    rng = np.random.default_rng(0)
    for _ in range(20):
        q_sdk = rng.uniform(spec.joint_pos_lower, spec.joint_pos_upper)
        q = pin.neutral(pmodel)
        q[7:] = spec.to_model_order(q_sdk)  # base at the origin, identity orientation
        pin.framesForwardKinematics(pmodel, pdata, q)
        expected = np.array([pdata.oMf[pmodel.getFrameId(f)].translation for f in spec.foot_names])
        feet, _ = kin(torch.tensor(q_sdk))
        np.testing.assert_allclose(feet.numpy(), expected, atol=1e-5)


def test_float32_kinematics_within_1e5_and_jacobian_matches_autograd():
    spec = load_robot_spec("go2")
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    kin64, kin32 = LegKinematics(model, torch.float64), LegKinematics(model)
    q = torch.tensor(np.random.default_rng(1).uniform(spec.joint_pos_lower, spec.joint_pos_upper))
    p64, jac = kin64(q)
    p32, _ = kin32(q.float())
    assert (p64 - p32.double()).abs().max() < 1e-5
    full = torch.autograd.functional.jacobian(lambda x: kin64(x)[0].reshape(-1), q).reshape(4, 3, 4, 3)
    for leg in range(4):
        torch.testing.assert_close(full[leg, :, leg, :], jac[leg], atol=1e-9, rtol=0)


def test_inverse_kinematics_reaches_reachable_targets():
    spec = load_robot_spec("go2")
    kin = LegKinematics(mujoco.MjModel.from_xml_path(str(spec.mjcf_path)))
    q0 = torch.tensor(spec.default_joint_pos, dtype=torch.float32)
    target = kin(q0)[0] + torch.tensor([0.06, -0.02, 0.08])
    q = kin.inverse(target, q0)
    assert (kin(q)[0] - target).abs().max() < 1e-4
