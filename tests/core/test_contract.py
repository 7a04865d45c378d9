"""The policy contract travels inside the ONNX file and is checked when it is read back."""

import dataclasses
import json

import numpy as np
import onnx
import pytest

from surrogait_core.policy.contract import (
    METADATA_KEY,
    SCHEMA_VERSION,
    GaitSpec,
    MalformedContractError,
    MissingContractError,
    PolicyContract,
    PolicyFileError,
    RobotMismatchError,
    SchemaVersionError,
    read_contract,
    write_contract,
)
from surrogait_core.policy.locomotion_contract import make_locomotion_contract, soft_joint_range
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.robot_spec import load_robot_spec

from .onnx_fixtures import linear_policy_onnx


@pytest.fixture
def contract():
    pace = GaitSpec(name="pace", phase_offsets=(0.0, 0.5, 0.0, 0.5))
    return make_locomotion_contract(load_robot_spec("go2"), soft_joint_range_fraction=0.9, gait=pace)


@pytest.fixture
def policy_file(tmp_path, contract):
    path = tmp_path / "policy.onnx"
    linear_policy_onnx(path, contract.obs_size, contract.action_size)
    write_contract(path, contract)
    return path


def _set_metadata(path, value):
    model = onnx.load(str(path))
    for p in model.metadata_props:
        if p.key == METADATA_KEY:
            p.value = value
    onnx.save(model, str(path))


def test_contract_round_trips_through_a_real_onnx_file(policy_file, contract):
    assert read_contract(policy_file) == contract
    assert read_contract(policy_file, robot="go2").gait.name == "pace"


def test_onnx_policy_runs_and_maps_actions_to_joint_targets(policy_file, contract):
    policy = OnnxPolicy(policy_file, robot="go2")
    obs = np.random.default_rng(0).normal(size=contract.obs_size).astype(np.float32)
    action = policy.act(obs)
    assert action.shape == (12,)
    expected = np.asarray(contract.action.offset) + 0.25 * np.clip(action, -contract.action.clip, contract.action.clip)
    np.testing.assert_allclose(policy.joint_targets(action), expected)
    assert policy.act(np.stack([obs, obs])).shape == (2, 12)


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(PolicyFileError, match="nope.onnx.*not found"):
        read_contract(tmp_path / "nope.onnx")


def test_corrupt_file_is_refused(tmp_path):
    path = tmp_path / "corrupt.onnx"
    path.write_bytes(b"\x00garbage\xff" * 10)
    with pytest.raises(PolicyFileError, match="corrupt.onnx.*not a readable ONNX"):
        read_contract(path)


def test_onnx_without_contract_is_refused(tmp_path):
    path = tmp_path / "plain.onnx"
    linear_policy_onnx(path, 53, 12)
    with pytest.raises(MissingContractError, match="plain.onnx.*no surrogait policy contract"):
        read_contract(path)


def test_malformed_json_is_refused(policy_file):
    _set_metadata(policy_file, "{not json")
    with pytest.raises(MalformedContractError, match="not valid JSON"):
        read_contract(policy_file)


def test_contract_with_a_missing_field_is_refused(policy_file, contract):
    raw = json.loads(contract.to_json())
    del raw["kp"]
    _set_metadata(policy_file, json.dumps(raw))
    with pytest.raises(MalformedContractError, match="missing or has a wrong field.*kp"):
        read_contract(policy_file)


def test_contract_with_inconsistent_sizes_is_refused(policy_file, contract):
    raw = json.loads(contract.to_json())
    raw["kd"] = raw["kd"][:5]
    _set_metadata(policy_file, json.dumps(raw))
    with pytest.raises(MalformedContractError, match="kd has 5 entries for 12 joints"):
        read_contract(policy_file)


def test_version_1_file_is_refused_with_the_two_ways_to_fix_it(policy_file, contract):
    raw = json.loads(contract.to_json())
    for field in ("default_joint_pos", "soft_joint_pos_lower", "soft_joint_pos_upper"):
        del raw[field]
    raw["schema_version"] = 1
    _set_metadata(policy_file, json.dumps(raw))
    with pytest.raises(SchemaVersionError) as refused:
        read_contract(policy_file)
    message = str(refused.value)
    assert str(policy_file) in message
    assert "surrogait-train export" in message
    assert f"surrogait-train upgrade-contract {policy_file} --out NEW.onnx" in message


