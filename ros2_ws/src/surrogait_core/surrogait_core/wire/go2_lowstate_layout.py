"""rt/lowstate's CRC and its health fields (battery, motor temperatures), read straight from the CDR sample.

The Go2 seals LowState_ with the same CRC-32 as LowCmd_ (`go2_crc`), over the message packed as its C
struct. A simulator may leave the field at 0 (unitree_mujoco's bridge does); a corrupted or truncated
sample fails it too. Checking it through the generic path (deserialize, the SDK's packer, its CRC) costs
≈ 0.5 ms a sample; here the CDR bytes are gathered into the packed C layout with one numpy index and
the CRC is zlib's (`go2_crc.crc32_words`): ≈ 15 µs.

Nothing is typed in: the packed layout is the SDK's own format string (`unitree_sdk2py.utils.crc.CRC`),
the CDR layout follows from it by XCDR1's rule (each primitive aligned to its size, counted from the
end of the 4-byte encapsulation header), and at start-up the gathered image of a marked message must
equal the SDK's packing of it, else `WireLayoutError`.
"""

from __future__ import annotations

import dataclasses
import re
import struct

import numpy as np

from surrogait_core.wire import go2_crc
from surrogait_core.wire.go2_wire import NUM_MOTORS
from surrogait_core.wire.go2_wire_image import WireLayoutError

CDR_HEADER_BYTES = 4

# The scalars of LowState_ in IDL order, as (name, count): the SDK's pack format lists exactly these.
_FIELDS = (
    ("head", 2), ("level_flag", 1), ("frame_reserve", 1), ("sn", 2), ("version", 2), ("bandwidth", 1),
    ("imu", 13), ("imu_temperature", 1),
    *[item for i in range(20) for item in ((f"motor{i}_mode", 1), (f"motor{i}_floats", 7),
                                            (f"motor{i}_temperature", 1), (f"motor{i}_lost", 1),
                                            (f"motor{i}_reserve", 2))],
    ("bms_version", 2), ("bms_status", 1), ("bms_soc", 1), ("bms_current", 1), ("bms_cycle", 1),
    ("bms_bq_ntc", 2), ("bms_mcu_ntc", 2), ("bms_cell_vol", 15),
    ("foot_force", 4), ("foot_force_est", 4), ("tick", 1), ("wireless_remote", 40), ("bit_flag", 1),
    ("adc_reel", 1), ("temperature_ntc", 2), ("power_v", 1), ("power_a", 1), ("fan_frequency", 4),
    ("reserve", 1), ("crc", 1),
)


@dataclasses.dataclass(frozen=True)
class LowStateHealth:
    """What a LowState says about the robot's health (the pre-flight's battery and temperature rows)."""

    battery_soc_pct: float  # bms_state.soc
    battery_current_a: float  # bms_state.current (the BMS's units; reported, not judged)
    power_v: float  # the battery voltage the main board measures
    motor_temperature_c: np.ndarray  # (12,), SDK order
    motor_lost: np.ndarray  # (12,), the drivers' count of lost frames
    serial: tuple[int, int]  # the `sn` words: which robot this is (0, 0 when the firmware leaves it unset)


def _scalars(pack_format: str) -> list[tuple[str, int, bool]]:
    """(struct code, size, is padding) for every item of a '<'-prefixed struct format, counts expanded."""
    if not pack_format.startswith("<"):
        raise WireLayoutError(f"unexpected LowState_ pack format {pack_format[:12]!r}...")
    out = []
    for count, code in re.findall(r"(\d*)([a-zA-Z?])", pack_format[1:]):
        n = int(count) if count else 1
        size = struct.calcsize("<" + code)
        out += [(code, size, code == "x")] * n
    return out


