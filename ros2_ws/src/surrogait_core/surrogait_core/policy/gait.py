"""The gait clock: per-leg phase of a periodic gait schedule, and the features a policy sees."""

from __future__ import annotations

import numpy as np

from surrogait_core.policy.contract import GaitSpec


def leg_phases(gait: GaitSpec, time_s: np.ndarray | float) -> np.ndarray:
    """Phase in [0, 1) of each leg (SDK leg order) at `time_s`; shape (..., 4)."""
    t = np.asarray(time_s, dtype=np.float64)[..., None]
    return np.mod(t / gait.period_s + np.asarray(gait.phase_offsets), 1.0)


def stance_mask(gait: GaitSpec, phases: np.ndarray) -> np.ndarray:
    """True where the schedule wants the leg on the ground."""
    return phases < gait.duty_factor


GAIT_FEATURES = 6  # period, duty factor, 4 phase offsets


def gait_features(gait: GaitSpec) -> np.ndarray:
    """A multi-gait policy's gait input: period (s), duty factor, the 4 phase offsets (cycles)."""
    return np.array([gait.period_s, gait.duty_factor, *gait.phase_offsets], dtype=np.float64)


def clock_features(phases: np.ndarray) -> np.ndarray:
    """sin and cos of each leg's phase: 8 smooth features, (..., 8)."""
    angle = 2.0 * np.pi * phases
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)
