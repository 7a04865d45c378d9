"""Small real ONNX files for tests, built with the onnx helper API (no torch needed)."""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def linear_policy_onnx(path: Path, obs_size: int, action_size: int, seed: int = 0) -> np.ndarray:
    """Write action = obs @ W (a real ONNX graph) and return W."""
    weight = np.random.default_rng(seed).normal(scale=0.1, size=(obs_size, action_size)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["obs", "W"], ["actions"])],
        "linear_policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", obs_size])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", action_size])],
        initializer=[numpy_helper.from_array(weight, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return weight
