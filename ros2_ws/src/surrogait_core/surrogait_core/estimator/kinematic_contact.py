"""Contacts without foot sensors: from leg kinematics, and from the gait schedule while walking.

A source with no foot force (all zeros), raw counts not yet calibrated, or a stuck sensor leaves the
estimator without its contact signal. On flat ground the feet that carry the robot are the lowest
ones: a foot counts as on the ground when it is within `height_tol_m` of the lowest foot, in the
gravity-aligned frame of the base (IMU attitude and leg kinematics). While walking, the policy's gait
schedule says which feet should be down; a foot counts only where both agree (a swing foot passing
low near touchdown or lift-off is not support), with a wider tolerance for the scheduled ones.

The result is handed to the usual `ContactDetector` as pseudo forces (clearly on, or zero), so the
same hysteresis, settling and trust ramp apply.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class KinematicContactConfig:
    height_tol_m: float = 0.02  # above the lowest foot: still on the ground (flat ground)
    scheduled_height_tol_m: float = 0.04  # the same for a foot the gait schedule puts in stance


def kinematic_stance(foot_rel_w: np.ndarray, scheduled: np.ndarray | None,
                     config: KinematicContactConfig = KinematicContactConfig()) -> np.ndarray:
    """Which feet are on the ground (4,) from their positions relative to the base in a gravity-aligned frame
    (4, 3) and, while walking, the gait schedule's stance mask."""
    z = np.asarray(foot_rel_w)[:, 2]
    above = z - z.min()
    if scheduled is None:
        return above <= config.height_tol_m
    return np.asarray(scheduled, dtype=bool) & (above <= config.scheduled_height_tol_m)


def pseudo_foot_force(stance: np.ndarray, force_on: float) -> np.ndarray:
    """Forces the ContactDetector reads as clear stance (twice its touchdown threshold) or swing (0)."""
    return np.where(stance, 2.0 * force_on, 0.0)
