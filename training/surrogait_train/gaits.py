"""Gait schedules as data: phase offsets (SDK leg order FR, FL, RR, RL, in cycles) and duty factor.

Switching gait is a config change (`env.gait=pace`); no code depends on which legs pair up. A
multi-gait policy (`env.gaits=[trot,pace,bound,gallop]`) trains on all of them at once: each robot
walks with its own gait, whose parameters it sees (`GaitBatch`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import torch

from surrogait_core.policy.contract import GaitSpec
from surrogait_train.config import ConfigError

GAITS: dict[str, GaitSpec] = {
    "trot": GaitSpec("trot", period_s=0.5, duty_factor=0.5, phase_offsets=(0.0, 0.5, 0.5, 0.0), swing_height_m=0.08),
    "pace": GaitSpec("pace", period_s=0.5, duty_factor=0.5, phase_offsets=(0.0, 0.5, 0.0, 0.5), swing_height_m=0.08),
    "bound": GaitSpec("bound", period_s=0.4, duty_factor=0.45, phase_offsets=(0.0, 0.0, 0.5, 0.5), swing_height_m=0.08),
    "gallop": GaitSpec(
        "gallop", period_s=0.4, duty_factor=0.4, phase_offsets=(0.0, 0.1, 0.5, 0.6), swing_height_m=0.08
    ),
}


def gait_by_name(name: str) -> GaitSpec:
    if name not in GAITS:
        raise ValueError(f"unknown gait {name!r}; known gaits: {', '.join(GAITS)}")
    return GAITS[name]


def named_gait_flags(key: str, names: Sequence[str], gaits: Sequence[GaitSpec]) -> np.ndarray:
    """(G,) bool: which of a multi-gait policy's `gaits` a config key's list `names` selects ([] = every gait).
    ConfigError, naming `key`, for a list on a one-gait policy or a name the policy does not have."""
    gaits = tuple(gaits or ())
    if not names:
        return np.ones(len(gaits), dtype=bool)
    if not gaits:
        raise ConfigError(f"{key} names gaits of a multi-gait policy (env.gaits); this policy has one gait: "
                          "leave it []")
    gait_names = [g.name for g in gaits]
    unknown = sorted(set(names) - set(gait_names))
    if unknown:
        raise ConfigError(f"{key}: {', '.join(unknown)} not among the policy's gaits ({', '.join(gait_names)})")
    return np.array([name in names for name in gait_names])


@dataclasses.dataclass(frozen=True)
class GaitBatch:
    """Each robot's gait as tensors that broadcast against (N, 4) leg phases: the batched GaitSpec."""

    period_s: torch.Tensor  # (N, 1)
    duty_factor: torch.Tensor  # (N, 1)
    phase_offsets: torch.Tensor  # (N, 4), cycles
    swing_height_m: torch.Tensor  # (N, 1)

    @classmethod
    def of(cls, gaits: Sequence[GaitSpec], index: np.ndarray) -> GaitBatch:
        """The batch for robots walking with gaits[index[i]]."""
        table = np.array([[g.period_s, g.duty_factor, g.swing_height_m, *g.phase_offsets] for g in gaits])[index]
        t = torch.as_tensor(table, dtype=torch.float32)
        return cls(t[:, 0:1], t[:, 1:2], t[:, 3:7], t[:, 2:3])

    def features(self) -> torch.Tensor:
        """The policy's gait input (N, 6): period, duty factor, phase offsets (surrogait_core.policy.gait)."""
        return torch.cat([self.period_s, self.duty_factor, self.phase_offsets], dim=-1)
