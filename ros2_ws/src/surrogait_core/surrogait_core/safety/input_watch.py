"""The safety monitor's view of rt/lowstate as an input: can the state it judges be trusted?

The monitor judges the robot by what rt/lowstate says, so it checks the stream itself too
(`surrogait_core.inputs`): its CRC, its clock, its rate, the IMU and the foot sensors. Each issue is
named by cause in the fault log and in the monitor's diagnostics:

- faults (latch DAMP): the rate below what the contract needs while the motors are driven
  (`lowstate_rate_low`); an IMU check failing while the robot is meant to stand (`imu_quaternion_norm`,
  `imu_gravity_norm`, `imu_gravity_direction`): the policy would be walking on a wrong picture of its
  attitude, and the monitor's own tilt rule would be blind;
- input events (logged, not faults: the stack adapts, docs/robot.md): a frozen tick (the nodes run on
  the host clock), stuck foot sensors (contacts from leg kinematics and the gait schedule), samples
  failing their CRC (not used: a stream of only such samples goes stale, which is a fault when it matters).
"""

from __future__ import annotations

from typing import Any

from surrogait_core.inputs.sample_clock import CLOCK_FROZEN, SampleClock
from surrogait_core.inputs.sanity import IMU_CAUSES, RATE_LOW, InputIssue, InputSanity, SanityConfig
from surrogait_core.inputs.stream_stats import SampleRate
from surrogait_core.safety.rules import Violation
from surrogait_core.safety.thresholds import SafetyThresholds
from surrogait_core.wire.go2_wire import LowStateView

LOWSTATE_CRC = "lowstate_crc"


class InputWatch:
    def __init__(self, th: SafetyThresholds, allow_without_crc: bool = False):
        self.allow_without_crc = allow_without_crc
        self.clock = SampleClock(name="rt/lowstate")
        self.rate = SampleRate(window_s=1.0)
        self.sanity = InputSanity(SanityConfig(
            min_rate_hz=th.min_lowstate_rate_hz, gravity_norm_tolerance_mps2=th.imu_gravity_norm_tolerance_mps2,
            gravity_direction_tolerance_rad=th.imu_gravity_direction_tolerance_rad))
        self.crc_failures = 0
        self.crc_checked = 0
        self._reported: dict[str, InputIssue] = {}

    def on_sample(self, state: LowStateView, now: float, received: int | None = None,
                  crc_ok: bool | None = None) -> bool:
        """One sample taken at `now` (`received`: samples since the previous take, None if unknown); True if the
        monitor may judge the robot by it."""
        if received is not None:
            self.sanity.on_rate(self.rate.add(received, now))
        if crc_ok is not None:
            self.crc_checked += 1
            if not crc_ok:
                self.crc_failures += 1
                if not self.allow_without_crc:
                    return False
        self.clock.time_s(state.tick_ms, now)
        self.sanity.on_state(state, now)
        return True

    def on_own_stall(self, now: float) -> None:
        self.rate.restart(now)

    def issues(self) -> dict[str, InputIssue]:
        issues = self.sanity.issues()
        if self.clock.on_host:
            issues[CLOCK_FROZEN] = InputIssue(CLOCK_FROZEN, self.clock.cause, {"clock": "host"})
        if self.crc_failures:
            action = "used (allow_lowstate_without_crc: simulators only)" if self.allow_without_crc else "not used"
            issues[LOWSTATE_CRC] = InputIssue(
                LOWSTATE_CRC, f"{self.crc_failures} of {self.crc_checked} rt/lowstate samples failed their CRC: "
                f"{action}", {"failures": self.crc_failures, "checked": self.crc_checked})
        return issues

    def violations(self, driven: bool, standing: bool) -> list[Violation]:
        """Faults from the inputs: a slow stream while the motors are driven, a bad IMU while standing."""
        issues = self.sanity.issues()
        out = []
        if driven and RATE_LOW in issues:
            out.append(Violation(RATE_LOW, issues[RATE_LOW].detail, issues[RATE_LOW].values))
        if standing:
            out += [Violation(c, issues[c].detail, issues[c].values) for c in IMU_CAUSES if c in issues]
        return out

    def changes(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """(event, cause, detail, values) for every issue raised or cleared since the last call."""
        current = self.issues()
        out = [("input", cause, issue.detail, issue.values) for cause, issue in current.items()
               if cause not in self._reported]
        out += [("input_cleared", cause, f"{cause} no longer observed", {}) for cause in self._reported
                if cause not in current]
        self._reported = current
        return out
