"""What a Go2 or Go1 motor driver does with a LowCmd: validate it, then run a PD law on it.

The motor model says when the PD law runs: at every physics step (`driver`, as the robot's motor
drivers) or once per arriving LowCmd, the torque then held (`on_command`, as some simulator
bridges). ROS-free and DDS-free so it is unit-tested on plain arrays. All arrays in SDK motor order.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from surrogait_core.wire import go1_wire, go2_wire
from surrogait_core.wire.go2_wire import NUM_MOTORS, MotorCommands
from surrogait_core.wire.lowcmd_stream import RepeatFilter
from surrogait_core.wire.motor_driver_law import pd_torques

__all__ = ["DROP_REASONS", "MOTOR_MODELS", "CommandStats", "LowCmdGate", "MotorTorques", "drop_reason",
           "go1_verdict", "pd_torques"]

DROP_REASONS = ("length", "crc", "head", "level_flag", "nonfinite")  # "length": a Go1 UDP datagram only

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


def go1_verdict(packet: bytes) -> tuple[str | None, MotorCommands | None]:
    """(why the Go1 would drop this UDP datagram, None; or None, its motor commands), checked in the
    firmware's order (length, crc, head, level_flag), then non-finite targets as for the Go2."""
    reason = go1_wire.lowcmd_drop_reason(packet)
    if reason is not None:
        return reason, None
    motors = go1_wire.decode_lowcmd(packet).motors
    # Gains and torque are fixed point on this wire (always finite); q and dq are float32.
    if not (np.all(np.isfinite(motors.q)) and np.all(np.isfinite(motors.dq))):
        return "nonfinite", None
    return None, motors


@dataclasses.dataclass
class CommandStats:
    accepted: int = 0
    dropped: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


class LowCmdGate:
    """Holds the last valid LowCmd's motor commands; bad messages are counted and never reach a motor.

    `receive` takes a decoded message, `receive_sample` one off the Go2's wire (CDR bytes),
    `receive_go1_packet` one off the Go1's (a UDP datagram); `latest` is read by the physics thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: MotorCommands | None = None
        self.stats = CommandStats()
        self._repeats = RepeatFilter()  # verdict: the drop reason, or None for accepted
        self._decoder = None

    def receive(self, cmd) -> bool:
        reason = drop_reason(cmd)
        return self._count(reason, None if reason is not None else go2_wire.motor_commands(cmd))

    def _count(self, reason: str | None, motors: MotorCommands | None) -> bool:
        """Count one arriving command; `motors` (accepted only) replaces the latest unless None (a repeat)."""
        with self._lock:
            if reason is not None:
                self.stats.dropped[reason] += 1
                return False
            if motors is not None:
                self._latest = motors
            self.stats.accepted += 1
            return True

    def receive_sample(self, data: bytes) -> bool:
        """A LowCmd as CDR bytes. A stream re-sends the same message between policy steps (nine in ten
        at 500 Hz): a repeat gets the verdict of its first copy without being decoded and CRC-checked
        again (≈ 0.5 ms of Python each), and still counts as an arriving command."""
        if self._repeats.repeated(data):
            return self._count(self._repeats.verdict, None)
        if self._decoder is None:
            from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

            self._decoder = LowCmd_.deserialize
        msg = self._decoder(data)
        accepted = self.receive(msg)
        self._repeats.remember(data, None if accepted else drop_reason(msg))
        return accepted

    def receive_go1_packet(self, packet: bytes) -> bool:
        """A Go1 LowCmd datagram (614 bytes when well formed). As with `receive_sample`, a datagram that
        repeats the previous one byte for byte gets its verdict without being checked and decoded again."""
        if self._repeats.repeated(packet):
            return self._count(self._repeats.verdict, None)
        reason, motors = go1_verdict(packet)
        self._repeats.remember(packet, reason)
        return self._count(reason, motors)

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
