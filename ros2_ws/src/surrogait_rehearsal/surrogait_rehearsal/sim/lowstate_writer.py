"""Fill a unitree_sdk2py LowState_ from the simulated robot's readout, as the Go2 publishes it.

At 500 Hz the generic Python paths cost most of the simulator's CPU: cyclonedds' IDL serializer
(≈ 270 µs a LowState_) and the SDK's CRC packing (≈ 110 µs). Only ~60 numbers change between
messages, so `LowStateWriter` keeps two byte images of the message — the CDR wire form and the
SDK's packed CRC layout — and patches those numbers in place. The field offsets are not typed in:
they are found at start-up by writing marker values through the SDK's own serializer and CRC
packer and locating them, and a test checks byte-for-byte equality with the generic path.
"""

from __future__ import annotations

import ctypes
import struct

import numpy as np

from surrogait_core.wire import go2_wire
from surrogait_rehearsal.sim.mujoco.core import RobotReadout

INT16_MAX = 32767
_N = go2_wire.NUM_MOTORS


def foot_force_counts(foot_force_n: np.ndarray) -> list[int]:
    """The Go2's foot_force is an int16 sensor value; the simulator reports the normal force in newtons."""
    return [int(v) for v in np.clip(np.rint(foot_force_n), 0, INT16_MAX)]


def rpy_from_quat(quat_wxyz: np.ndarray) -> list[float]:
    """Roll, pitch, yaw (rad, ZYX Euler angles) as the robot's IMU also reports them."""
    w, x, y, z = (float(v) for v in quat_wxyz)
    roll = np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return [float(roll), float(pitch), float(yaw)]


# The numbers that change per message, in the order `_values` lays them out (all float32 on the wire).
_FLOAT_FIELDS = (
    [("imu_state", "quaternion", i) for i in range(4)]
    + [("imu_state", "gyroscope", i) for i in range(3)]
    + [("imu_state", "accelerometer", i) for i in range(3)]
    + [("imu_state", "rpy", i) for i in range(3)]
    + [("motor_state", i, f) for f in ("q", "dq", "tau_est") for i in range(_N)]
)


def _set_float(msg, field, value: float) -> None:
    group, a, b = field
    if group == "imu_state":
        arr = list(getattr(msg.imu_state, a))
        arr[b] = value
        setattr(msg.imu_state, a, arr)
    else:
        setattr(msg.motor_state[a], b, value)


def _find_once(image: bytes, pattern: bytes, what: str) -> int:
    at = image.find(pattern)
    if at < 0 or image.find(pattern, at + 1) >= 0:
        raise RuntimeError(f"LowState_ layout: cannot locate {what} uniquely; has unitree_sdk2py changed?")
    return at


