"""Operator input: velocity commands (cmd_vel or gamepad sticks) and gamepad chords.

The velocity command is clipped to the contract's command ranges (the policy was never trained
outside them) and falls back to zero when no fresh command arrived within `timeout_s`, so a
dead teleop link or a crashed planner stops the robot instead of letting it walk on.
A deflected gamepad stick wins over cmd_vel: the operator holding the pad is in charge.
The command the policy follows moves towards the operator's at a bounded rate (`CommandSlewLimiter`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from surrogait_core.policy.contract import CommandRanges
from surrogait_core.wire.go2_wire import ESTOP_KEYS, STAND_UP_KEYS, STOP_WALK_KEYS, WALK_KEYS, Gamepad

# Chord → operator request, checked in this order (e-stop first: it must win over anything).
CHORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("damp", ESTOP_KEYS),
    ("stand_up", STAND_UP_KEYS),
    ("walk", WALK_KEYS),
    ("stop_walk", STOP_WALK_KEYS),
)
# A multi-gait policy's gaits, in its contract's order: R1 held with a direction of the pad.
GAIT_CHORD_DIRECTIONS = ("up", "right", "down", "left")
GAIT_CHORD_MODIFIER = "R1"


def gait_chords(gait_names: tuple[str, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """`gait:<name>` requests for the first four gaits: R1+up, R1+right, R1+down, R1+left."""
    return tuple((f"gait:{name}", frozenset({GAIT_CHORD_MODIFIER, direction}))
                 for name, direction in zip(gait_names, GAIT_CHORD_DIRECTIONS, strict=False))


def clip_command(command: np.ndarray, ranges: CommandRanges) -> np.ndarray:
    """(vx, vy, yaw rate) clipped to the ranges; non-finite values become 0."""
    cmd = np.nan_to_num(np.asarray(command, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    lo = np.array([ranges.lin_vel_x[0], ranges.lin_vel_y[0], ranges.ang_vel_yaw[0]])
    hi = np.array([ranges.lin_vel_x[1], ranges.lin_vel_y[1], ranges.ang_vel_yaw[1]])
    return np.clip(cmd, lo, hi)


def _stick_to_velocity(stick: float, bounds: tuple[float, float]) -> float:
    # Full deflection reaches the range's end on that side (ranges need not be symmetric).
    return stick * bounds[1] if stick >= 0 else -stick * bounds[0]


def gamepad_command(pad: Gamepad, ranges: CommandRanges) -> np.ndarray:
    """Sticks → body-frame command: left stick up = forward, left stick right = −y, right stick right = −yaw."""
    return np.array([
        _stick_to_velocity(float(np.clip(pad.ly, -1, 1)), ranges.lin_vel_x),
        _stick_to_velocity(float(np.clip(-pad.lx, -1, 1)), ranges.lin_vel_y),
        _stick_to_velocity(float(np.clip(-pad.rx, -1, 1)), ranges.ang_vel_yaw),
    ])


@dataclasses.dataclass
class CommandInput:
    ranges: CommandRanges
    timeout_s: float = 0.5
    stick_deadband: float = 0.05
    _cmd_vel: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    _cmd_vel_time_s: float = -np.inf
    _pad: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    _pad_time_s: float = -np.inf

    def set_cmd_vel(self, vx: float, vy: float, yaw_rate: float, now_s: float) -> None:
        self._cmd_vel = clip_command(np.array([vx, vy, yaw_rate]), self.ranges)
        self._cmd_vel_time_s = now_s

    def set_gamepad(self, pad: Gamepad, now_s: float) -> None:
        """Sticks inside the dead band count as released (no command from the pad)."""
        if max(abs(pad.lx), abs(pad.ly), abs(pad.rx)) > self.stick_deadband:
            self._pad = clip_command(gamepad_command(pad, self.ranges), self.ranges)
            self._pad_time_s = now_s

    def command(self, now_s: float) -> np.ndarray:
        """The command to follow now: fresh gamepad, else fresh cmd_vel, else zero."""
        if now_s - self._pad_time_s <= self.timeout_s:
            return self._pad.copy()
        if now_s - self._cmd_vel_time_s <= self.timeout_s:
            return self._cmd_vel.copy()
        return np.zeros(3)


# m/s², m/s², rad/s²: how fast the followed (vx, vy, yaw rate) may change. A step from 1.0 m/s to a stop (a
# released key, a dead link's time-out) made the feet of a Go1 demo policy stand still under a body at full speed:
# 16 of 16 pre-flight robots fell; slewed at 2, 1 or 0.5 none did (docs/training-log.md, 2026-12-05 (7)).
COMMAND_SLEW_RATE = (1.0, 1.0, 1.0)


@dataclasses.dataclass
class CommandSlewLimiter:
    """The command a policy follows, moving towards the operator's by at most `rate` per second in each
    component (0 = that component follows at once). Starts, and `reset`s, at a standstill."""

    rate: tuple[float, float, float] = COMMAND_SLEW_RATE
    _command: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        if len(self.rate) != 3 or any(not np.isfinite(r) or r < 0 for r in self.rate):
            raise ValueError(f"command slew rate must be three finite values >= 0 (m/s², m/s², rad/s²), "
                             f"got {self.rate}")
        # per second; inf where a component follows at once (0): the control cycle only multiplies by dt
        self._per_s = np.where(np.asarray(self.rate, dtype=np.float64) > 0, np.asarray(self.rate, np.float64), np.inf)

    def reset(self) -> None:
        self._command = np.zeros(3)

    def step(self, target: np.ndarray, dt_s: float) -> np.ndarray:
        """Move `dt_s` seconds' worth towards `target`; returns the command to follow now."""
        step = self._per_s * max(dt_s, 0.0)
        self._command = self._command + np.clip(np.asarray(target, dtype=np.float64) - self._command, -step, step)
        return self._command.copy()


def slewed(commands: np.ndarray, dt_s: float, rate: tuple[float, float, float] = COMMAND_SLEW_RATE) -> np.ndarray:
    """A (T, 3) sequence of commands, one per control step of `dt_s`, as the policy node follows them."""
    limiter = CommandSlewLimiter(rate)
    return np.stack([limiter.step(c, dt_s) for c in np.asarray(commands, dtype=np.float64)])


@dataclasses.dataclass
class ChordDetector:
    """Turns held gamepad keys into one request per press (on the rising edge of a chord)."""

    extra: tuple[tuple[str, frozenset[str]], ...] = ()  # after the standard chords (e.g. `gait_chords`)
    _held: frozenset[str] = frozenset()

    def update(self, keys: frozenset[str]) -> list[str]:
        pressed = [name for name, chord in CHORDS + self.extra if chord <= keys and not chord <= self._held]
        self._held = frozenset(keys)
        return pressed
