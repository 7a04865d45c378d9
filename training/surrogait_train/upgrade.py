"""`surrogait-train upgrade-contract OLD.onnx --out NEW.onnx`: a version-1 policy file under schema 2.

Only the contract changes; the network is copied byte for byte. Version 2 adds what version 1 left to
the robot model at load time, and this fills it in from the robot model as it is now:
  - `default_joint_pos`: the model's default pose (what deployment measured `joint_pos_rel` from);
  - the soft joint range: the model's joint range shrunk to the trainer's default fraction
    (`EnvConfig.soft_joint_range_fraction`).
A version-1 policy was trained without that soft range (its targets were clipped to the hard range
only), so the caller must show the warnings returned here, and the user should evaluate the result.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from surrogait_core.policy.contract import (
    SCHEMA_VERSION,
    ContractError,
    PolicyContract,
    read_contract_json,
    upgrade_contract_v1,
    write_contract,
)
from surrogait_core.policy.locomotion_contract import soft_joint_range
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.robot_spec import load_robot_spec
from surrogait_train.config import EnvConfig


def upgrade_contract_file(
    old_path: Path | str, new_path: Path | str, soft_joint_range_fraction: float | None = None
) -> tuple[PolicyContract, list[str]]:
    """Write `new_path`: `old_path`'s network with its version-1 contract upgraded. Returns the new
    contract and the warnings to show. `soft_joint_range_fraction` None = the trainer's default."""
    old_path, new_path = Path(old_path), Path(new_path)
    raw = read_contract_json(old_path)
    version = raw.get("schema_version")
    if version == SCHEMA_VERSION:
        raise ContractError(f"{old_path}: its contract is already schema version {SCHEMA_VERSION}; nothing to upgrade")
    if version != 1:
        raise ContractError(f"{old_path}: contract schema version {version!r}; upgrade-contract reads version 1 only")
    try:
        spec = load_robot_spec(str(raw.get("robot")))
    except ValueError as e:
        raise ContractError(f"{old_path}: {e}") from None
    if tuple(raw.get("joint_names", ())) != spec.joint_names:
        raise ContractError(f"{old_path}: its joint order {raw.get('joint_names')} is not the {spec.name} model's")
    fraction = EnvConfig().soft_joint_range_fraction if soft_joint_range_fraction is None else soft_joint_range_fraction
    soft_lower, soft_upper = soft_joint_range(spec.joint_pos_lower, spec.joint_pos_upper, fraction)
    contract = upgrade_contract_v1(
        raw, tuple(spec.default_joint_pos), tuple(soft_lower), tuple(soft_upper), source=str(old_path)
    )

    warnings = [
        f"{old_path} was trained without this soft joint range ({fraction:g} of the {spec.name} model's joint "
        "range): from now on its joint targets are clipped to it. Check that it still walks: "
        f"`surrogait-train eval {new_path}`; or re-train and export it with `surrogait-train export`."
    ]
    offset_gap = float(np.max(np.abs(np.asarray(contract.action.offset) - spec.default_joint_pos)))
    if offset_gap > 1e-6:
        warnings.append(
            f"the {spec.name} model's default pose differs from this policy's action offset by up to "
            f"{offset_gap:.4f} rad: the model changed since export, so the stored default pose may not be "
            "the one the policy was trained with"
        )

    new_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = new_path.with_name(new_path.name + ".upgrade.tmp")
    shutil.copyfile(old_path, tmp)
    try:
        write_contract(tmp, contract)
        OnnxPolicy(tmp, robot=spec.name)  # the network still matches its (new) contract
        os.replace(tmp, new_path)
    finally:
        tmp.unlink(missing_ok=True)
    return contract, warnings
