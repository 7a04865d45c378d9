"""The Go2's LowCmd_ and LowState_ as byte images: encode and decode without the generic IDL machinery.

cyclonedds' Python serializer walks every field of a message in Python: ≈ 0.3 ms to serialize a
LowCmd_ and 0.3–0.5 ms to deserialize a LowState_ here, at 50 Hz a few percent of a core in
the policy node, while the node uses a few dozen numbers of each. So:

- `LowCmdImage` keeps one LowCmd_ as two byte images — the CDR sample DDS sends and the SDK's
  packed C layout its CRC runs over — and patches the 12 motors' mode, q, dq, kp, kd and tau
  in place each cycle, then the CRC (`go2_crc`, zlib).
- `LowStateDecoder` reads a LowState_ CDR sample straight into a `LowStateView` through numpy
  views at fixed offsets.

The offsets are not typed in: at start-up each field is changed alone through the SDK's own
serializer (and the CRC packer) and located by the bytes that changed, so the images follow the
installed unitree_sdk2py; tests check byte-for-byte equality with the generic path on random
messages.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from surrogait_core.wire import go2_crc
from surrogait_core.wire.go2_wire import (
    MODE_SERVO,
    NUM_MOTORS,
    LowStateView,
    decode_gamepad,
    decode_lowstate,
    new_lowcmd,
)

MOTOR_FIELDS = ("q", "dq", "kp", "kd", "tau")  # float fields of a MotorCmd_ the policy sets, in `encode`'s order
WIRELESS_REMOTE_BYTES = 40
_FLOAT_MARKER = 1.2345678  # float32 bytes 52 06 9e 3f: none is 0 or a byte of the stop sentinels
_BYTE_MARKER = 0xA5


class WireLayoutError(RuntimeError):
    """A field cannot be located in a message image (unitree_sdk2py's message layout changed)."""


def locate_field(
    image: Callable[[], bytes], assign: Callable[[object], None], fmt: str, base, marker, what: str
) -> int:
    """Byte offset of one field in a message image: write `marker`, then `base`, and see which bytes changed."""
    assign(marker)
    marked = image()
    assign(base)
    plain = image()
    size = struct.calcsize(fmt)
    changed = np.flatnonzero(np.frombuffer(marked, np.uint8) != np.frombuffer(plain, np.uint8))
    if len(marked) != len(plain) or changed.size == 0 or changed[-1] - changed[0] >= size:
        raise WireLayoutError(f"cannot locate {what} in the message image; has unitree_sdk2py's layout changed?")
    want_marked, want_plain = struct.pack(fmt, marker), struct.pack(fmt, base)
    hits = [
        at
        for at in range(max(0, changed[-1] - size + 1), changed[0] + 1)
        if marked[at : at + size] == want_marked and plain[at : at + size] == want_plain
    ]
    if len(hits) != 1:
        raise WireLayoutError(f"cannot locate {what} uniquely in the message image (candidates {hits})")
    return hits[0]


def _motor_offsets(image: Callable[[], bytes], msg, field: str, fmt: str, marker) -> list[int]:
    """Offsets of one MotorCmd_ field of the 12 motors in a LowCmd_ image."""
    return [
        locate_field(
            image, lambda v, m=m: setattr(m, field, v), fmt, getattr(m, field), marker, f"motor_cmd[{i}].{field}"
        )
        for i, m in enumerate(msg.motor_cmd[:NUM_MOTORS])
    ]


def _aligned_index(offsets: list[int], size: int, what: str) -> np.ndarray:
    offsets = np.asarray(offsets)
    if np.any(offsets % size):
        raise WireLayoutError(f"{what} is not {size}-byte aligned in the message image")
    return offsets // size


class LowCmdImage:
    """The policy's LowCmd_, kept as bytes; `encode(...)` returns the CDR sample to write, CRC sealed.

    `use_version_2` must match the DataWriter's data representation (XCDR1, False, for the SDK's
    default writer). The unused motor slots and every other field keep `new_lowcmd()`'s values.
    """

    def __init__(self, use_version_2: bool = False):
        msg = new_lowcmd()

        def cdr() -> bytes:
            return msg.serialize(use_version_2=use_version_2)

        def packed() -> bytes:
            return go2_crc.pack_lowcmd(msg)

        images = {"cdr": cdr, "packed": packed}
        float_at = {
            key: [_motor_offsets(image, msg, f, "<f", _FLOAT_MARKER) for f in MOTOR_FIELDS]
            for key, image in images.items()
        }
        mode_at = {key: _motor_offsets(image, msg, "mode", "<B", _BYTE_MARKER) for key, image in images.items()}
        crc_at = locate_field(cdr, lambda v: setattr(msg, "crc", v), "<I", msg.crc, 0x5EC0FFEE, "crc")
        if len(packed()) != go2_crc.LOWCMD_PACKED_SIZE:
            raise WireLayoutError("the packed LowCmd_ has an unexpected size")

        self._cdr = np.frombuffer(bytearray(cdr()), np.uint8)
        self._packed = np.frombuffer(bytearray(packed()), np.uint8)
        self._cdr_f32 = self._cdr[: self._cdr.size // 4 * 4].view("<f4")
        self._packed_f32 = self._packed.view("<f4")
        self._cdr_float_idx = _aligned_index(float_at["cdr"], 4, "a motor command")
        self._packed_float_idx = _aligned_index(float_at["packed"], 4, "a motor command")
        self._cdr_mode_at = np.asarray(mode_at["cdr"])
        self._packed_mode_at = np.asarray(mode_at["packed"])
        self._cdr_u32 = self._cdr_f32.view("<u4")
        self._crc_idx = int(_aligned_index([crc_at], 4, "crc")[0])
        self.crc = 0

    def encode(self, q: np.ndarray, dq: np.ndarray, kp: np.ndarray, kd: np.ndarray, tau: np.ndarray) -> bytes:
        """Servo commands for the 12 motors (SDK order) as a CDR sample with a valid CRC.

        Values are rounded to float32 as the SDK's serializer does (one beyond float32's range
        becomes ±inf here where the serializer would raise; the controller never sends one).
        """
        values = np.stack([q, dq, kp, kd, tau]).astype("<f4")
        self._cdr_f32[self._cdr_float_idx] = values
        self._packed_f32[self._packed_float_idx] = values
        self._cdr[self._cdr_mode_at] = MODE_SERVO
        self._packed[self._packed_mode_at] = MODE_SERVO
        self.crc = go2_crc.crc32_words(self._packed)
        self._cdr_u32[self._crc_idx] = self.crc
        return self._cdr.tobytes()


class LowStateDecoder:
    """rt/lowstate CDR samples → `LowStateView`, reading only the fields the nodes use.

    A sample in another encoding (CDR header or size not the SDK's) goes through the generic
    deserializer instead, so any valid LowState_ decodes.
    """

    def __init__(self):
        from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        self._msg_type = LowState_
        msg = unitree_go_msg_dds__LowState_()

        def image() -> bytes:
            return msg.serialize(use_version_2=False)

        def set_item(obj, field: str, index: int) -> Callable[[object], None]:
            def assign(value) -> None:
                values = list(getattr(obj, field))
                values[index] = value
                setattr(obj, field, values)

            return assign

        floats = []
        for field, n in (("quaternion", 4), ("gyroscope", 3), ("accelerometer", 3)):
            floats += [
                locate_field(
                    image, set_item(msg.imu_state, field, k), "<f", 0.0, _FLOAT_MARKER, f"imu_state.{field}[{k}]"
                )
                for k in range(n)
            ]
        for field in ("q", "dq", "tau_est"):
            for i in range(NUM_MOTORS):
                m = msg.motor_state[i]
                floats.append(
                    locate_field(
                        image,
                        lambda v, m=m, f=field: setattr(m, f, v),
                        "<f",
                        0.0,
                        _FLOAT_MARKER,
                        f"motor_state[{i}].{field}",
                    )
                )
        feet = [
            locate_field(image, set_item(msg, "foot_force", k), "<h", 0, 0x1A2B, f"foot_force[{k}]") for k in range(4)
        ]
        tick = locate_field(image, lambda v: setattr(msg, "tick", v), "<I", 0, 0x5EC0FFEE, "tick")
        remote = [
            locate_field(image, set_item(msg, "wireless_remote", k), "<B", 0, _BYTE_MARKER, f"wireless_remote[{k}]")
            for k in (0, WIRELESS_REMOTE_BYTES - 1)
        ]
        if feet != list(range(feet[0], feet[0] + 8, 2)) or remote[1] - remote[0] != WIRELESS_REMOTE_BYTES - 1:
            raise WireLayoutError("LowState_ arrays are not contiguous in the message image")

        plain = image()
        self.header, self.size = plain[:4], len(plain)
        self._float_idx = _aligned_index(floats, 4, "a LowState_ float")
        self._feet_at, self._tick_at, self._remote_at = feet[0], tick, remote[0]

    def decode(self, data: bytes) -> LowStateView:
        if len(data) != self.size or data[:4] != self.header:
            return decode_lowstate(self._msg_type.deserialize(data))
        f = np.frombuffer(data, "<f4", count=self.size // 4)[self._float_idx].astype(np.float64)
        n = NUM_MOTORS
        return LowStateView(
            tick_ms=int.from_bytes(data[self._tick_at : self._tick_at + 4], "little"),
            quat_wxyz=f[0:4],
            gyro_b=f[4:7],
            accel_b=f[7:10],
            joint_pos=f[10 : 10 + n],
            joint_vel=f[10 + n : 10 + 2 * n],
            joint_tau_est=f[10 + 2 * n : 10 + 3 * n],
            foot_force=np.frombuffer(data, "<i2", count=4, offset=self._feet_at).astype(np.float64),
            gamepad=decode_gamepad(data[self._remote_at : self._remote_at + WIRELESS_REMOTE_BYTES]),
        )
