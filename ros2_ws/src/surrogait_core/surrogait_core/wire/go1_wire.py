"""The Go1's low-level UDP wire (unitree_legged_sdk 3.8): LowCmd and LowState packets as bytes.

The SDK's `LowCmd` / `LowState` structs are not what travels: the SDK packs them into shorter
"compressed" packets (614 and 807 bytes, its LOW_CMD_LENGTH / LOW_STATE_LENGTH). Packed with
`#pragma pack(1)`, little-endian:

- LowCmd (614): head[2] levelFlag frameReserve SN[2]:u32 version[2]:u32 bandWidth:u16 (22 bytes), then
  20 motor slots of 27 bytes — mode:u8 q:f32 dq:f32 tau:i16 (N·m × 256) Kp:u16 (× 32) Kd:u16 (× 16)
  reserve[3]:u32 — then bms (4), wirelessRemote[40], reserve:u32, crc:u32.
- LowState (807): the same 22-byte header, IMU (quaternion wxyz, gyroscope, accelerometer, rpy as
  f32, temperature:i8), 20 motor slots of 32 bytes — mode:u8 q:f32 dq:f32 ddq:i16 tauEst:i16
  (N·m × 256) q_raw:f32 dq_raw:f32 ddq_raw:i16 temperature:i8 reserve[2]:u32 — bms (24),
  footForce[4]:i16, footForceEst[4]:i16, tick:u32 (ms), wirelessRemote[40], reserve:u32, crc:u32.

The gains and torque are fixed point: the SDK multiplies in float32, truncates toward zero and
keeps the low 16 bits, so Kp 2048 or a torque of 128 N·m wraps around (a NaN becomes 0). Anyone
writing a LowCmd must keep Kp < 2048, Kd < 4096 and |tau| < 128 N·m; `encode_lowcmd` refuses
values that would wrap rather than send a different command. The CRC is the Go2 SDK's CRC-32
(`go2_crc.crc32_words`) over the packet's whole 32-bit words before the crc field (152 words of a
LowCmd, 200 of a LowState). The layout was established against the SDK itself (its encoder for
LowCmd, its decoder for LowState); tests check both byte for byte.

Motor mode: 0x0A is the Go1's closed-loop servo mode (the SDK's `InitCmdData` sets it), 0x00
stop. Decoded commands carry the robot-independent meaning in `MotorCommands.mode`
(`go2_wire.MODE_SERVO` or `MODE_STOP`), so the torque law and the safety rules read one
convention. The gamepad bytes (`wirelessRemote`) have the Go2's layout (`go2_wire.decode_gamepad`).
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np

from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_crc import crc32_words
from surrogait_core.wire.go2_wire import LowStateView, MotorCommands

NUM_MOTORS = 12  # of the 20 slots
NUM_SLOTS = 20
HEAD = (0xFE, 0xEF)
LEVEL_LOW = 0xFF
GO1_MODE_SERVO = 0x0A
GO1_MODE_STOP = 0x00
POS_STOP_F = go2_wire.POS_STOP_F  # the same "no target" sentinels as the Go2
VEL_STOP_F = go2_wire.VEL_STOP_F

# The robot's end of the link, as the vendor's examples configure it (low level).
ROBOT_IP = "192.168.123.10"
ROBOT_PORT = 8007
LOCAL_PORT = 8080
# This stack's ports on the computer wired to the robot: the safety monitor is the only process
# with a socket to the robot; the policy node talks to it as to the robot, and it forwards every
# LowState to the estimator (docs/go1.md).
MONITOR_POLICY_PORT = 8017  # the monitor's "robot" for the policy node (127.0.0.1)
POLICY_LOCAL_PORT = 8081  # the policy node's SDK socket
ESTIMATOR_LOWSTATE_PORT = 8019  # where the monitor forwards LowState for the estimator (127.0.0.1)
RECORDER_PORT = 8021  # where the monitor copies every LowState it gets and LowCmd it sends, for the session recorder

LOWCMD_LENGTH = 614
LOWSTATE_LENGTH = 807
TAU_SCALE = 256.0  # N·m -> i16 counts (LowCmd tau and LowState tauEst)
KP_SCALE = 32.0  # N·m/rad -> u16 counts
KD_SCALE = 16.0  # N·m·s/rad -> u16 counts
# The largest values that survive the fixed point without wrapping around.
TAU_MAX_NM = 32767 / TAU_SCALE
KP_MAX = 65535 / KP_SCALE
KD_MAX = 65535 / KD_SCALE

_HEADER = struct.Struct("<4B2I2IH")  # head[2], levelFlag, frameReserve, SN[2], version[2], bandWidth
_CMD_MOTOR = struct.Struct("<BffhHH3I")
_CMD_TAIL = struct.Struct("<4B40BI")  # bms, wirelessRemote, reserve (crc follows)
_IMU = struct.Struct("<13fb")
_STATE_MOTOR = struct.Struct("<Bffhhffhb2I")
_STATE_TAIL = struct.Struct("<24B4h4hI40BI")  # bms, footForce, footForceEst, tick, wirelessRemote, reserve
_CMD_MOTORS_AT = _HEADER.size
_CMD_TAIL_AT = _CMD_MOTORS_AT + NUM_SLOTS * _CMD_MOTOR.size
_IMU_AT = _HEADER.size
_STATE_MOTORS_AT = _IMU_AT + _IMU.size
_STATE_TAIL_AT = _STATE_MOTORS_AT + NUM_SLOTS * _STATE_MOTOR.size
assert _CMD_TAIL_AT + _CMD_TAIL.size + 4 == LOWCMD_LENGTH
assert _STATE_TAIL_AT + _STATE_TAIL.size + 4 == LOWSTATE_LENGTH


class Go1WireError(ValueError):
    pass


def packet_crc(packet: bytes | bytearray) -> int:
    """The CRC the SDK puts in (and expects in) the packet's last 4 bytes."""
    words = len(packet) // 4 - 1
    return crc32_words(bytes(packet[: 4 * words]))


