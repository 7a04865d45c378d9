"""PPO's device (`--device`, learner.device): rsl_rl on the device the config names, on the device-resident
environment too; CUDA asked for where there is none is refused with what to do.

`SURROGAIT_TEST_DEVICE=cuda` runs these with the environment and the learner on the GPU (bench/gpu_check.sh)."""

from __future__ import annotations

import os

import torch

from surrogait_train.config import load_config
from surrogait_train.device_env import DeviceLocomotionEnv
from surrogait_train.ppo.cli import main as ppo_main
from surrogait_train.ppo.config import from_train_config
from surrogait_train.ppo.train import PPOSession

DEVICE = os.environ.get("SURROGAIT_TEST_DEVICE", "cpu")
# 8 randomised robots: the device-resident environment's compiled step is the one tests/training/test_device_env.py
# compiles
SMALL = ["env.num_envs=8", "env.num_threads=1", "randomization.enabled=true", "learner.actor_hidden=[32,32]"]


def test_ppo_trains_on_the_device_resident_environment_with_its_learner_on_that_device():
    torch.set_num_threads(1)
    cfg = load_config(None, [*SMALL, "env.backend=mjx", f"env.device={DEVICE}"])
    session = PPOSession(cfg, from_train_config(cfg, num_steps_per_env=4, num_mini_batches=1, num_learning_epochs=1))
    try:
        assert isinstance(session.env, DeviceLocomotionEnv)
        assert session.device == session.env.device and session.vec_env.device == session.env.device
        assert next(session.actor.parameters()).device == session.env.device
        assert session.vec_env.get_observations()["policy"].device == session.env.device
        session.learn(2)
        assert session.env_samples == 2 * 4 * 8
    finally:
        session.close()


def test_the_learner_may_sit_on_another_device_than_the_host_environment(tmp_path):
    """`--device` moves PPO's networks; the host environment's tensors are copied to them every step."""
    assert ppo_main(["train", "--run-dir", str(tmp_path), "--iterations", "1", "--device", DEVICE,
                     "--ppo", "num_steps_per_env=4", "num_mini_batches=1", "num_learning_epochs=1", "--",
                     *SMALL]) == 0
    assert (tmp_path / "policy.onnx").is_file()
    assert f"device: {DEVICE}" in (tmp_path / "train_config.yaml").read_text()


def test_cuda_asked_for_where_there_is_none_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert ppo_main(["train", "--run-dir", str(tmp_path), "--iterations", "1", "--device", "cuda", "--",
                     *SMALL]) == 2
    err = capsys.readouterr().err
    assert "learner.device='cuda'" in err and "no CUDA device" in err and "learner.device=cpu" in err
