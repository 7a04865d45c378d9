"""Export the actor (normaliser included) to ONNX with the policy contract embedded in its metadata."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import torch

from surrogait_core.policy.contract import PolicyContract, write_contract
from surrogait_core.policy.provenance import write_provenance
from surrogait_train.networks import Actor

INPUT_NAME, OUTPUT_NAME = "obs", "action"
# A residual policy's graph computes its gait reference inside (surrogait_train.reference); this metadata says so,
# so that a run started from the file (`--init-from`) rebuilds the same actor, not a plain MLP that would lose it.
ACTION_REFERENCE_KEY = "surrogait_action_reference"


def export_onnx(actor: Actor, contract: PolicyContract, out_path: Path | str, provenance: dict | None = None) -> Path:
    """Write `out_path` atomically: obs (batch, obs_size) float32 -> action (batch, action_size); with the run's
    `provenance` (Trainer.provenance) in its metadata."""
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
    if provenance is not None:
        write_provenance(tmp, provenance)
    if actor.reference is not None:
        write_metadata(tmp, ACTION_REFERENCE_KEY, json.dumps(actor.reference.describe(), sort_keys=True))
    os.replace(tmp, out_path)
    return out_path


def write_metadata(onnx_path: Path, key: str, value: str) -> None:
    import onnx

    model = onnx.load(str(onnx_path))
    kept = [p for p in model.metadata_props if p.key != key]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    entry = model.metadata_props.add()
    entry.key, entry.value = key, value
    onnx.save(model, str(onnx_path))


def action_reference_of(onnx_path: Path | str) -> dict | None:
    """A residual policy file's gait reference (`GaitReference.describe()`), or None for a plain MLP policy."""
    import onnx

    for prop in onnx.load(str(onnx_path), load_external_data=False).metadata_props:
        if prop.key == ACTION_REFERENCE_KEY:
            return json.loads(prop.value)
    return None


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


def random_observations(contract: PolicyContract, num_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Random observations (contract units) a robot could send: unit normal terms, except the gait clock (sin and
    cos of random phases), the gait's parameters (one of the contract's gaits) and the command (inside its ranges),
    which a residual policy's reference reads as geometry (surrogait_train.reference)."""
    from surrogait_core.policy.gait import clock_features, gait_features

    parts = []
    for term in contract.observation:
        if term.name == "gait_clock":
            raw = clock_features(rng.random((num_samples, 4)))
        elif term.name == "gait_params":
            table = np.stack([gait_features(g) for g in contract.gaits])
            raw = table[rng.integers(0, len(contract.gaits), num_samples)]
        elif term.name == "command":
            r = contract.command_ranges
            lo, hi = zip(r.lin_vel_x, r.lin_vel_y, r.ang_vel_yaw, strict=True)
            raw = rng.uniform(lo, hi, size=(num_samples, 3))
        else:
            parts.append(rng.normal(size=(num_samples, term.size)))
            continue
        parts.append(np.clip(raw * term.scale, -term.clip, term.clip))
    return np.concatenate(parts, axis=-1).astype(np.float32)


def parity_error(actor: torch.nn.Module, onnx_path: Path | str, num_samples: int = 256, seed: int = 0) -> float:
    """Max |onnxruntime - torch| over random observations (contract units, `random_observations`)."""
    from surrogait_core.policy.onnx_policy import OnnxPolicy

    policy = OnnxPolicy(onnx_path)
    rng = np.random.default_rng(seed)
    obs = random_observations(policy.contract, num_samples, rng)
    with torch.no_grad():
        ref = actor.eval()(torch.from_numpy(obs)).numpy()
    return float(np.abs(policy.act(obs) - ref).max())
