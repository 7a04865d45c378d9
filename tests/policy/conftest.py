"""Fixtures for the policy-node tests: small real ONNX policies with contracts."""

import pytest
from policy_files import write_test_policy


@pytest.fixture
def go2_policy_path(tmp_path):
    return write_test_policy(tmp_path / "go2_zero.onnx")
