"""What the simulator's rt/lowstate looks like: the Go2's own wire, or what another simulator sends.

Users rehearse on whatever Unitree-protocol simulator they have, and a robot can send a stuck clock,
dead foot sensors or a slow stream after a fault. The rehearsal simulator plays each variant, so the
stack's answer to every one of them is tested here (docs/robot.md, "Inputs the stack checks"):

| profile | rt/lowstate |
|---|---|
| go2 | as the simulator always wrote it: tick in ms, foot force in newtons, `lowstate_rate_hz`, CRC sealed |
| tickless | `tick` stays 0 (unitree_mujoco's Python bridge never sets it) |
| no_foot_force | `foot_force` all 0 (a source without foot sensors; unitree_mujoco again) |
| raw_foot_force | `foot_force` as a real Go2's sensors report it: a per-foot offset plus gain × load, in counts |
| lowstate_200hz | 200 Hz instead of 500 (unitree_mujoco publishes once per 5 ms physics step) |
| no_crc | `crc` left 0 (unitree_mujoco's bridge does not seal LowState) |

`wire_profile` is a comma-separated list of them (`tickless,no_foot_force,lowstate_200hz,no_crc` is
unitree_mujoco's Python simulator); `go2` alone is the default. The raw profile's offsets and gains are
made up to resemble public reports of Go2 readings (tens of counts unloaded, contact thresholds of
40-60 counts in public Go2 estimators); no real robot was measured here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

GO2 = "go2"
PROFILES: dict[str, str] = {
    GO2: "the Go2's wire as this simulator writes it (tick, newtons, CRC)",
    "tickless": "tick stays 0",
    "no_foot_force": "foot_force all 0",
    "raw_foot_force": "foot_force in raw counts: per-foot offset + gain x newtons",
    "lowstate_200hz": "rt/lowstate at 200 Hz",
    "no_crc": "LowState crc left 0",
}
# The raw profile's sensors (FR, FL, RR, RL): what an unloaded foot reads, and counts per newton of load.
RAW_OFFSET_COUNTS = np.array([21.0, 17.0, 24.0, 19.0])
RAW_COUNTS_PER_N = np.array([1.35, 1.5, 1.25, 1.45])
INT16_MIN, INT16_MAX = -32768, 32767
# The robot's serial number in LowState `sn`, as a robot reports its own (the foot-force calibration is
# stored per robot); the same two words in every profile.
SERIAL_WORDS = (0x32474F53, 0x00000001)


class WireProfileError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class WireProfile:
    names: tuple[str, ...] = (GO2,)

    @classmethod
    def parse(cls, text: str) -> WireProfile:
        """A comma-separated list of PROFILES; `go2` stands alone."""
        names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
        unknown = [n for n in names if n not in PROFILES]
        if not names or unknown:
            raise WireProfileError(f"wire_profile {text!r}: {'unknown ' + ', '.join(unknown) if unknown else 'empty'}; "
                                   f"expected go2, or a comma-separated list of {', '.join(list(PROFILES)[1:])}")
        if GO2 in names and len(names) > 1:
            raise WireProfileError(f"wire_profile {text!r}: go2 is the unmodified wire; list only the variants")
        if "no_foot_force" in names and "raw_foot_force" in names:
            raise WireProfileError(f"wire_profile {text!r}: no_foot_force and raw_foot_force exclude each other")
        return cls(names)

    @property
    def tick(self) -> bool:
        return "tickless" not in self.names

    @property
    def crc(self) -> bool:
        return "no_crc" not in self.names

    @property
    def lowstate_rate_hz(self) -> float | None:
        """The rate the profile imposes (None: the simulator's `lowstate_rate_hz`)."""
        return 200.0 if "lowstate_200hz" in self.names else None

    @property
    def foot_force(self) -> str:
        if "no_foot_force" in self.names:
            return "none"
        return "raw" if "raw_foot_force" in self.names else "newtons"

    def tick_ms(self, tick_ms: int) -> int:
        return tick_ms if self.tick else 0

    def foot_force_counts(self, foot_force_n: np.ndarray) -> list[int]:
        """The int16 foot_force values for these normal forces (N, FR, FL, RR, RL)."""
        force = np.asarray(foot_force_n, dtype=np.float64)
        if self.foot_force == "none":
            return [0, 0, 0, 0]
        if self.foot_force == "raw":
            counts = RAW_OFFSET_COUNTS + RAW_COUNTS_PER_N * force
            return [int(v) for v in np.clip(np.rint(counts), INT16_MIN, INT16_MAX)]
        return [int(v) for v in np.clip(np.rint(force), 0, INT16_MAX)]

    def __str__(self) -> str:
        return ",".join(self.names)
