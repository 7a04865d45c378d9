"""Which legs move together: does a policy walk the gait it was asked for, or only track the command?

The eval's WALKS judges velocity tracking alone, and a policy asked to pace can track its command with a diagonal,
trot-like stepping (the shipped PPO multi-gait file did: docs/training-log.md, 2026-12-05 (8)). The pattern is read
from foot contacts, free of the gait clock's timing: for each pair of feet, the share of time both are in the same
state (both in stance or both in swing). The gait's schedule gives the same six shares: a trot's diagonal feet
agree all the time and its same-side feet never; a pace's the other way round. `gait_match` is one minus the mean
absolute difference between the two: 1 is the schedule's pattern, about 0.3 a trot judged as a pace.
"""

from __future__ import annotations

import itertools

import numpy as np

from surrogait_core.policy.contract import GaitSpec

LEG_PAIRS: tuple[tuple[int, int], ...] = tuple(itertools.combinations(range(4), 2))  # SDK order FR, FL, RR, RL
# A gait followed: trots and paces that step as scheduled score 0.82-0.94 (their stances overlap more than the
# schedule's), a trot judged as a pace 0.33-0.4, feet that step independently of each other 0.5 (trot, pace) to 0.7
# (gallop). Pairs alone tell a bound from a gallop by only 0.13 (the gallop's lead is a tenth of a cycle).
GAIT_MATCH_MIN = 0.75
_PHASE_SAMPLES = 1000


def scheduled_stance(spec: GaitSpec, phase: np.ndarray) -> np.ndarray:
    """(..., 4) stance mask of the schedule at gait-cycle phase(s) `phase` in [0, 1): stance is the first
    duty-factor share of each leg's cycle (as surrogait_train.rewards and the reference have it)."""
    leg_phase = (np.asarray(phase)[..., None] + np.asarray(spec.phase_offsets)) % 1.0
    return leg_phase < spec.duty_factor


def pair_agreement(stance: np.ndarray) -> np.ndarray:
    """(6,) share of samples in which each pair of feet (LEG_PAIRS) is in the same state; `stance` (..., 4) bool."""
    flat = np.asarray(stance, dtype=bool).reshape(-1, 4)
    return np.array([float((flat[:, i] == flat[:, j]).mean()) for i, j in LEG_PAIRS])


def scheduled_agreement(spec: GaitSpec) -> np.ndarray:
    """(6,) pair agreement of the gait's own schedule over one cycle."""
    return pair_agreement(scheduled_stance(spec, np.arange(_PHASE_SAMPLES) / _PHASE_SAMPLES))


def gait_match(measured_agreement: np.ndarray, spec: GaitSpec) -> float:
    """1 - mean |measured - scheduled| pair agreement: how closely the feet pair up as the gait says."""
    return float(1.0 - np.abs(np.asarray(measured_agreement) - scheduled_agreement(spec)).mean())
