"""Which feet are on the ground: foot-force hysteresis, optionally fused with the gait clock.

A single threshold chatters when the force hovers around it at touchdown and lift-off; two
thresholds (on above `force_on`, off below `force_off`) give one clean transition each. The
filter also wants to know how *long* a foot has been down: right after touchdown a foot may
still skid, so its kinematic measurement is trusted gradually (`stance_trust`).

A foot below the stance thresholds may still be on the ground (`touching`, above `touch_force`):
too lightly loaded to be trusted not to slide, it still cannot be below or above the ground, so
the filter takes its height. Light touchdowns are common in a bouncy trot (measured in rehearsal
with the shipped policy at 0.5 m/s: a foot on the ground was no stance foot 15-30 % of the time,
and height errors reached 2 cm while one stance foot carried the estimate).
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class ContactConfig:
    # foot_force units (N in the rehearsal simulator; the Go2 weighs ~150 N: ~37 N a foot standing, ~75 N a
    # stance foot trotting). Touchdown needs a clear load: lightly loaded feet slide (measured in rehearsal:
    # 20/10 N left a -0.04 m/s bias in vx while trotting, 60/25 N none).
    force_on: float = 60.0  # swing -> stance above this (or above force_off for settle_s)
    force_off: float = 25.0  # stance -> swing below this
    # A foot that touches down lightly (force between force_off and force_on) still often slides; it counts
    # as stance once it has stayed above force_off this long (how a robot standing on four lightly loaded
    # feet, or standing up slowly, gets its stance feet).
    settle_s: float = 0.1
    trust_ramp_s: float = 0.02  # stance measurements reach full weight this long after touchdown
    # Gait-clock fusion: with a schedule, a foot the schedule puts in swing needs `force_on *
    # off_schedule_factor` to count as stance (a swing foot brushing the ground is not support).
    off_schedule_factor: float = 2.0
    touch_force: float = 10.0  # on the ground (height known) above this, even when not a stance foot (lying: ~5)

    def __post_init__(self) -> None:
        if not (0.0 <= self.force_off < self.force_on):
            raise ValueError(
                f"contact thresholds need 0 <= force_off < force_on, got force_off={self.force_off}, "
                f"force_on={self.force_on}"
            )
        if not self.touch_force > 0.0:
            raise ValueError(f"contact touch_force must be > 0, got {self.touch_force}")
        if self.trust_ramp_s < 0.0 or self.settle_s < 0.0 or self.off_schedule_factor < 1.0:
            raise ValueError("contact trust_ramp_s and settle_s must be >= 0, off_schedule_factor >= 1")


class ContactDetector:
    """Per-leg stance state (SDK leg order) from foot force with hysteresis."""

    def __init__(self, config: ContactConfig | None = None):
        self.config = config or ContactConfig()
        self.stance = np.zeros(4, dtype=bool)
        self.stance_time_s = np.zeros(4)  # time since touchdown, 0 in swing
        self.loaded_time_s = np.zeros(4)  # time the force has stayed >= force_off
        self.touching = np.zeros(4, dtype=bool)  # force >= touch_force (stance or not)

    def reset(self) -> None:
        self.stance[:] = False
        self.stance_time_s[:] = 0.0
        self.loaded_time_s[:] = 0.0
        self.touching[:] = False

    def update(self, foot_force: np.ndarray, dt_s: float, scheduled_stance: np.ndarray | None = None) -> np.ndarray:
        """Advance by `dt_s` with new forces; returns the stance mask (a copy)."""
        cfg = self.config
        force = np.asarray(foot_force, dtype=np.float64)
        on = np.full(4, cfg.force_on)
        if scheduled_stance is not None:
            on = np.where(np.asarray(scheduled_stance, dtype=bool), on, cfg.force_on * cfg.off_schedule_factor)
        loaded = force >= cfg.force_off
        self.touching = force >= cfg.touch_force
        self.loaded_time_s = np.where(loaded, self.loaded_time_s + dt_s, 0.0)
        touchdown = ~self.stance & ((force > on) | (self.loaded_time_s >= cfg.settle_s))
        liftoff = self.stance & ~loaded
        self.stance = (self.stance | touchdown) & ~liftoff
        self.stance_time_s = np.where(self.stance, self.stance_time_s + dt_s, 0.0)
        self.stance_time_s[touchdown] = 0.0
        return self.stance.copy()

    def stance_trust(self) -> np.ndarray:
        """Weight in [0, 1] of each foot's kinematic measurement: 0 in swing, ramping up after touchdown."""
        if self.config.trust_ramp_s == 0.0:
            return self.stance.astype(np.float64)
        ramp = np.clip(self.stance_time_s / self.config.trust_ramp_s, 0.0, 1.0)
        # A floor keeps a just-landed foot useful instead of ignored for a whole ramp.
        return np.where(self.stance, np.maximum(ramp, 0.1), 0.0)
