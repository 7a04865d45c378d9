"""The left-right mirror loss for PPO: rsl_rl's Symmetry extension fed with this trainer's mirrors.

The differentiable trainer asks its actor for pi(mirror(o)) = mirror(pi(o)) (`LearnerConfig.symmetry`,
`surrogait_train.symmetry`). PPO fine-tunes had none, and came out lopsided (one hip swinging 1.5-1.9x its
twin's RMS speed, bench/results/preflight_*.md), which is how a policy trips the safety monitor's overspeed
rule on one leg. `PPOConfig.symmetry` > 0 adds the same loss through rsl_rl (`use_mirror_loss`): the actor's
mean action on the mirrored observations against its mirrored mean action, weighted by `symmetry`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from tensordict import TensorDict

from surrogait_core.policy.contract import PolicyContract
from surrogait_train.symmetry import action_mirror, observation_mirror


def mirror_augmentation(contract: PolicyContract) -> Callable[..., tuple[Any, Any]]:
    """rsl_rl's `data_augmentation_func(env, obs, actions)`: each given batch followed by its mirror image."""
    obs_mirror, act_mirror = observation_mirror(contract), action_mirror(contract)

    def augment(env: Any = None, obs: TensorDict | None = None, actions: torch.Tensor | None = None):
        mirrored_obs = None
        if obs is not None:
            mirrored = TensorDict({key: obs_mirror(value) for key, value in obs.items()}, batch_size=obs.batch_size)
            mirrored_obs = torch.cat([obs, mirrored], dim=0)
        mirrored_actions = None if actions is None else torch.cat([actions, act_mirror(actions)], dim=0)
        return mirrored_obs, mirrored_actions

    return augment


def symmetry_cfg(contract: PolicyContract, weight: float) -> dict[str, Any]:
    """The `algorithm.symmetry_cfg` rsl_rl's PPO takes: the mirror loss at `weight`, no data augmentation."""
    return {
        "use_data_augmentation": False,
        "use_mirror_loss": True,
        "mirror_loss_coeff": float(weight),
        "data_augmentation_func": mirror_augmentation(contract),
    }