class _Image:
    """A byte image of the message with typed views at the offsets of the changing fields."""

    def __init__(self, marked: bytes, base: bytes, floats: list[float], tick: int, feet: list[int],
                 remote: bytes, crc: int | None) -> None:
        self.buf = np.frombuffer(bytearray(base), dtype=np.uint8)
        self.float_at = np.array([_find_once(marked, struct.pack("<f", v), "a float") for v in floats])
        self.tick_at = _find_once(marked, struct.pack("<I", tick), "tick")
        self.feet_at = _find_once(marked, struct.pack("<4h", *feet), "foot_force")
        self.remote_at = _find_once(marked, remote, "wireless_remote")
        self.crc_at = None if crc is None else _find_once(marked, struct.pack("<I", crc), "crc")
        if np.any(self.float_at % 4) or self.tick_at % 4 or self.feet_at % 2:
            raise RuntimeError("LowState_ layout: unaligned fields; has unitree_sdk2py changed?")
        self.f32 = self.buf[: len(self.buf) // 4 * 4].view(np.float32)
        self.u32 = self.buf[: len(self.buf) // 4 * 4].view(np.uint32)
        self.i16 = self.buf[: len(self.buf) // 2 * 2].view(np.int16)
        self.float_idx = self.float_at // 4

    def write(self, values: np.ndarray, tick: int, feet: list[int], remote: list[int]) -> None:
        self.f32[self.float_idx] = values
        self.u32[self.tick_at // 4] = tick
        self.i16[self.feet_at // 2: self.feet_at // 2 + 4] = feet
        self.buf[self.remote_at: self.remote_at + 40] = remote


class LowStateWriter:
    """Keeps one LowState_ message and refreshes it for every publication (the SDK copies on write)."""

    def __init__(self) -> None:
        from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
        from unitree_sdk2py.utils.crc import CRC

        self.msg = unitree_go_msg_dds__LowState_()
        self.msg.head = list(go2_wire.HEAD)
        self.msg.level_flag = go2_wire.LEVEL_LOW
        for m in self.msg.motor_state[:_N]:
            m.mode = go2_wire.MODE_SERVO
            m.temperature = 35  # °C; constant, like the battery below: plausible values, not a thermal model
        self.msg.imu_state.temperature = 40
        self.msg.power_v = 28.8  # V, the Go2 battery's nominal voltage
        self.msg.bms_state.soc = 100  # %
        self._crc = CRC()
        self._crc_core = getattr(self._crc, "crc_lib", None)
        self._layouts()
        # DataWriter.write() calls sample.serialize(); hand it the patched wire image instead.
        self._class_serialize = type(self.msg).serialize
        self.msg.serialize = self._serialize

    def _layouts(self) -> None:
        msg = self.msg
        base_cdr = msg.serialize(use_version_2=False)
        base_crc = self._crc_words(msg).tobytes()
        floats = [1000.0 + 1.0 * k for k in range(len(_FLOAT_FIELDS))]
        for field, v in zip(_FLOAT_FIELDS, floats, strict=True):
            _set_float(msg, field, v)
        tick, feet, remote, crc = 0x5EC0FFEE, [0x1A2B, 0x1A2C, 0x1A2D, 0x1A2E], bytes(range(101, 141)), 0xC0DEC0DE
        msg.tick, msg.foot_force, msg.wireless_remote, msg.crc = tick, feet, list(remote), crc
        self._cdr = _Image(msg.serialize(use_version_2=False), base_cdr, floats, tick, feet, remote, crc)
        self._crcimg = _Image(self._crc_words(msg).tobytes(), base_crc, floats, tick, feet, remote, None)
        # Back to the neutral message the images were taken from.
        for field in _FLOAT_FIELDS:
            _set_float(msg, field, 0.0)
        msg.tick, msg.foot_force, msg.wireless_remote, msg.crc = 0, [0] * 4, [0] * 40, 0

    def _crc_words(self, msg) -> np.ndarray:
        # The SDK's own packing of LowState_ into the 32-bit words its CRC runs over (crc field excluded).
        return np.array(self._crc._CRC__PackLowState(msg), dtype=np.uint32)

    def _crc32(self, words: np.ndarray) -> int:
        if self._crc_core is None:
            return self._crc._crc_py(words.tolist())
        ptr = words.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))
        return int(self._crc_core.crc32_core(ptr, len(words)))

    def _serialize(self, *args, use_version_2: bool | None = False, **kwargs) -> bytes:
        if args or kwargs or use_version_2:
            return self._class_serialize(self.msg, *args, use_version_2=use_version_2, **kwargs)
        return self._cdr.buf.tobytes()

    def fill(self, readout: RobotReadout, tick_ms: int, wireless_remote: list[int]):
        """Update the message (fields, wire image, CRC) and return it, ready for ChannelPublisher.Write."""
        msg = self.msg
        tick = tick_ms & 0xFFFFFFFF
        rpy = rpy_from_quat(readout.quat_wxyz)
        values = np.concatenate([readout.quat_wxyz, readout.gyro_b, readout.accel_b, rpy, readout.joint_pos,
                                 readout.joint_vel, readout.joint_tau_est]).astype(np.float32)
        feet = foot_force_counts(readout.foot_force_n)
        for img in (self._cdr, self._crcimg):
            img.write(values, tick, feet, wireless_remote)
        crc = self._crc32(self._crcimg.u32)
        self._cdr.u32[self._cdr.crc_at // 4] = crc

        # Keep the Python fields in step, so the message reads as what was sent.
        msg.tick, msg.crc, msg.foot_force, msg.wireless_remote = tick, crc, feet, list(wireless_remote)
        imu = msg.imu_state
        v = values.tolist()
        imu.quaternion, imu.gyroscope, imu.accelerometer, imu.rpy = v[0:4], v[4:7], v[7:10], v[10:13]
        q, dq, tau = v[13:13 + _N], v[13 + _N:13 + 2 * _N], v[13 + 2 * _N:13 + 3 * _N]
        for i, m in enumerate(msg.motor_state[:_N]):
            m.q, m.dq, m.tau_est = q[i], dq[i], tau[i]
        return msg
