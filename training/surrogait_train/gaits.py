"""Gait schedules as data: phase offsets (SDK leg order FR, FL, RR, RL, in cycles) and duty factor.

Switching gait is a config change (`env.gait=pace`); no code depends on which legs pair up.
"""

from __future__ import annotations

from surrogait_core.policy.contract import GaitSpec

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