def _seal(packet: bytearray) -> bytes:
    struct.pack_into("<I", packet, len(packet) - 4, packet_crc(packet))
    return bytes(packet)


def fixed_point(value: float, scale: float) -> int:
    """The SDK's conversion of a gain or torque to its 16-bit field: float32 product, truncated
    toward zero, low 16 bits kept (returned as the unsigned 16-bit pattern)."""
    product = np.float32(value) * np.float32(scale)
    if not np.isfinite(product) or abs(product) >= 2.0**31:
        return 0  # x86's float -> int32 conversion gives INT_MIN for these: low 16 bits 0
    return int(np.trunc(product)) & 0xFFFF


def _i16(pattern: int) -> int:
    return pattern - 0x10000 if pattern >= 0x8000 else pattern


@dataclasses.dataclass(frozen=True)
class Go1LowCmd:
    """A decoded LowCmd: header fields, the first 12 motors as MotorCommands, the gamepad bytes."""

    head: tuple[int, int]
    level_flag: int
    crc_ok: bool
    motors: MotorCommands
    raw_mode: np.ndarray  # the Go1's mode bytes (0x0A servo)
    wireless_remote: bytes


def check_command_values(q, dq, kp, kd, tau) -> None:
    """Refuse gains and torques that the 16-bit fixed point would wrap into other values."""
    problems = []
    for name, values, low, high in (("kp", kp, 0.0, KP_MAX), ("kd", kd, 0.0, KD_MAX),
                                    ("tau", tau, -TAU_MAX_NM, TAU_MAX_NM)):
        values = np.asarray(values, dtype=np.float64)
        if np.any(~np.isfinite(values)) or np.any(values < low) or np.any(values > high):
            problems.append(f"{name} {np.round(values, 3).tolist()} outside [{low:g}, {high:g}]")
    for name, values in (("q", q), ("dq", dq)):
        if not np.all(np.isfinite(np.asarray(values, dtype=np.float64))):
            problems.append(f"{name} is not finite")
    if problems:
        raise Go1WireError("LowCmd values the Go1's packet cannot carry: " + "; ".join(problems))


