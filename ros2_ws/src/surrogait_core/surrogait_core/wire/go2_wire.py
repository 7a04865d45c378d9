"""Encoding and decoding of the Go2's low-level DDS messages (unitree_sdk2py's LowCmd_/LowState_).

Shared by the policy node, the safety monitor, the estimator and the rehearsal simulator,
so every process agrees on motor order, sentinels, CRC and the gamepad layout.
Arrays are in the SDK motor order (the first 12 of the 20 motor slots).
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np

from surrogait_core.wire.go2_crc import lowcmd_crc

NUM_MOTORS = 12
LOWCMD_TOPIC = "rt/lowcmd"
LOWSTATE_TOPIC = "rt/lowstate"
HEAD = (0xFE, 0xEF)
LEVEL_LOW = 0xFF
MODE_SERVO = 0x01
MODE_STOP = 0x00
POS_STOP_F = 2.146e9  # "no position target" sentinel for q
VEL_STOP_F = 16000.0  # "no velocity target" sentinel for dq

# Gamepad key bits in wireless_remote bytes 2-3 (little-endian uint16).
KEY_BITS = {
    "R1": 0, "L1": 1, "start": 2, "select": 3, "R2": 4, "L2": 5, "F1": 6, "F2": 7,
    "A": 8, "B": 9, "X": 10, "Y": 11, "up": 12, "right": 13, "down": 14, "left": 15,
}


def new_lowcmd():
    from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowCmd_

    cmd = unitree_go_msg_dds__LowCmd_()
    cmd.head = list(HEAD)
    cmd.level_flag = LEVEL_LOW
    cmd.gpio = 0
    for m in cmd.motor_cmd:
        m.mode = MODE_STOP
        m.q, m.dq = POS_STOP_F, VEL_STOP_F
        m.kp = m.kd = m.tau = 0.0
    return cmd


def fill_motor_commands(cmd, q: np.ndarray, dq: np.ndarray, kp: np.ndarray, kd: np.ndarray, tau: np.ndarray):
    """Write per-motor servo commands (SDK order) and seal the message with its CRC."""
    for i in range(NUM_MOTORS):
        m = cmd.motor_cmd[i]
        m.mode = MODE_SERVO
        m.q, m.dq, m.kp, m.kd, m.tau = float(q[i]), float(dq[i]), float(kp[i]), float(kd[i]), float(tau[i])
    cmd.crc = lowcmd_crc(cmd)
    return cmd


def fill_damping(cmd, kd: float):
    """Damping: no stiffness, velocity target 0, so the motors only resist motion."""
    zeros = np.zeros(NUM_MOTORS)
    return fill_motor_commands(cmd, zeros, zeros, zeros, np.full(NUM_MOTORS, kd), zeros)


def crc_ok(cmd) -> bool:
    return cmd.crc == lowcmd_crc(cmd)


@dataclasses.dataclass
class MotorCommands:
    """The first 12 motor slots of a LowCmd as arrays (SDK order)."""

    mode: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray

    @property
    def is_damping(self) -> bool:
        return bool(np.all(self.kp == 0.0) and np.all(self.kd > 0.0))

    @property
    def is_stiff(self) -> bool:
        return bool(np.any((self.mode == MODE_SERVO) & (self.kp > 0.0)))


def motor_commands(cmd) -> MotorCommands:
    ms = cmd.motor_cmd[:NUM_MOTORS]
    return MotorCommands(
        mode=np.array([m.mode for m in ms]),
        q=np.array([m.q for m in ms], dtype=np.float64),
        dq=np.array([m.dq for m in ms], dtype=np.float64),
        kp=np.array([m.kp for m in ms], dtype=np.float64),
        kd=np.array([m.kd for m in ms], dtype=np.float64),
        tau=np.array([m.tau for m in ms], dtype=np.float64),
    )


@dataclasses.dataclass
class Gamepad:
    keys: frozenset[str]
    lx: float
    ly: float
    rx: float
    ry: float


def decode_gamepad(wireless_remote) -> Gamepad:
    raw = bytes(int(b) & 0xFF for b in wireless_remote)
    if len(raw) < 24:
        return Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0)
    bits = raw[2] | (raw[3] << 8)
    keys = frozenset(k for k, b in KEY_BITS.items() if bits >> b & 1)
    lx, rx, ry = struct.unpack_from("<3f", raw, 4)
    (ly,) = struct.unpack_from("<f", raw, 20)
    return Gamepad(keys, lx, ly, rx, ry)


def wireless_remote_from_joy(axes, buttons) -> list[int]:
    """The gamepad bytes for a sensor_msgs/Joy's axes [lx, ly, rx, ry] and buttons (indexed by KEY_BITS):
    how the rehearsal's simulators put an operator's gamepad into their LowState."""
    axes = list(axes) + [0.0] * (4 - len(axes))
    keys = frozenset(k for k, bit in KEY_BITS.items() if bit < len(buttons) and buttons[bit])
    return encode_gamepad(Gamepad(keys, *(float(a) for a in axes[:4])))


def encode_gamepad(pad: Gamepad) -> list[int]:
    raw = bytearray(40)
    bits = sum(1 << KEY_BITS[k] for k in pad.keys)
    raw[2], raw[3] = bits & 0xFF, bits >> 8
    struct.pack_into("<3f", raw, 4, pad.lx, pad.rx, pad.ry)
    struct.pack_into("<f", raw, 20, pad.ly)
    return list(raw)


@dataclasses.dataclass
class LowStateView:
    """A decoded LowState: IMU (body frame), motors (SDK order), feet, gamepad."""

    tick_ms: int
    quat_wxyz: np.ndarray
    gyro_b: np.ndarray  # rad/s
    accel_b: np.ndarray  # m/s², includes the gravity reaction
    joint_pos: np.ndarray
    joint_vel: np.ndarray
    joint_tau_est: np.ndarray
    foot_force: np.ndarray  # FR, FL, RR, RL
    gamepad: Gamepad


def decode_lowstate(msg) -> LowStateView:
    ms = msg.motor_state[:NUM_MOTORS]
    imu = msg.imu_state
    return LowStateView(
        tick_ms=int(msg.tick),
        quat_wxyz=np.array(imu.quaternion, dtype=np.float64),
        gyro_b=np.array(imu.gyroscope, dtype=np.float64),
        accel_b=np.array(imu.accelerometer, dtype=np.float64),
        joint_pos=np.array([m.q for m in ms], dtype=np.float64),
        joint_vel=np.array([m.dq for m in ms], dtype=np.float64),
        joint_tau_est=np.array([m.tau_est for m in ms], dtype=np.float64),
        foot_force=np.array(msg.foot_force, dtype=np.float64),
        gamepad=decode_gamepad(msg.wireless_remote),
    )


# The operator's gamepad chords, shared by the policy node and the safety monitor.
ESTOP_KEYS = frozenset({"L2", "B"})  # latch damping (safety monitor and policy node)
STAND_UP_KEYS = frozenset({"L2", "A"})  # PASSIVE -> STAND_UP -> READY
WALK_KEYS = frozenset({"start"})  # READY -> WALK
STOP_WALK_KEYS = frozenset({"select"})  # WALK -> READY
