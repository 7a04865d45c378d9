"""The demo's entry point: train for a wall-clock budget and export a loadable policy."""

from __future__ import annotations

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_train.api import snapshots, train_and_export


def test_train_and_export_produces_a_policy_the_deployment_wrapper_loads(tmp_path, tiny_overrides):
    out = train_and_export(tiny_overrides, budget_s=3.0, out_path=tmp_path / "go2.onnx", run_dir=tmp_path / "run")
    policy = OnnxPolicy(out, robot="go2")
    assert policy.act([0.0] * policy.contract.obs_size).shape == (12,)
    assert (tmp_path / "run" / "checkpoint.pt").exists() and (tmp_path / "run" / "metrics.csv").exists()


def test_snapshots_every_n_iterations_and_of_the_last_one_newest_first(tmp_path, tiny_overrides):
    train_and_export(tiny_overrides, budget_s=0, out_path=tmp_path / "go2.onnx", run_dir=tmp_path / "run",
                     snapshot_every=2, max_iterations=5)
    found = snapshots(tmp_path / "run")
    assert [iteration for iteration, _ in found] == [5, 4, 2]
    for _, path in found:
        assert OnnxPolicy(path, robot="go2").contract.obs_size == OnnxPolicy(tmp_path / "go2.onnx").contract.obs_size
