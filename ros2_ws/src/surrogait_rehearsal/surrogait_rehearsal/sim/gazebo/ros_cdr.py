"""The few ROS 2 messages of the Gazebo bridge in their CDR wire form, encoded and decoded directly.

At the bridge's rates rclpy's generic message conversion is most of the CPU: measured here, taking a
JointState, Imu or WrenchStamped as a Python message costs ~140 µs against ~55 µs as raw bytes, and
publishing a Float64 message ~34 µs against ~13 µs as bytes (rclpy publishes and takes serialized
messages natively: `publish(bytes)`, `create_subscription(..., raw=True)`). With 12 forces and 7
sensor messages per 2 ms cycle that difference decides whether the bridge and its stand-in fit
beside the deployment nodes on a 2-core machine. So this module reads and writes exactly the fields
the bridge uses, for plain little-endian CDR (encapsulation 0x0001, what ROS 2's DDS middlewares
send); anything else raises CdrError, and the caller hands it to rclpy's own deserializer.
tests/rehearsal_sim/test_gazebo_bridge_cdr.py checks every function both ways against `rclpy.serialization`.

CDR: after the 4-byte encapsulation header, each primitive is aligned to its size (doubles to 8)
relative to the start of the data; a string is a uint32 length (with its NUL) and the bytes; a
sequence a uint32 count and the elements.
"""

from __future__ import annotations

import struct

import numpy as np

CDR_LE = b"\x00\x01\x00\x00"  # encapsulation: plain CDR, little endian
_U32 = struct.Struct("<I")
_TIME = struct.Struct("<iI")
_F64 = struct.Struct("<d")


class CdrError(ValueError):
    """Bytes that are not the message expected, or not plain little-endian CDR."""


def is_plain_le(data: bytes) -> bool:
    return data[:2] == CDR_LE[:2]


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, data: bytes) -> None:
        if not is_plain_le(data):
            raise CdrError(f"encapsulation {data[:2].hex()} is not plain little-endian CDR")
        self.buf, self.pos = data, 4

    def align(self, n: int) -> None:
        self.pos += -(self.pos - 4) % n

    def u32(self) -> int:
        self.align(4)
        (v,) = _U32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return v

    def stamp_s(self) -> float:
        self.align(4)
        sec, nanosec = _TIME.unpack_from(self.buf, self.pos)
        self.pos += 8
        return sec + 1e-9 * nanosec

    def string(self) -> str:
        n = self.u32()
        s = self.buf[self.pos:self.pos + n - 1].decode()
        self.pos += n
        return s

    def doubles(self, n: int) -> np.ndarray:
        if n == 0:
            return np.zeros(0)
        self.align(8)
        out = np.frombuffer(self.buf, "<f8", n, self.pos)
        self.pos += 8 * n
        return out

    def double_seq(self) -> np.ndarray:
        return self.doubles(self.u32())

    def header(self) -> float:
        stamp = self.stamp_s()
        self.string()  # frame_id
        return stamp


class _Writer:
    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts, self.size = [CDR_LE], 0

    def _pad(self, n: int) -> None:
        pad = -self.size % n
        if pad:
            self.parts.append(b"\x00" * pad)
            self.size += pad

    def raw(self, b: bytes) -> None:
        self.parts.append(b)
        self.size += len(b)

    def u32(self, v: int) -> None:
        self._pad(4)
        self.raw(_U32.pack(v))

    def stamp(self, t: float) -> None:
        self._pad(4)
        sec = int(t // 1)
        self.raw(_TIME.pack(sec, min(int(round((t - sec) * 1e9)), 999_999_999)))

    def string(self, s: str) -> None:
        b = s.encode() + b"\x00"
        self.u32(len(b))
        self.raw(b)

    def doubles(self, values: np.ndarray) -> None:
        if len(values):
            self._pad(8)
            self.raw(np.asarray(values, dtype="<f8").tobytes())

    def double_seq(self, values: np.ndarray) -> None:
        self.u32(len(values))
        self.doubles(values)

    def header(self, stamp: float, frame_id: str) -> None:
        self.stamp(stamp)
        self.string(frame_id)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


# ---- std_msgs/Float64 ------------------------------------------------------------------------------
def encode_float64(value: float) -> bytes:
    return CDR_LE + _F64.pack(value)


def decode_float64(data: bytes) -> float:
    if not is_plain_le(data) or len(data) < 12:
        raise CdrError("not a little-endian CDR std_msgs/Float64")
    return _F64.unpack_from(data, 4)[0]


# ---- sensor_msgs/JointState ---------------------------------------------------------------------------
def encode_joint_state(stamp_s: float, frame_id: str, names: tuple[str, ...], position: np.ndarray,
                       velocity: np.ndarray, effort: np.ndarray) -> bytes:
    w = _Writer()
    w.header(stamp_s, frame_id)
    w.u32(len(names))
    for n in names:
        w.string(n)
    for values in (position, velocity, effort):
        w.double_seq(values)
    return w.bytes()


def decode_joint_state(data: bytes) -> tuple[float, list[str], np.ndarray, np.ndarray]:
    """(stamp s, names, position, velocity)."""
    r = _Reader(data)
    stamp = r.header()
    names = [r.string() for _ in range(r.u32())]
    position = r.double_seq()
    velocity = r.double_seq()
    return stamp, names, position, velocity


# ---- sensor_msgs/Imu --------------------------------------------------------------------------------
_NO_COVARIANCE = np.zeros(9)


def encode_imu(stamp_s: float, frame_id: str, quat_wxyz: np.ndarray, gyro: np.ndarray, accel: np.ndarray) -> bytes:
    w = _Writer()
    w.header(stamp_s, frame_id)
    w_, x, y, z = quat_wxyz
    w.doubles(np.array([x, y, z, w_]))  # geometry_msgs/Quaternion is x, y, z, w
    w.doubles(_NO_COVARIANCE)
    w.doubles(gyro)
    w.doubles(_NO_COVARIANCE)
    w.doubles(accel)
    w.doubles(_NO_COVARIANCE)
    return w.bytes()


def decode_imu(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(quaternion w, x, y, z; angular velocity; linear acceleration)."""
    r = _Reader(data)
    r.header()
    x, y, z, w = r.doubles(4)
    r.doubles(9)
    gyro = r.doubles(3)
    r.doubles(9)
    accel = r.doubles(3)
    return np.array([w, x, y, z]), gyro.copy(), accel.copy()


# ---- geometry_msgs/WrenchStamped ------------------------------------------------------------------------
def encode_wrench_stamped(stamp_s: float, frame_id: str, force: np.ndarray, torque: np.ndarray) -> bytes:
    w = _Writer()
    w.header(stamp_s, frame_id)
    w.doubles(np.concatenate([force, torque]))
    return w.bytes()


def decode_wrench_force(data: bytes) -> np.ndarray:
    """The force of a WrenchStamped."""
    r = _Reader(data)
    r.header()
    return r.doubles(3).copy()
