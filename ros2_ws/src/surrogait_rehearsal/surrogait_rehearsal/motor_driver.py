"""What a Go2 motor driver does with a LowCmd: validate it, then run a PD law at the physics rate.

ROS-free and DDS-free so it is unit-tested on plain arrays. All arrays are in SDK motor order.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from surrogait_core import go2_wire
from surrogait_core.go2_wire import MODE_SERVO, NUM_MOTORS, POS_STOP_F, VEL_STOP_F, MotorCommands

# DDS carries the sentinels as float32 (2.146e9 becomes 2145999872.0): compare with a margin.
_POS_SENTINEL_MIN = 0.99 * POS_STOP_F
_VEL_SENTINEL_MIN = 0.99 * VEL_STOP_F

DROP_REASONS = ("crc", "head", "level_flag", "nonfinite")


def pd_torques(cmd: MotorCommands | None, joint_pos: np.ndarray, joint_vel: np.ndarray,
               torque_limit: np.ndarray) -> np.ndarray:
    """Motor torques (N·m): tau = kp·(q* − q) + kd·(dq* − dq) + tau_ff, clipped to the torque limit.

    As on the robot's drivers: a motor in stop mode (mode != servo) gives no torque; a position
    target at the "no position" sentinel drops the kp term, a velocity target at the "no velocity"
    sentinel drops the kd term. No command yet (None) means the motors are passive.
    """
    if cmd is None:
        return np.zeros_like(joint_pos, dtype=np.float64)
    has_pos = np.abs(cmd.q) < _POS_SENTINEL_MIN
    has_vel = np.abs(cmd.dq) < _VEL_SENTINEL_MIN
    pos_term = np.where(has_pos, cmd.kp * (np.where(has_pos, cmd.q, 0.0) - joint_pos), 0.0)
    vel_term = np.where(has_vel, cmd.kd * (np.where(has_vel, cmd.dq, 0.0) - joint_vel), 0.0)
    tau = np.clip(pos_term + vel_term + cmd.tau, -torque_limit, torque_limit)
    return np.where(cmd.mode == MODE_SERVO, tau, 0.0)


def drop_reason(cmd) -> str | None:
    """Why the robot would drop this LowCmd (None: accept). Checked in the order the robot's firmware can."""
    if not go2_wire.crc_ok(cmd):
        return "crc"
    if tuple(cmd.head) != go2_wire.HEAD:
        return "head"
    if cmd.level_flag != go2_wire.LEVEL_LOW:
        return "level_flag"
    ms = cmd.motor_cmd[:NUM_MOTORS]
    values = np.array([(m.q, m.dq, m.kp, m.kd, m.tau) for m in ms], dtype=np.float64)
    if not np.all(np.isfinite(values)):
        # Not documented for the robot; a simulator must never integrate NaN torques, so refuse.
        return "nonfinite"
    return None


@dataclasses.dataclass
class CommandStats:
    accepted: int = 0
    dropped: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


class LowCmdGate:
    """Holds the last valid LowCmd's motor commands; bad messages are counted and never reach a motor.

    `receive` runs on the DDS listener thread, `latest` on the physics thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: MotorCommands | None = None
        self.stats = CommandStats()

    def receive(self, cmd) -> bool:
        reason = drop_reason(cmd)
        with self._lock:
            if reason is not None:
                self.stats.dropped[reason] += 1
                return False
            self._latest = go2_wire.motor_commands(cmd)
            self.stats.accepted += 1
            return True

    def latest(self) -> MotorCommands | None:
        with self._lock:
            return self._latest

    def counts(self) -> tuple[int, int]:
        """(accepted, dropped) so far."""
        with self._lock:
            return self.stats.accepted, self.stats.dropped_total

    def snapshot(self) -> CommandStats:
        with self._lock:
            return CommandStats(self.stats.accepted, dict(self.stats.dropped))