def test_other_schema_version_is_refused(policy_file, contract):
    raw = json.loads(contract.to_json())
    raw["schema_version"] = 99
    _set_metadata(policy_file, json.dumps(raw))
    with pytest.raises(SchemaVersionError, match="schema version 99.*re-export"):
        read_contract(policy_file)


def test_policy_for_another_robot_is_refused(policy_file):
    with pytest.raises(RobotMismatchError, match="trained for the 'go2'.*robot here is a 'go1'"):
        OnnxPolicy(policy_file, robot="go1")


def test_network_that_disagrees_with_its_contract_is_refused(tmp_path, contract):
    path = tmp_path / "wrong_size.onnx"
    linear_policy_onnx(path, contract.obs_size + 3, contract.action_size)
    write_contract(path, contract)
    with pytest.raises(PolicyFileError, match="network maps 56 -> 12.*contract says 53 -> 12"):
        OnnxPolicy(path)


def test_rewriting_the_contract_replaces_it(policy_file, contract):
    other = PolicyContract(**{**contract.__dict__, "control_dt_s": 0.01})
    write_contract(policy_file, other)
    assert read_contract(policy_file).control_dt_s == 0.01
    keys = [p.key for p in onnx.load(str(policy_file)).metadata_props]
    assert keys.count(METADATA_KEY) == 1


def test_contract_carries_the_default_pose_and_a_soft_range_strictly_inside_the_joint_range(contract):
    spec = load_robot_spec("go2")
    np.testing.assert_array_equal(contract.default_joint_pos, spec.default_joint_pos)
    np.testing.assert_array_equal(contract.action.offset, contract.default_joint_pos)
    lower, upper = np.asarray(contract.soft_joint_pos_lower), np.asarray(contract.soft_joint_pos_upper)
    assert np.all(spec.joint_pos_lower < lower) and np.all(upper < spec.joint_pos_upper)
    assert contract.schema_version == SCHEMA_VERSION == 2
    # per-joint fields stay tuples: the frozen contract serialises as it is
    assert all(type(getattr(contract, f)) is tuple
               for f in ("default_joint_pos", "soft_joint_pos_lower", "soft_joint_pos_upper"))


def test_soft_range_is_the_joint_range_shrunk_about_its_centre():
    lower, upper = soft_joint_range(np.array([-1.0, 0.0]), np.array([1.0, 4.0]), 0.9)
    np.testing.assert_allclose(lower, [-0.9, 0.2])
    np.testing.assert_allclose(upper, [0.9, 3.8])
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\)"):
        soft_joint_range(np.zeros(1), np.ones(1), 1.0)


def test_locomotion_contract_takes_the_contracts_own_defaults(contract):
    plain = make_locomotion_contract(load_robot_spec("go2"), soft_joint_range_fraction=0.9)
    fields = {f.name: f.default for f in dataclasses.fields(PolicyContract)}
    assert plain.control_dt_s == fields["control_dt_s"]
    assert plain.gait == fields["gait"] and plain.command_ranges == fields["command_ranges"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"soft_joint_pos_lower": (0.0,) * 11}, "soft_joint_pos_lower has 11 entries for 12 joints"),
        ({"default_joint_pos": (0.0,) * 13}, "default_joint_pos has 13 entries for 12 joints"),
        ({"soft_joint_pos_upper": (-3.0,) * 12}, "needs lower < upper, not so for FR_hip, FR_thigh"),
        ({"soft_joint_pos_upper": (float("nan"),) * 12}, "needs lower < upper"),
        ({"default_joint_pos": (2.0,) * 12}, "default_joint_pos is outside the soft joint range for FR_hip"),
    ],
)
def test_contract_with_a_bad_default_pose_or_soft_range_is_refused(policy_file, contract, change, problem):
    raw = json.loads(dataclasses.replace(contract, **change).to_json())
    _set_metadata(policy_file, json.dumps(raw))
    with pytest.raises(MalformedContractError, match=problem):
        read_contract(policy_file)
    with pytest.raises(MalformedContractError, match=problem):
        write_contract(policy_file, dataclasses.replace(contract, **change))


def test_reading_a_contract_does_not_load_the_onnx_package(policy_file):
    """The nodes read their policy's contract at start-up, beside a running simulator or robot: onnxruntime (which
    they load anyway) reads the metadata; the `onnx` package would add 0.6-1 s of CPU to each node's start."""
    import subprocess
    import sys

    script = ("import sys; from surrogait_core.policy.contract import read_contract; "
              f"read_contract({str(policy_file)!r}); print('onnx' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False", result.stdout + result.stderr