class LowStateLayout:
    """Where each scalar of a LowState_ sits in its CDR sample (XCDR1) and in the SDK's packed C image."""

    def __init__(self, pack_format: str | None = None):
        if pack_format is None:
            from unitree_sdk2py.utils.crc import CRC

            pack_format = getattr(CRC(), "_CRC__packFmtLowState", None)
            if pack_format is None:
                raise WireLayoutError("unitree_sdk2py's CRC has no LowState_ pack format; has the SDK changed?")
        items = _scalars(pack_format)
        values = [(code, size) for code, size, pad in items if not pad]
        if len(values) != sum(n for _, n in _FIELDS):
            raise WireLayoutError(f"the SDK packs {len(values)} LowState_ scalars, expected "
                                  f"{sum(n for _, n in _FIELDS)}; has unitree_sdk2py's LowState_ changed?")
        self.packed_size = struct.calcsize(pack_format)
        cdr_at, packed_at = [], []
        cdr, packed = 0, 0
        for _code, size, pad in items:
            if pad:
                packed += size
                continue
            cdr = -(-cdr // size) * size  # XCDR1: aligned to the primitive's size
            cdr_at.append(CDR_HEADER_BYTES + cdr)
            packed_at.append(packed)
            cdr += size
            packed += size
        self.cdr_size = CDR_HEADER_BYTES + cdr
        self.codes = [code for code, _ in values]
        self.cdr_at = np.array(cdr_at)
        sizes = np.array([size for _, size in values])
        self._src = np.concatenate([np.arange(a, a + s) for a, s in zip(cdr_at, sizes, strict=True)])
        self._dst = np.concatenate([np.arange(a, a + s) for a, s in zip(packed_at, sizes, strict=True)])
        self._first: dict[str, int] = {}
        k = 0
        for name, n in _FIELDS:
            self._first[name] = k
            k += n

    def field(self, data: bytes, name: str, count: int = 1) -> list:
        """The values of field `name` (`count` of them) in a CDR sample."""
        k = self._first[name]
        return [struct.unpack_from("<" + self.codes[k + i], data, int(self.cdr_at[k + i]))[0] for i in range(count)]

    def packed(self, data: bytes) -> np.ndarray:
        """The SDK's packed C image of a CDR sample (bytes, the crc word last)."""
        image = np.zeros(self.packed_size, dtype=np.uint8)
        image[self._dst] = np.frombuffer(data, np.uint8, count=self.cdr_size)[self._src]
        return image


class LowStateCrc:
    """The CRC check of rt/lowstate samples (CDR bytes). Samples in another encoding go the generic way."""

    def __init__(self) -> None:
        from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_
        from unitree_sdk2py.utils.crc import CRC

        self._sdk_crc = CRC()
        self._msg_type = LowState_
        self.layout = LowStateLayout()
        msg = unitree_go_msg_dds__LowState_()
        # A message whose every byte differs from zero where it can: the gathered image must be the SDK's.
        msg.head, msg.level_flag, msg.sn, msg.tick, msg.power_v = [0xFE, 0xEF], 0xFF, [0x01020304, 0x0A0B0C0D], \
            0x5EC0FFEE, 28.5
        msg.foot_force = [0x1A2B, -3, 7, 0x0102]
        msg.motor_state[3].temperature, msg.motor_state[11].q = 41, 1.25
        msg.bms_state.soc, msg.bms_state.cell_vol = 87, list(range(3000, 3015))
        msg.wireless_remote = list(range(1, 41))
        msg.crc = self._sdk_crc.Crc(msg)
        data = msg.serialize(use_version_2=False)
        self.header = data[:CDR_HEADER_BYTES]
        words = np.array(self._sdk_crc._CRC__PackLowState(msg), dtype="<u4").tobytes()
        if len(data) != self.layout.cdr_size or self.layout.packed(data)[: len(words)].tobytes() != words:
            raise WireLayoutError("the LowState_ CDR sample does not gather into the SDK's packed layout; has "
                                  "unitree_sdk2py's LowState_ changed?")
        if not self.check(data):
            raise WireLayoutError("the LowState_ CRC computed from the CDR sample differs from the SDK's")

    def _own_layout(self, data: bytes) -> bool:
        return len(data) == self.layout.cdr_size and data[:CDR_HEADER_BYTES] == self.header

    def check(self, data: bytes) -> bool:
        """Does the sample's crc field hold the CRC of its content (as the Go2 writes it)?"""
        if not self._own_layout(data):
            msg = self._msg_type.deserialize(data)
            return int(msg.crc) == self._sdk_crc.Crc(msg)
        image = self.layout.packed(data)
        stored = int.from_bytes(image[-4:].tobytes(), "little")
        return stored == go2_crc.crc32_words(image[:-4])

    def health(self, data: bytes) -> LowStateHealth:
        """Battery, motor temperatures and the serial number of one sample (read at pre-flight, not per cycle)."""
        if not self._own_layout(data):
            msg = self._msg_type.deserialize(data)
            ms = msg.motor_state[:NUM_MOTORS]
            return LowStateHealth(float(msg.bms_state.soc), float(msg.bms_state.current), float(msg.power_v),
                                  np.array([m.temperature for m in ms], dtype=np.float64),
                                  np.array([m.lost for m in ms], dtype=np.float64), (int(msg.sn[0]), int(msg.sn[1])))
        f = self.layout.field
        return LowStateHealth(
            battery_soc_pct=float(f(data, "bms_soc")[0]),
            battery_current_a=float(f(data, "bms_current")[0]),
            power_v=float(f(data, "power_v")[0]),
            motor_temperature_c=np.array([f(data, f"motor{i}_temperature")[0] for i in range(NUM_MOTORS)],
                                         dtype=np.float64),
            motor_lost=np.array([f(data, f"motor{i}_lost")[0] for i in range(NUM_MOTORS)], dtype=np.float64),
            serial=tuple(int(v) for v in f(data, "sn", 2)),
        )
