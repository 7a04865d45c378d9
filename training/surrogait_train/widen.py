"""Start a network with more observation inputs from one trained with fewer: a second stage that adds terms.

A trot policy becomes the start of a multi-gait one (issue 14): its observation gains `gait_params`
at the end. The new inputs' first-layer weights start at zero, so the widened actor acts exactly as
the trained one did (the gait clock already tells it which leg to lift), and training then learns
what the new inputs mean. The normaliser's statistics for the new inputs start at their values over
the new run's gaits, so they enter the network at the scale of the others.
"""

from __future__ import annotations

import torch

from surrogait_core.policy.contract import ObsTerm


class ObservationMismatch(ValueError):
    """The checkpoint's observation is not the start of this run's: the networks cannot be carried over."""


def appended_size(old_terms: tuple[ObsTerm, ...], new_terms: tuple[ObsTerm, ...]) -> int:
    """How many inputs `new_terms` adds after `old_terms`; raises ObservationMismatch unless old is a prefix of new."""
    old = [(t.name, t.size, t.scale, t.clip) for t in old_terms]
    new = [(t.name, t.size, t.scale, t.clip) for t in new_terms]
    if new[: len(old)] != old:
        raise ObservationMismatch(
            f"the checkpoint's observation ({', '.join(t.name for t in old_terms)}) is not the start of this run's "
            f"({', '.join(t.name for t in new_terms)}); only terms appended at the end can be added to trained networks"
        )
    return sum(t.size for t in new_terms[len(old_terms):])


def widen_learner_state(learner_state: dict, added: int, added_mean: torch.Tensor, added_var: torch.Tensor) -> dict:
    """A copy of a learner's actor/critic/target_critic state dicts with `added` more observation inputs."""
    return {
        name: widen_network_state(learner_state[name], added, added_mean, added_var)
        for name in ("actor", "critic", "target_critic")
    }


def widen_network_state(state: dict, added: int, added_mean: torch.Tensor, added_var: torch.Tensor) -> dict:
    """A copy of one network's state dict with `added` more observation inputs.

    Its first Linear layer gets zero columns for the new inputs; its normaliser, if it has one, gets
    `added_mean` / `added_var` for them (its sample count stays, so they adapt as slowly as the rest).
    """
    state = dict(state)
    weight = state["net.0.weight"]
    state["net.0.weight"] = torch.cat([weight, weight.new_zeros(weight.shape[0], added)], dim=1)
    if "normalizer.mean" in state:
        state["normalizer.mean"] = torch.cat([state["normalizer.mean"], added_mean.to(state["normalizer.mean"])])
        state["normalizer.var"] = torch.cat([state["normalizer.var"], added_var.to(state["normalizer.var"])])
    return state
