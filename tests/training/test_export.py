"""Export: ONNX with the contract embedded; onnxruntime and torch agree to 1e-5."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from surrogait_core.policy.contract import read_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_train.env import make_contract
from surrogait_train.export import export_onnx, parity_error
from surrogait_train.networks import Actor


def test_export_parity_and_contract(tiny_config, tmp_path):
    contract = make_contract(tiny_config.env)
    actor = Actor(contract.obs_size, contract.action_size, [64, 32])
    torch.manual_seed(0)
    with torch.no_grad():
        for p in actor.net.parameters():
            p.normal_(0, 0.3)
        actor.normalizer.update(torch.randn(100, contract.obs_size) * 3 + 1)
    path = export_onnx(actor, contract, tmp_path / "p.onnx")
    assert read_contract(path, robot="go2") == contract
    assert parity_error(actor, path) < 1e-5
    policy = OnnxPolicy(path, robot="go2")
    obs = np.random.default_rng(0).normal(size=(5, contract.obs_size)).astype(np.float32)
    single = policy.act(obs[0])
    assert single.shape == (contract.action_size,)
    with torch.no_grad():
        np.testing.assert_allclose(single, actor(torch.from_numpy(obs[:1]))[0].numpy(), atol=1e-5)
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.export.onnx"))


def test_export_refuses_mismatched_contract(tiny_config, tmp_path):
    contract = make_contract(tiny_config.env)
    actor = Actor(contract.obs_size - 3, contract.action_size, [16])
    with pytest.raises(ValueError, match="contract says 53 -> 12"):
        export_onnx(actor, contract, tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()
