"""PPO's `--device` (learner.device): rsl_rl on the device it names; CUDA asked for where there is none is refused
with what to do. PPO on the device-resident environment: tests/training/test_device_env.py (it shares that file's
compiled physics).

`SURROGAIT_TEST_DEVICE=cuda` runs the first with the learner on the GPU."""

from __future__ import annotations

import os

import torch

from surrogait_train.ppo.cli import main as ppo_main

DEVICE = os.environ.get("SURROGAIT_TEST_DEVICE", "cpu")
SMALL = ["env.num_envs=8", "env.num_threads=1", "randomization.enabled=true", "learner.actor_hidden=[32,32]"]


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
