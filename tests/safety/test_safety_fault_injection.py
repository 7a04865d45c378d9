"""The fault-injection tools: a NaN-on-trigger policy that is otherwise the same policy, a rogue LowCmd."""

import numpy as np
import pytest

from surrogait_core.policy.contract import read_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire
from surrogait_rehearsal.harness.fault_injection import command_vx_index, make_nan_policy, rogue_lowcmd


@pytest.fixture
def linear_policy(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from surrogait_core.policy.contract import write_contract
    from surrogait_core.policy.locomotion_contract import make_locomotion_contract

    contract = make_locomotion_contract(load_robot_spec("go2"), soft_joint_range_fraction=0.9)
    rng = np.random.default_rng(0)
    w = rng.normal(size=(contract.obs_size, contract.action_size)).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "W"], ["action"])], "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", contract.obs_size])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, ["batch", contract.action_size])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "policy.onnx"
    onnx.save(model, str(path))
    write_contract(path, contract)
    return path


def test_nan_policy_is_the_same_policy_below_the_trigger(linear_policy, tmp_path):
    nan_path = make_nan_policy(linear_policy, tmp_path / "nan.onnx", vx_trigger_mps=0.75)
    original, faulty = OnnxPolicy(linear_policy, robot="go2"), OnnxPolicy(nan_path, robot="go2")
    assert faulty.contract == original.contract  # loads as any policy
    col, scale = command_vx_index(faulty.contract)
    obs = np.random.default_rng(1).normal(size=(5, faulty.contract.obs_size)).astype(np.float32)
    obs[:, col] = np.array([0.0, 0.5, 0.74, 0.76, 1.0]) * scale
    out, ref = faulty.act(obs), original.act(obs)
    np.testing.assert_allclose(out[:3], ref[:3], rtol=1e-6)
    assert np.all(np.isnan(out[3:]))


def test_nan_policy_needs_a_command_term(linear_policy, tmp_path):
    contract = read_contract(linear_policy)
    assert command_vx_index(contract)[0] == 6  # after base_ang_vel_b and projected_gravity_b


def test_rogue_command_is_stiff_crc_sealed_and_out_of_range():
    spec = load_robot_spec("go2")
    msg = rogue_lowcmd("go2", "FR_hip", 1.5)
    assert go2_wire.crc_ok(msg)
    cmd = go2_wire.motor_commands(msg)
    assert cmd.is_stiff and cmd.q[0] == pytest.approx(1.5) and cmd.q[0] > spec.joint_pos_upper[0]
    np.testing.assert_allclose(cmd.q[1:], spec.default_joint_pos[1:], rtol=1e-6)
    with pytest.raises(ValueError, match="unknown joint"):
        rogue_lowcmd("go2", "FR_knee", 0.0)
