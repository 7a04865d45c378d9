"""Start PPO from an exported policy file: rsl_rl's actor takes the file's normaliser and MLP.

With it the PPO baseline fine-tunes the same start as the differentiable trainer's `--init-from POLICY.onnx`
(the shipped trot on rough ground, say), so the two learners can be compared on one task from one policy.
The exploration noise is PPO's own (`PPOConfig.init_noise_std`): fine-tuning wants it small (0.1-0.3 in
action units), or the first samples walk nothing like the policy. The critic starts untrained; its
normaliser takes the file's statistics so its inputs arrive at the scale they will keep.
"""

from __future__ import annotations

from pathlib import Path

import torch

from surrogait_train.export import action_reference_of
from surrogait_train.onnx_init import SETTLED_COUNT, PolicyFileMismatch, load_policy_file
from surrogait_train.provenance import stages_of


def load_normalizer(normalizer: torch.nn.Module, mean: torch.Tensor, std: torch.Tensor) -> None:
    """rsl_rl's EmpiricalNormalization divides by std + eps: store std - eps so (x - mean) / std is unchanged."""
    stored = (std - normalizer.eps).view_as(normalizer._std)
    with torch.no_grad():
        normalizer._mean.copy_(mean.view_as(normalizer._mean))
        normalizer._std.copy_(stored)
        normalizer._var.copy_(stored.square())
        normalizer.count.fill_(SETTLED_COUNT)


def init_ppo_from_policy_file(session, path: Path | str) -> list[str]:
    """Load `path`'s actor into `session` (a PPOSession); returns the contract fields the run changes on purpose.

    This trainer's export floors its std (LearnerConfig.obs_norm_min_std); rsl_rl's normaliser has no floor, so
    the floored std is what is stored, and the first action for any observation is the file's (up to the
    trainer's +-10 input clip). A PPO export's std is taken as it is. A residual policy (its graph adds a gait
    reference to the MLP's output) is refused: rsl_rl's actor is the MLP alone and would drop the reference.
    """
    reference = action_reference_of(path)
    if reference is not None:
        raise PolicyFileMismatch(
            f"{path}: its actor is a residual on the gait reference {reference}, and PPO's actor (rsl_rl's MLP) "
            "cannot carry the reference; start PPO from a plain policy file (e.g. the shipped go2_trot_plain.onnx), "
            "or fine-tune this one with the differentiable trainer (surrogait-train train --init-from)")
    policy = load_policy_file(
        path, session.contract, list(session.ppo_cfg.actor_hidden), session.env.appended_obs_stats
    )
    actor_state = policy.actor_state
    mean = actor_state["normalizer.mean"]
    std = actor_state["normalizer.var"].sqrt()
    if policy.std_floor is not None:
        std = std.clamp_min(policy.std_floor)
    actor, critic = session.runner.alg.get_policy(), session.runner.alg.critic
    for model in (actor, critic):
        if getattr(model, "obs_normalizer", None) is not None and hasattr(model.obs_normalizer, "_std"):
            load_normalizer(model.obs_normalizer, mean, std)
    with torch.no_grad():
        for name, value in actor_state.items():
            if name.startswith("net."):
                actor.mlp.get_parameter(name.removeprefix("net.")).copy_(value)
    session.prior_stages = stages_of(path)
    session.init_from_name = Path(path).name
    return policy.changed_fields
