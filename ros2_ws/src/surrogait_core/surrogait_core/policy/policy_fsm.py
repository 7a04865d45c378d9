"""The policy node's state machine: PASSIVE → STAND_UP → READY ⇄ WALK, and DAMP from anywhere.

    PASSIVE ──stand_up──► STAND_UP ──(pose reached)──► READY ──walk──► WALK
       ▲                                                 ▲──stop_walk──┘
       └──reset (safety OK)── DAMP ◄──damp / fault── (any state)

PASSIVE and DAMP both command damping (kp = 0, kd > 0). DAMP is latched: only an operator's
reset brings the robot back to PASSIVE, and only while the safety monitor says OK, so a fault
can never be cleared by the policy node itself. Pure logic, no clock: callers pass `now_s`.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np


class PolicyState(enum.StrEnum):
    PASSIVE = "PASSIVE"
    STAND_UP = "STAND_UP"
    READY = "READY"
    WALK = "WALK"
    DAMP = "DAMP"


DAMPING_STATES = frozenset({PolicyState.PASSIVE, PolicyState.DAMP})


@dataclasses.dataclass(frozen=True)
class Transition:
    """The answer to an operator request: accepted or not, and why (for the Trigger response)."""

    accepted: bool
    message: str


class PolicyFsm:
    def __init__(self, stand_up_duration_s: float = 2.0):
        if stand_up_duration_s <= 0:
            raise ValueError(f"stand_up_duration_s must be positive, got {stand_up_duration_s}")
        self.stand_up_duration_s = stand_up_duration_s
        self.state = PolicyState.PASSIVE
        self.damp_cause: str | None = None
        self._stand_up_start_s = 0.0

    def stand_up(self, now_s: float) -> Transition:
        if self.state is not PolicyState.PASSIVE:
            return self._refuse("stand_up", "only from PASSIVE")
        self.state = PolicyState.STAND_UP
        self._stand_up_start_s = now_s
        return Transition(True, "standing up")

    def walk(self) -> Transition:
        if self.state is not PolicyState.READY:
            return self._refuse("walk", "only from READY (stand up first)")
        self.state = PolicyState.WALK
        return Transition(True, "walking")

    def stop_walk(self) -> Transition:
        if self.state is not PolicyState.WALK:
            return self._refuse("stop_walk", "only from WALK")
        self.state = PolicyState.READY
        return Transition(True, "holding the default pose")

    def damp(self, cause: str) -> Transition:
        """Latch damping. The first cause is kept: it is the one an operator needs to see."""
        if self.state is not PolicyState.DAMP:
            self.state = PolicyState.DAMP
            self.damp_cause = cause
        return Transition(True, f"damping ({self.damp_cause})")

    def reset(self, safety_ok: bool) -> Transition:
        if self.state is not PolicyState.DAMP:
            return self._refuse("reset", "only from DAMP")
        if not safety_ok:
            return Transition(False, "reset refused: the safety monitor does not report OK; clear its fault first")
        self.state = PolicyState.PASSIVE
        self.damp_cause = None
        return Transition(True, "passive (damping); stand up again when ready")

    def stand_up_fraction(self, now_s: float) -> float:
        """Progress of the stand-up in [0, 1]."""
        return float(np.clip((now_s - self._stand_up_start_s) / self.stand_up_duration_s, 0.0, 1.0))

    def update(self, now_s: float) -> PolicyState:
        """Advance time-driven transitions (STAND_UP → READY when the pose is reached)."""
        if self.state is PolicyState.STAND_UP and self.stand_up_fraction(now_s) >= 1.0:
            self.state = PolicyState.READY
        return self.state

    def _refuse(self, request: str, rule: str) -> Transition:
        return Transition(False, f"{request} refused in {self.state.value}: {rule}")


@dataclasses.dataclass(frozen=True)
class StandUpTrajectory:
    """A smooth joint-space move from the pose at stand-up time to the default pose.

    Quintic smoothstep: zero velocity and acceleration at both ends, so the PD targets never
    jump and the motors never see a torque step.
    """

    start_q: np.ndarray
    goal_q: np.ndarray

    def at(self, fraction: float) -> np.ndarray:
        s = float(np.clip(fraction, 0.0, 1.0))
        blend = s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)
        return self.start_q + blend * (self.goal_q - self.start_q)