def encode_lowcmd(q, dq, kp, kd, tau, *, mode: int = GO1_MODE_SERVO, wireless_remote: bytes = bytes(40),
                  check: bool = True) -> bytes:
    """A sealed 614-byte LowCmd for the 12 motors (SDK order); the other 8 slots as the SDK's
    `InitCmdData` leaves them (servo mode, no targets). `check`: refuse values that would wrap."""
    if check:
        check_command_values(q, dq, kp, kd, tau)
    packet = bytearray(LOWCMD_LENGTH)
    _HEADER.pack_into(packet, 0, *HEAD, LEVEL_LOW, 0, 0, 0, 0, 0, 0)
    for i in range(NUM_SLOTS):
        if i < NUM_MOTORS:
            fields = (mode, float(q[i]), float(dq[i]), _i16(fixed_point(tau[i], TAU_SCALE)),
                      fixed_point(kp[i], KP_SCALE), fixed_point(kd[i], KD_SCALE))
        else:
            fields = (GO1_MODE_SERVO, POS_STOP_F, VEL_STOP_F, 0, 0, 0)
        _CMD_MOTOR.pack_into(packet, _CMD_MOTORS_AT + i * _CMD_MOTOR.size, *fields, 0, 0, 0)
    _CMD_TAIL.pack_into(packet, _CMD_TAIL_AT, 0, 0, 0, 0, *bytes(wireless_remote).ljust(40, b"\0")[:40], 0)
    return _seal(packet)


def damping_lowcmd(kd: float) -> bytes:
    """Damping: no stiffness, velocity target 0, so the motors only resist motion."""
    zeros = np.zeros(NUM_MOTORS)
    return encode_lowcmd(zeros, zeros, zeros, np.full(NUM_MOTORS, kd), zeros)


def lowcmd_drop_reason(packet: bytes) -> str | None:
    """Why the robot would drop this packet (None: accept): length, crc, head, level_flag."""
    if len(packet) != LOWCMD_LENGTH:
        return "length"
    if struct.unpack_from("<I", packet, LOWCMD_LENGTH - 4)[0] != packet_crc(packet):
        return "crc"
    if tuple(packet[:2]) != HEAD:
        return "head"
    if packet[2] != LEVEL_LOW:
        return "level_flag"
    return None


def decode_lowcmd(packet: bytes) -> Go1LowCmd:
    """The 12 motors' commands of a LowCmd packet (any packet of the right length; see crc_ok)."""
    if len(packet) != LOWCMD_LENGTH:
        raise Go1WireError(f"a Go1 LowCmd is {LOWCMD_LENGTH} bytes, got {len(packet)}")
    rows = np.array([_CMD_MOTOR.unpack_from(packet, _CMD_MOTORS_AT + i * _CMD_MOTOR.size)[:6]
                     for i in range(NUM_MOTORS)], dtype=np.float64)
    raw_mode = rows[:, 0].astype(np.int64)
    motors = MotorCommands(
        mode=np.where(raw_mode == GO1_MODE_SERVO, go2_wire.MODE_SERVO, go2_wire.MODE_STOP),
        q=rows[:, 1].copy(), dq=rows[:, 2].copy(), tau=rows[:, 3] / TAU_SCALE,
        kp=rows[:, 4] / KP_SCALE, kd=rows[:, 5] / KD_SCALE)
    crc = struct.unpack_from("<I", packet, LOWCMD_LENGTH - 4)[0]
    wireless = bytes(packet[_CMD_TAIL_AT + 4: _CMD_TAIL_AT + 44])
    return Go1LowCmd((packet[0], packet[1]), packet[2], crc == packet_crc(packet), motors, raw_mode, wireless)


