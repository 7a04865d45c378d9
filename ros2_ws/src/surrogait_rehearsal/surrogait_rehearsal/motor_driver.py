"""What a Go2 motor driver does with a LowCmd: validate it, then run a PD law on it.

The motor model says when the PD law runs: at every physics step (`driver`, as the robot's motor
drivers) or once per arriving LowCmd, the torque then held (`on_command`, as some simulator
bridges). ROS-free and DDS-free so it is unit-tested on plain arrays. All arrays in SDK motor order.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire import NUM_MOTORS, MotorCommands
from surrogait_core.wire.lowcmd_stream import RepeatFilter
from surrogait_core.wire.motor_driver_law import pd_torques

__all__ = ["DROP_REASONS", "MOTOR_MODELS", "CommandStats", "LowCmdGate", "MotorTorques", "drop_reason", "pd_torques"]

DROP_REASONS = ("crc", "head", "level_flag", "nonfinite")

# name -> what it does (logged at start and in the parameter's description).
MOTOR_MODELS: dict[str, str] = {
    "driver": "PD at every physics step from the last valid LowCmd, as the robot's motor drivers",
    "on_command": "PD once when a valid LowCmd arrives, torque held until the next one, as some simulator bridges",
}


class MotorTorques:
    """The torque the motors apply during one physics step, under one of the MOTOR_MODELS.

    `cmd_seq` numbers the valid LowCmds (LowCmdGate.latest_numbered): a new number is a new
    command, even when its values repeat the previous one. Both models use `pd_torques`, so stop
    mode, sentinels and "no command yet" behave the same; they differ only in when it runs.
    """

    def __init__(self, model: str, torque_limit_nm: np.ndarray) -> None:
        if model not in MOTOR_MODELS:
            raise ValueError(f"motor_model {model!r}: expected one of {', '.join(MOTOR_MODELS)}")
        self.model = model
        self._torque_limit_nm = torque_limit_nm
        self._held_seq: int | None = None
        self._held_tau_nm = np.zeros(len(torque_limit_nm))

    def reset(self) -> None:
        """Forget the held torque: the next step computes afresh (as after power-on)."""
        self._held_seq = None
        self._held_tau_nm[:] = 0.0

    def torques(self, cmd: MotorCommands | None, cmd_seq: int | None, joint_pos: np.ndarray,
                joint_vel: np.ndarray) -> np.ndarray:
        """Torques (N·m) for this step, from the joint state measured at its start."""
        if self.model == "driver":
            return pd_torques(cmd, joint_pos, joint_vel, self._torque_limit_nm)
        if cmd_seq is None:
            # Without numbers a repeated command cannot be told from a new one.
            raise ValueError("the on_command motor model needs each LowCmd's sequence number (cmd_seq)")
        if cmd_seq != self._held_seq:
            self._held_tau_nm = pd_torques(cmd, joint_pos, joint_vel, self._torque_limit_nm)
            self._held_seq = cmd_seq
        return self._held_tau_nm.copy()


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

    `receive` takes a decoded message, `receive_sample` one off the wire (CDR bytes); `latest` is
    read by the physics thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: MotorCommands | None = None
        self.stats = CommandStats()
        self._repeats = RepeatFilter()  # verdict: the drop reason, or None for accepted
        self._decoder = None

    def receive(self, cmd) -> bool:
        reason = drop_reason(cmd)
        with self._lock:
            if reason is not None:
                self.stats.dropped[reason] += 1
                return False
            self._latest = go2_wire.motor_commands(cmd)
            self.stats.accepted += 1
            return True

    def receive_sample(self, data: bytes) -> bool:
        """A LowCmd as CDR bytes. A stream re-sends the same message between policy steps (nine in ten
        at 500 Hz): a repeat gets the verdict of its first copy without being decoded and CRC-checked
        again (≈ 0.5 ms of Python each), and still counts as an arriving command."""
        if self._repeats.repeated(data):
            reason = self._repeats.verdict
            with self._lock:
                if reason is not None:
                    self.stats.dropped[reason] += 1
                    return False
                self.stats.accepted += 1
                return True
        if self._decoder is None:
            from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

            self._decoder = LowCmd_.deserialize
        msg = self._decoder(data)
        accepted = self.receive(msg)
        self._repeats.remember(data, None if accepted else drop_reason(msg))
        return accepted

    def latest(self) -> MotorCommands | None:
        with self._lock:
            return self._latest

    def latest_numbered(self) -> tuple[int, MotorCommands | None]:
        """(sequence number, commands) of the last valid LowCmd; the number is 0 before the first."""
        with self._lock:
            return self.stats.accepted, self._latest

    def counts(self) -> tuple[int, int]:
        """(accepted, dropped) so far."""
        with self._lock:
            return self.stats.accepted, self.stats.dropped_total

    def snapshot(self) -> CommandStats:
        with self._lock:
            return CommandStats(self.stats.accepted, dict(self.stats.dropped))
