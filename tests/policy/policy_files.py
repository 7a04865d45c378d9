"""Test helpers: small real ONNX policies with surrogait contracts (no torch needed), robot states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from surrogait_core.policy.contract import PolicyContract, write_contract
from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire.go2_wire import Gamepad, LowStateView


def write_linear_policy(path: Path, contract: PolicyContract, weight: np.ndarray | None = None,
                        bias: np.ndarray | None = None) -> Path:
    """action = tanh(obs · W + b): a one-layer network, exported as ONNX with its contract."""
    n_obs, n_act = contract.obs_size, contract.action_size
    w = np.zeros((n_obs, n_act), np.float32) if weight is None else weight.astype(np.float32)
    b = np.zeros(n_act, np.float32) if bias is None else bias.astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "W"], ["h"]), helper.make_node("Add", ["h", "b"], ["z"]),
         helper.make_node("Tanh", ["z"], ["action"])],
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", n_obs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, ["batch", n_act])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    write_contract(path, contract)
    return path


def write_test_policy(path: Path, robot: str = "go2", with_base_lin_vel: bool = False, **kwargs) -> Path:
    contract = make_locomotion_contract(load_robot_spec(robot), soft_joint_range_fraction=0.9,
                                        with_base_lin_vel=with_base_lin_vel)
    return write_linear_policy(path, contract, **kwargs)


def lowstate(joint_pos=None, quat=(1.0, 0.0, 0.0, 0.0), gyro=(0.0, 0.0, 0.0)) -> LowStateView:
    """A decoded rt/lowstate of a level, still Go2 (default pose unless `joint_pos` is given)."""
    return LowStateView(
        tick_ms=0, quat_wxyz=np.array(quat), gyro_b=np.array(gyro), accel_b=np.array([0.0, 0.0, 9.81]),
        joint_pos=load_robot_spec("go2").default_joint_pos.copy() if joint_pos is None else np.asarray(joint_pos),
        joint_vel=np.linspace(-1, 1, 12), joint_tau_est=np.zeros(12), foot_force=np.zeros(4),
        gamepad=Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0),
    )
