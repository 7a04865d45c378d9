"""Shared fixtures for the trainer tests: tiny configs so every test runs in seconds."""

from __future__ import annotations

import pytest
import torch

from surrogait_train.config import TrainConfig, load_config

TINY = [
    "env.num_envs=8",
    "env.num_threads=1",
    "learner.horizon=6",
    "learner.actor_hidden=[32,32]",
    "learner.critic_hidden=[32,32]",
    "learner.critic_iterations=2",
    "learner.critic_minibatches=2",
    "checkpoint_every=2",
]


@pytest.fixture(autouse=True)
def _one_torch_thread():
    torch.set_num_threads(1)


@pytest.fixture
def tiny_overrides() -> list[str]:
    return list(TINY)


@pytest.fixture
def tiny_config() -> TrainConfig:
    return load_config(None, list(TINY))
