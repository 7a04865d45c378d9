"""A schema-1 policy file is refused until the user re-exports it or runs `surrogait-train upgrade-contract`,
which rewrites only the contract and warns that the policy was trained without the soft joint range."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from surrogait_core.policy.contract import METADATA_KEY, SCHEMA_KEY, SchemaVersionError, read_contract
from surrogait_core.policy.locomotion_contract import soft_joint_range
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.robot_spec import load_robot_spec
from surrogait_train.cli import main
from surrogait_train.config import EnvConfig
from surrogait_train.env import make_contract
from surrogait_train.export import export_onnx
from surrogait_train.networks import Actor

SPEC = load_robot_spec("go2")
V2_ONLY = ("default_joint_pos", "soft_joint_pos_lower", "soft_joint_pos_upper")


def write_version_1_policy(path, action_offset_shift: float = 0.0):
    """A policy file as the previous surrogait exported it: schema 1, no default pose, no soft range."""
    contract = make_contract(EnvConfig())
    export_onnx(Actor(contract.obs_size, contract.action_size, [16]), contract, path)
    raw = json.loads(contract.to_json())
    for field in V2_ONLY:
        del raw[field]
    raw["schema_version"] = 1
    raw["action"]["offset"] = [x + action_offset_shift for x in raw["action"]["offset"]]
    model = onnx.load(str(path))
    for prop in model.metadata_props:
        prop.value = {METADATA_KEY: json.dumps(raw), SCHEMA_KEY: "1"}.get(prop.key, prop.value)
    onnx.save(model, str(path))
    return path


def test_version_1_policy_is_refused_by_eval_with_the_way_to_fix_it(tmp_path, capsys):
    old = write_version_1_policy(tmp_path / "old.onnx")
    assert main(["eval", str(old)]) == 2
    err = capsys.readouterr().err
    assert str(old) in err and "surrogait-train export" in err and "surrogait-train upgrade-contract" in err
    with pytest.raises(SchemaVersionError):
        OnnxPolicy(old)


def test_upgrade_contract_adds_the_soft_range_and_default_pose_and_keeps_the_network(tmp_path, capsys):
    old = write_version_1_policy(tmp_path / "old.onnx")
    before = old.read_bytes()
    new = tmp_path / "upgraded" / "new.onnx"
    assert main(["upgrade-contract", str(old), "--out", str(new)]) == 0
    captured = capsys.readouterr()
    assert "warning:" in captured.err and "trained without this soft joint range" in captured.err
    assert f"surrogait-train eval {new}" in captured.err
    assert "schema 1 -> 2" in captured.out

    contract = read_contract(new, robot="go2")
    lower, upper = soft_joint_range(SPEC.joint_pos_lower, SPEC.joint_pos_upper, EnvConfig().soft_joint_range_fraction)
    np.testing.assert_allclose(contract.soft_joint_pos_lower, lower)
    np.testing.assert_allclose(contract.soft_joint_pos_upper, upper)
    np.testing.assert_array_equal(contract.default_joint_pos, SPEC.default_joint_pos)
    # everything else in the contract, and the network itself, is unchanged
    v1 = json.loads({p.key: p.value for p in onnx.load(str(old)).metadata_props}[METADATA_KEY])
    v2 = json.loads(contract.to_json())
    assert {k: v for k, v in v2.items() if k not in (*V2_ONLY, "schema_version")} == {
        k: v for k, v in v1.items() if k != "schema_version"
    }
    assert onnx.load(str(new)).graph == onnx.load(str(old)).graph
    assert old.read_bytes() == before, "the old file is left as it was"
    assert not list(new.parent.glob("*.tmp"))


def test_upgrade_contract_warns_when_the_model_pose_is_not_the_policys_action_offset(tmp_path, capsys):
    old = write_version_1_policy(tmp_path / "old.onnx", action_offset_shift=0.03)
    assert main(["upgrade-contract", str(old), "--out", str(tmp_path / "new.onnx")]) == 0
    assert "differs from this policy's action offset by up to 0.0300 rad" in capsys.readouterr().err


def test_upgrade_contract_refuses_a_current_file(tmp_path, capsys):
    old = write_version_1_policy(tmp_path / "old.onnx")
    new = tmp_path / "new.onnx"
    assert main(["upgrade-contract", str(old), "--out", str(new)]) == 0
    capsys.readouterr()
    assert main(["upgrade-contract", str(new), "--out", str(tmp_path / "again.onnx")]) == 2
    assert "already schema version 2; nothing to upgrade" in capsys.readouterr().err
    assert not (tmp_path / "again.onnx").exists()