def encode_lowstate(state: LowStateView, rpy: np.ndarray | None = None, *, foot_force_est=None,
                    wireless_remote: bytes | None = None, motor_mode: int = GO1_MODE_SERVO) -> bytes:
    """A sealed 807-byte LowState, as the Go1 sends it. `state.gamepad` is ignored when
    `wireless_remote` (the raw 40 bytes) is given; `foot_force` is in sensor counts (int16)."""
    packet = bytearray(LOWSTATE_LENGTH)
    _HEADER.pack_into(packet, 0, *HEAD, LEVEL_LOW, 0, 0, 0, 0, 0, 0)
    rpy = np.zeros(3) if rpy is None else rpy
    _IMU.pack_into(packet, _IMU_AT, *(float(v) for v in (*state.quat_wxyz, *state.gyro_b, *state.accel_b, *rpy)), 0)
    for i in range(NUM_SLOTS):
        if i < NUM_MOTORS:
            q, dq = float(state.joint_pos[i]), float(state.joint_vel[i])
            tau = _i16(fixed_point(state.joint_tau_est[i], TAU_SCALE))
            fields = (motor_mode, q, dq, 0, tau, q, dq, 0, 0, 0, 0)
        else:
            fields = (0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0, 0, 0, 0)
        _STATE_MOTOR.pack_into(packet, _STATE_MOTORS_AT + i * _STATE_MOTOR.size, *fields)
    force = [int(v) for v in np.clip(np.rint(state.foot_force), -32768, 32767)]
    est = force if foot_force_est is None else [int(v) for v in foot_force_est]
    remote = wireless_remote if wireless_remote is not None else bytes(go2_wire.encode_gamepad(state.gamepad))
    _STATE_TAIL.pack_into(packet, _STATE_TAIL_AT, *([0] * 24), *force, *est, int(state.tick_ms) & 0xFFFFFFFF,
                          *bytes(remote).ljust(40, b"\0")[:40], 0)
    return _seal(packet)


def lowstate_drop_reason(packet: bytes) -> str | None:
    """Why the SDK would refuse this LowState packet (None: accept): length, crc or head."""
    if len(packet) != LOWSTATE_LENGTH:
        return "length"
    if struct.unpack_from("<I", packet, LOWSTATE_LENGTH - 4)[0] != packet_crc(packet):
        return "crc"
    if tuple(packet[:2]) != HEAD:  # the SDK ignores such a packet even with a valid CRC
        return "head"
    return None


def decode_lowstate(packet: bytes) -> LowStateView:
    """A LowState packet as the robot-independent LowStateView (motors in SDK order)."""
    if len(packet) != LOWSTATE_LENGTH:
        raise Go1WireError(f"a Go1 LowState is {LOWSTATE_LENGTH} bytes, got {len(packet)}")
    imu = _IMU.unpack_from(packet, _IMU_AT)
    rows = np.array([_STATE_MOTOR.unpack_from(packet, _STATE_MOTORS_AT + i * _STATE_MOTOR.size)[:5]
                     for i in range(NUM_MOTORS)], dtype=np.float64)
    tail = _STATE_TAIL.unpack_from(packet, _STATE_TAIL_AT)
    foot_force, tick, remote = tail[24:28], tail[32], bytes(tail[33:73])
    return LowStateView(
        tick_ms=int(tick),
        quat_wxyz=np.array(imu[0:4], dtype=np.float64),
        gyro_b=np.array(imu[4:7], dtype=np.float64),
        accel_b=np.array(imu[7:10], dtype=np.float64),
        joint_pos=rows[:, 1].copy(),
        joint_vel=rows[:, 2].copy(),
        joint_tau_est=rows[:, 4] / TAU_SCALE,
        foot_force=np.array(foot_force, dtype=np.float64),
        gamepad=go2_wire.decode_gamepad(remote),
    )
