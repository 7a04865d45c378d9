"""Export a PPO actor as an ONNX policy with the environment's contract embedded.

The graph is rsl_rl's deterministic actor: observation normaliser (running mean/std frozen at
export) followed by the MLP, `obs (batch, obs_size) -> action (batch, action_size)` — the same
input/output names, opset and exporter settings as the differentiable trainer's
`surrogait_train.export`, and the contract written by `surrogait_core.policy.contract.write_contract`.
So `eval`, `OnnxPolicy` and the policy node read a PPO policy exactly like a SHAC one. The
Gaussian exploration noise is training-only and is not exported.

(The trainer's `export_onnx` is not called directly: it checks the internals of its own
`Actor` class, which an rsl_rl model does not have; the graph writer and the parity check are
shared.)
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import torch
from torch import nn

from surrogait_core.policy.contract import PolicyContract, write_contract
from surrogait_core.policy.provenance import write_provenance
from surrogait_train.export import parity_error, write_torch_onnx


class DeterministicActor(nn.Module):
    """rsl_rl MLPModel -> plain `obs -> mean action` module (normaliser + MLP, no sampling)."""

    def __init__(self, actor: nn.Module):
        super().__init__()
        self.obs_normalizer = copy.deepcopy(actor.obs_normalizer).cpu().eval()
        self.mlp = copy.deepcopy(actor.mlp).cpu().eval()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.obs_normalizer(obs))


def export_actor_onnx(actor: nn.Module, contract: PolicyContract, path: Path | str, check_tol: float = 1e-5,
                      provenance: dict | None = None) -> Path:
    """Write `path` atomically (ONNX + embedded contract + `provenance`); onnxruntime must agree with torch to
    `check_tol`."""

    path = Path(path)
    module = DeterministicActor(actor).eval()
    dummy = torch.zeros(1, contract.obs_size)
    with torch.no_grad():
        width = module(dummy).shape[-1]
    if width != contract.action_size:
        raise ValueError(f"actor outputs {width} actions, the contract has {contract.action_size} joints")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".export.onnx")
    write_torch_onnx(module, contract.obs_size, tmp)
    write_contract(tmp, contract)
    if provenance is not None:
        write_provenance(tmp, provenance)
    err = parity_error(module, tmp)
    if err > check_tol:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"ONNX export of the PPO actor disagrees with torch by {err:.2e} (> {check_tol:.0e})")
    os.replace(tmp, path)
    return path
