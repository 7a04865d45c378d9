"""Export the actor (normaliser included) to ONNX with the policy contract embedded in its metadata."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import torch

from surrogait_core.policy.contract import PolicyContract, write_contract
from surrogait_train.networks import Actor

INPUT_NAME, OUTPUT_NAME = "obs", "action"


def export_onnx(actor: Actor, contract: PolicyContract, out_path: Path | str) -> Path:
    """Write `out_path` atomically: obs (batch, obs_size) float32 -> action (batch, action_size)."""
    out_path = Path(out_path)
    obs_size, action_size = actor.normalizer.mean.shape[0], actor.net[-1].out_features
    if (obs_size, action_size) != (contract.obs_size, contract.action_size):
        raise ValueError(
            f"actor maps {obs_size} -> {action_size} but the contract says {contract.obs_size} -> "
            f"{contract.action_size}; export the actor with the contract of the env it was trained in"
        )
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".export.onnx")
    actor = actor.eval()
    write_torch_onnx(actor, contract.obs_size, tmp)
    write_contract(tmp, contract)
    os.replace(tmp, out_path)
    return out_path


def write_torch_onnx(module: torch.nn.Module, obs_size: int, path: Path) -> None:
    """The one ONNX graph layout every surrogait policy has (SHAC or PPO): `obs -> action`, batched."""
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but exact and dependency-free
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            module,
            (torch.zeros(1, obs_size, device=next(module.parameters()).device),),
            str(path),
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: "batch"}, OUTPUT_NAME: {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


def parity_error(actor: torch.nn.Module, onnx_path: Path | str, num_samples: int = 256, seed: int = 0) -> float:
    """Max |onnxruntime - torch| over random observations (contract units)."""
    from surrogait_core.policy.onnx_policy import OnnxPolicy

    policy = OnnxPolicy(onnx_path)
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(num_samples, policy.contract.obs_size)).astype(np.float32)
    with torch.no_grad():
        ref = actor.eval()(torch.from_numpy(obs)).numpy()
    return float(np.abs(policy.act(obs) - ref).max())
