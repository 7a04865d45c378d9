"""Bad inputs to the real `policy_node` executable: each is refused with a clear message and exit 2."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from policy_files import write_test_policy

BESIDE_REHEARSALS = "each node exits at start-up, on a DDS domain of this file's own"
DOMAIN = "23"
# This interpreter's console script, else the one on PATH (make test-jazzy: the script colcon installed).
POLICY_NODE = shutil.which("policy_node", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def params_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(body)
    return path


def policy_params(tmp_path: Path, policy: Path, extra: str = "") -> Path:
    return params_file(tmp_path, f"policy_node:\n  ros__parameters:\n    policy_path: {policy}\n"
                                 f"    dds_domain: {DOMAIN}\n{extra}")


def run_policy_node(params: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, ROS_DOMAIN_ID=DOMAIN, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return subprocess.run([POLICY_NODE, "--ros-args", "--params-file", str(params)], env=env,
                          capture_output=True, text=True, timeout=60)


def bad_policy(kind: str, tmp_path: Path) -> Path:
    if kind == "missing":
        return tmp_path / "no_such_policy.onnx"
    if kind == "corrupt":
        path = tmp_path / "corrupt.onnx"
        path.write_bytes(b"\x08\x07garbage, not a protobuf" * 20)
        return path
    if kind == "other robot":
        return write_test_policy(tmp_path / "go1.onnx", robot="go1")
    raise ValueError(kind)


@pytest.mark.parametrize("kind, message", [
    ("missing", "policy file not found"),
    ("corrupt", "not a readable ONNX model"),
    ("other robot", "trained for the 'go1', but the robot here is a 'go2'"),
])
def test_a_bad_policy_file_is_refused(kind, message, tmp_path):
    result = run_policy_node(policy_params(tmp_path, bad_policy(kind, tmp_path)))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "policy_node: error:" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("body, message", [
    ("policy_node:\n  ros__parameters: [1, 2\n  x: :\n", "cannot read the ROS arguments or the parameters file"),
    ("POLICY\n    dds_domain: twenty-one\n", "'dds_domain' must be an integer"),
    ("POLICY\n    stand_up_duration: 2.0\n", "unknown parameter(s) stand_up_duration"),
    ("POLICY\n    network_interface: eth9\n", "network_interface 'eth9' does not exist"),
])
def test_a_malformed_params_file_is_refused(body, message, tmp_path):
    policy = write_test_policy(tmp_path / "go2.onnx")
    body = body.replace("POLICY", f"policy_node:\n  ros__parameters:\n    policy_path: {policy}")
    result = run_policy_node(params_file(tmp_path, body))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_params_file_is_refused(tmp_path):
    result = run_policy_node(tmp_path / "nowhere.yaml")
    assert result.returncode == 2 and "parameters file" in result.stderr
