"""Actor, critic and the observation normaliser (variance floored: docs/architecture.md, "The paper")."""

from __future__ import annotations

import torch
from torch import nn


def mlp(sizes: list[int], out_scale: float = 1.0) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ELU())
    last = layers[-1]
    assert isinstance(last, nn.Linear)
    with torch.no_grad():
        last.weight.mul_(out_scale)
        last.bias.zero_()
    return nn.Sequential(*layers)


class ObsNormalizer(nn.Module):
    """Running mean/variance; std floored at `min_std` so early tiny variances cannot blow gradients up."""

    def __init__(self, size: int, min_std: float = 0.1):
        super().__init__()
        self.register_buffer("mean", torch.zeros(size))
        self.register_buffer("var", torch.ones(size))
        self.register_buffer("count", torch.tensor(1e-4))
        self.min_std = min_std

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        batch_mean, batch_var, n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean += delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta**2 * self.count * n / total) / total
        self.count = total

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        std = self.var.sqrt().clamp_min(self.min_std)
        return ((x - self.mean) / std).clamp(-10.0, 10.0)


class Actor(nn.Module):
    """obs (contract units) -> action; the normaliser is part of the module so export carries it.

    With a `reference` (surrogait_train.reference.GaitReference) the network is a residual on it: the action is
    reference(obs) + net(obs), and export carries the reference too."""

    def __init__(self, obs_size: int, action_size: int, hidden: list[int], min_std: float = 0.1,
                 reference: nn.Module | None = None):
        super().__init__()
        self.normalizer = ObsNormalizer(obs_size, min_std)
        self.net = mlp([obs_size, *hidden, action_size], out_scale=0.1)
        self.reference = reference

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        action = self.net(self.normalizer(obs))
        return action if self.reference is None else action + self.reference(obs)


class Critic(nn.Module):
    def __init__(self, obs_size: int, hidden: list[int]):
        super().__init__()
        self.net = mlp([obs_size, *hidden, 1])

    def forward(self, obs_normalized: torch.Tensor) -> torch.Tensor:
        return self.net(obs_normalized).squeeze(-1)
