"""The PPO path on the real environment: rsl_rl trains a few iterations on the batched MuJoCo
Go2 environment, and the exported actor is an ONNX policy that deployment's loader accepts
with the environment's contract."""

import json

import numpy as np
import pytest
import torch

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_train.config import TrainConfig
from surrogait_train.ppo.cli import main as ppo_main
from surrogait_train.ppo.config import from_train_config
from surrogait_train.ppo.train import PPOSession


def _small_config(seed: int = 0) -> TrainConfig:
    cfg = TrainConfig(seed=seed)
    cfg.env.num_envs = 8
    cfg.env.num_threads = 1
    return cfg


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.set_num_threads(1)
    cfg = _small_config()
    ppo = from_train_config(cfg, num_steps_per_env=8, num_mini_batches=2, num_learning_epochs=2)
    session = PPOSession(cfg, ppo)
    before = {k: v.clone() for k, v in session.actor.state_dict().items()}
    session.learn(3)
    path = session.export(tmp_path_factory.mktemp("ppo") / "policy.onnx")
    yield session, before, path
    session.close()


def test_ppo_trains_the_trainers_actor_network_on_the_real_env(trained):
    session, before, _ = trained
    assert session.env_samples == 3 * 8 * 8
    after = session.actor.state_dict()
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert any(k.startswith("mlp.") for k in changed), "PPO updates did not change the actor"
    linear = [m for m in session.actor.mlp if isinstance(m, torch.nn.Linear)]
    hidden = [m.out_features for m in linear[:-1]]
    assert hidden == list(session.train_cfg.learner.actor_hidden)
    assert linear[0].in_features == session.env.obs_size and linear[-1].out_features == session.env.action_size
    assert all(isinstance(m, torch.nn.ELU) for m in session.actor.mlp if not isinstance(m, torch.nn.Linear))


def test_exported_policy_carries_the_env_contract_and_matches_torch(trained):
    session, _, path = trained
    policy = OnnxPolicy(path, robot="go2")
    assert policy.contract == session.env.contract
    obs = session.vec_env.get_observations()["policy"]
    with torch.no_grad():
        expected = session.actor(session.vec_env.get_observations()).numpy()  # deterministic mean
    np.testing.assert_allclose(policy.act(obs.numpy()), expected, atol=1e-5)
    np.testing.assert_allclose(policy.act(obs[0].numpy()), expected[0], atol=1e-5)


def test_cli_trains_and_exports_a_loadable_policy(tmp_path, capsys):
    rc = ppo_main(
        ["train", "--run-dir", str(tmp_path), "--iterations", "1", "--ppo", "num_steps_per_env=4", "num_mini_batches=1",
         "--", "env.num_envs=4", "env.num_threads=1"]
    )  # fmt: skip
    assert rc == 0
    assert OnnxPolicy(tmp_path / "policy.onnx", robot="go2").contract.obs_size > 0
    rc = ppo_main(["export", "--run-dir", str(tmp_path), "--out", str(tmp_path / "again.onnx")])
    assert rc == 0
    a, b = OnnxPolicy(tmp_path / "policy.onnx"), OnnxPolicy(tmp_path / "again.onnx")
    obs = np.random.default_rng(0).normal(size=(3, a.contract.obs_size)).astype(np.float32)
    np.testing.assert_allclose(a.act(obs), b.act(obs), atol=1e-6)


def test_cli_errors_are_clear(tmp_path, capsys):
    assert ppo_main(["export", "--run-dir", str(tmp_path), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "train_config.yaml not found" in capsys.readouterr().err
    assert ppo_main(["train", "--run-dir", str(tmp_path), "--ppo", "no_such_key=1"]) == 2
    assert "unknown PPO config key 'no_such_key'" in capsys.readouterr().err


def test_trainers_eval_runs_the_exported_ppo_policy(trained, tmp_path, capsys):
    from surrogait_train.cli import main as train_main

    _, _, path = trained
    out = tmp_path / "metrics.json"
    # 2 s: past eval's 1 s settling time, so tracking errors are measured
    assert train_main(["eval", str(path), "--episodes", "2", "--seconds", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 episodes" in printed and ("WALKS" in printed or "DOES NOT WALK" in printed)
    metrics = json.loads(out.read_text())
    assert metrics["episodes"] == 2 and 0.0 <= metrics["fall_rate"] <= 1.0
    assert np.isfinite(metrics["vx_rmse"]) or metrics["fall_rate"] == 1.0  # inf only if every robot fell at once
