"""The pre-flight: what `policy/stand_up` checks before the motors get stiff, and the table it prints.

A second of rt/lowstate is recorded (`PreflightRecorder`: every sample, when it arrived, its source stamp,
whether its CRC holds) and judged against `PreflightLimits`:

| check | passes when | fix |
|---|---|---|
| lowstate | samples arrive at all | robot on, interface, domain |
| encoders | every joint within the folded (lying) envelope | lay the robot down folded first |
| imu_quaternion | its norm is 1 | IMU fault: restart the robot |
| imu_gravity | the accelerometer's mean is gravity's size | IMU fault: restart the robot |
| imu_level | gravity points down the body and the robot lies flat | flat ground, right side up |
| foot_sensors | unloaded feet read what their calibration says (raw counts) or little (newtons) | calibrate |
| lowstate_rate | rate ≥ what the contract needs; interval std and largest gap small | link, robot load |
| lowstate_crc | every sample's CRC holds (unless allowed: simulators only) | link; simulator setting |
| lowstate_clock | reports whether `tick` advances (a frozen tick falls back to the host clock) | — |
| battery | state of charge and voltage above their minimum (Go2 BMS) | charge |
| motor_temperature | every motor below its limit | let the motors cool |
| link_latency | the samples' delay varies little (p99 above the fastest) | wired link, no Wi-Fi |

A check whose input the robot's link does not carry (the Go1's battery here) is reported "n/a", not failed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from surrogait_core.inputs.foot_force import NEWTONS, NONE, RAW, FootForceCalibration, unloaded_residual_n
from surrogait_core.inputs.sanity import projected_gravity_from_quat
from surrogait_core.inputs.stream_stats import IntervalStats, WindowSummary
from surrogait_core.wire.go2_lowstate_layout import LowStateHealth
from surrogait_core.wire.go2_wire import LowStateView

# The folded pose a Go2 (and a Go1) is put down in, and lies in after power-on (shared/robots/go2.md), SDK order.
FOLDED_JOINT_POS = np.tile([0.0, 1.36, -2.65], 4)
# How far each joint of a robot lying folded may be from it (hip, thigh, calf), rad: lying passive on the floor
# the legs splay and the knees rest on their stops (measured in rehearsal: hips ±0.45, thighs 1.10, calves -2.72).
# A standing robot (calves near -1.5) is far outside.
FOLDED_TOLERANCE_RAD = np.tile([0.6, 0.45, 0.3], 4)
PREFLIGHT_DURATION_S = 1.0
_JOINTS = [f"{leg}_{j}" for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh", "calf")]


@dataclasses.dataclass(frozen=True)
class PreflightLimits:
    min_rate_hz: float = 100.0  # stream_stats.required_lowstate_rate_hz(the contract's control period)
    max_interval_std_ms: float = 10.0  # half a 50 Hz control period
    max_gap_ms: float = 50.0  # the safety monitor's stale-state threshold (2.5 control periods)
    gravity_mps2: float = 9.81
    gravity_norm_tolerance_mps2: float = 1.0
    max_tilt_rad: float = 0.35  # lying on flat ground
    max_gravity_disagreement_rad: float = 0.2
    quat_norm_tolerance: float = 0.05
    max_unloaded_foot_n: float = 40.0  # a folded robot's feet carry little (≈ 5 N each in rehearsal)
    max_unloaded_foot_counts: float = 40.0  # raw counts from the offset, before the standing step gave gains
    min_battery_soc_pct: float = 20.0
    min_battery_v: float = 25.0  # the Go2's 8-cell pack: 28.8 V nominal, ≈ 25 V nearly empty
    max_motor_temperature_c: float = 60.0
    max_latency_spread_ms: float = 10.0  # p99 delay above the fastest sample's
    allow_without_crc: bool = False  # simulators only
    folded_envelope: bool = True  # False for the suspended dry run: legs hang, not folded


@dataclasses.dataclass(frozen=True)
class PreflightCapture:
    """What one second of rt/lowstate showed."""

    samples: int
    duration_s: float
    source: WindowSummary | None  # intervals between the samples' source stamps (the robot's publishing)
    arrival: WindowSummary | None  # intervals between their arrivals here (publishing + link)
    crc_failures: int
    crc_checked: int
    latency_spread_ms: float | None  # p99 − min of (arrival − source stamp)
    latency_median_ms: float | None  # meaningful only when both clocks agree (one host, or synced)
    tick_advancing: bool | None
    joint_pos: np.ndarray | None  # the mean over the capture, SDK order
    quat_wxyz: np.ndarray | None  # the latest
    accel_mean: np.ndarray | None
    foot_force_mean: np.ndarray | None
    foot_force_raw: np.ndarray | None  # (N, 4) every sample, for a calibration step
    health: LowStateHealth | None  # None: the link does not carry it


class PreflightRecorder:
    """Fed every rt/lowstate sample of the capture (not the control path: a pre-flight runs once)."""

    def __init__(self, duration_s: float = PREFLIGHT_DURATION_S):
        self.duration_s = duration_s
        self._source = IntervalStats(window_s=1e9)
        self._arrival = IntervalStats(window_s=1e9)
        self._delays: list[float] = []
        self._q: list[np.ndarray] = []
        self._accel: list[np.ndarray] = []
        self._feet: list[np.ndarray] = []
        self._ticks: list[int] = []
        self._quat: np.ndarray | None = None
        self.crc_failures = 0
        self.crc_checked = 0
        self.health: LowStateHealth | None = None
        self.first_arrival_s: float | None = None
        self.received = 0
        self.batched = False  # arrival times are the reader's takes, not the samples'

    def add(self, state: LowStateView | None, arrival_s: float, source_s: float | None = None,
            delay_s: float | None = None, crc_ok: bool | None = None, health: LowStateHealth | None = None,
            received: int = 1) -> None:
        """One sample: its decoded state (None if it could not be decoded), when it arrived (host monotonic),
        its source stamp (the writer's clock, None if unknown), its delay (arrival on this host's wall clock −
        source stamp), its CRC verdict (None: not checked). `received` > 1: a reader that takes the newest of
        several samples (the Go1's drained socket): counted, but their arrival times are unknown."""
        if self.first_arrival_s is None:
            self.first_arrival_s = arrival_s
        self.received += received
        if received > 1:
            self.batched = True
        self._arrival.add(arrival_s)
        if source_s is not None:
            self._source.add(source_s)
        if delay_s is not None:
            self._delays.append(delay_s)
        if crc_ok is not None:
            self.crc_checked += 1
            self.crc_failures += 0 if crc_ok else 1
        if health is not None:
            self.health = health
        if state is not None:
            self._q.append(state.joint_pos)
            self._accel.append(state.accel_b)
            self._feet.append(state.foot_force)
            self._ticks.append(state.tick_ms)
            self._quat = state.quat_wxyz

    def done(self, now_s: float) -> bool:
        return self.first_arrival_s is not None and now_s - self.first_arrival_s >= self.duration_s

    def capture(self, duration_s: float | None = None) -> PreflightCapture:
        delays = np.asarray(self._delays)
        spread = median = None
        if delays.size >= 2:
            spread = float((np.percentile(delays, 99) - delays.min()) * 1e3)
            median = float(np.median(delays) * 1e3)
        mean = (lambda xs: np.mean(xs, axis=0) if xs else None)  # noqa: E731
        ticks = self._ticks
        duration = self.duration_s if duration_s is None else duration_s
        arrival = self._arrival.current()
        if self.batched:  # only the count is known: a rate, no jitter
            arrival = None if duration <= 0 else WindowSummary(self.received, duration, self.received / duration,
                                                               math.nan, math.nan, math.nan)
        return PreflightCapture(
            samples=self.received, duration_s=duration,
            source=self._source.current(), arrival=arrival, crc_failures=self.crc_failures,
            crc_checked=self.crc_checked, latency_spread_ms=spread, latency_median_ms=median,
            tick_advancing=None if len(ticks) < 2 else len(set(ticks)) > 1,
            joint_pos=mean(self._q), quat_wxyz=self._quat, accel_mean=mean(self._accel),
            foot_force_mean=mean(self._feet), foot_force_raw=np.array(self._feet) if self._feet else None,
            health=self.health)


@dataclasses.dataclass(frozen=True)
class CheckRow:
    check: str
    ok: bool | None  # None: not applicable on this link / configuration
    measured: str
    limit: str
    fix: str

    @property
    def status(self) -> str:
        return "n/a" if self.ok is None else ("ok" if self.ok else "FAIL")


@dataclasses.dataclass(frozen=True)
class PreflightReport:
    rows: tuple[CheckRow, ...]

    @property
    def passed(self) -> bool:
        return all(r.ok is not False for r in self.rows)

    @property
    def failed(self) -> list[CheckRow]:
        return [r for r in self.rows if r.ok is False]

    def table(self) -> str:
        """A plain-text table, one row per check (what `pre_flight` prints)."""
        head = ("check", "status", "measured", "limit")
        rows = [(r.check, r.status, r.measured, r.limit) for r in self.rows]
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
        for r in self.failed:
            lines.append(f"fix {r.check}: {r.fix}")
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: passed, or which checks failed with their fixes (a Trigger's message)."""
        if self.passed:
            return "pre-flight passed (" + ", ".join(r.check for r in self.rows if r.ok) + ")"
        return "pre-flight failed: " + "; ".join(f"{r.check} ({r.measured}; limit {r.limit}): {r.fix}"
                                                 for r in self.failed)


def _fmt(values: np.ndarray, digits: int = 2) -> str:
    return "[" + ", ".join(f"{v:.{digits}f}" for v in np.asarray(values, dtype=np.float64)) + "]"


def run_preflight(capture: PreflightCapture, limits: PreflightLimits, *, robot: str = "go2",
                  foot_force_units: str = NEWTONS, calibration: FootForceCalibration | None = None,
                  calibration_problem: str = "") -> PreflightReport:
    """Judge one capture. `calibration`/`calibration_problem`: the robot's foot-force calibration as loaded
    (raw units), or why none could be used."""
    rows: list[CheckRow] = []
    lim = limits
    if capture.samples == 0 or capture.joint_pos is None:
        rows.append(CheckRow("lowstate", False, f"{capture.samples} samples in {capture.duration_s:.1f} s", "> 0",
                             "no rt/lowstate: is the robot on, network_interface the one wired to it "
                             "(192.168.123.x), dds_domain 0 on the robot?"))
        return PreflightReport(tuple(rows))
    rows.append(CheckRow("lowstate", True, f"{capture.samples} samples", "> 0", ""))

    # encoders
    q = capture.joint_pos
    off = np.abs(q - FOLDED_JOINT_POS)
    if lim.folded_envelope:
        bad = off > FOLDED_TOLERANCE_RAD
        rows.append(CheckRow(
            "encoders", not bool(np.any(bad)),
            f"largest offset from folded {float(np.max(off)):.2f} rad"
            + (f" (beyond tolerance: {', '.join(_JOINTS[i] for i in np.flatnonzero(bad))})" if np.any(bad) else ""),
            f"hip/thigh/calf ±{_fmt(FOLDED_TOLERANCE_RAD[:3])} rad",
            "lay the robot down folded (hip 0, thigh 1.36, calf -2.65 rad) before stand-up: in sport mode "
            "StandDown, or by hand with the motors off"))
    else:
        rows.append(CheckRow("encoders", None, f"{_fmt(q[:3])} (FR leg)", "suspended dry run: any pose", ""))

    # IMU
    quat = capture.quat_wxyz
    qnorm = float(np.linalg.norm(quat))
    rows.append(CheckRow("imu_quaternion", abs(qnorm - 1.0) <= lim.quat_norm_tolerance, f"norm {qnorm:.3f}",
                         f"1 ± {lim.quat_norm_tolerance}", "the IMU sends no orientation: restart the robot; if it "
                         "persists, the IMU is faulty"))
    gnorm = float(np.linalg.norm(capture.accel_mean))
    rows.append(CheckRow("imu_gravity", abs(gnorm - lim.gravity_mps2) <= lim.gravity_norm_tolerance_mps2,
                         f"{gnorm:.2f} m/s²", f"{lim.gravity_mps2} ± {lim.gravity_norm_tolerance_mps2}",
                         "the accelerometer does not read gravity: keep the robot still; restart it; if it "
                         "persists, the IMU is faulty"))
    expected_up = -projected_gravity_from_quat(quat) if qnorm > 1e-6 else np.array([0.0, 0.0, 1.0])
    angle = float(math.acos(float(np.clip(np.dot(capture.accel_mean / max(gnorm, 1e-9), expected_up), -1, 1))))
    tilt = float(math.acos(float(np.clip(expected_up[2], -1.0, 1.0))))
    rows.append(CheckRow("imu_level", angle <= lim.max_gravity_disagreement_rad and tilt <= lim.max_tilt_rad,
                         f"tilt {tilt:.2f} rad, accelerometer vs quaternion {angle:.2f} rad",
                         f"tilt ≤ {lim.max_tilt_rad}, disagreement ≤ {lim.max_gravity_disagreement_rad}",
                         "put the robot on flat ground, right side up; if it lies flat, the IMU's orientation "
                         "and accelerometer disagree: restart the robot"))

    rows.append(_feet_row(capture, lim, foot_force_units, calibration, calibration_problem))
    rows += _stream_rows(capture, lim)
    rows += _health_rows(capture, lim, robot)
    return PreflightReport(tuple(rows))


def _feet_row(capture: PreflightCapture, lim: PreflightLimits, units: str, calibration: FootForceCalibration | None,
              problem: str) -> CheckRow:
    feet = capture.foot_force_mean
    if units == NONE:
        return CheckRow("foot_sensors", None, "not used (foot_force_units none)", "-", "")
    if units == NEWTONS:
        ok = bool(np.all(np.abs(feet) <= lim.max_unloaded_foot_n))
        return CheckRow("foot_sensors", ok, f"{_fmt(feet, 0)} N", f"|F| ≤ {lim.max_unloaded_foot_n:g} N lying",
                        "a lying robot's feet read high: a foot is trapped or loaded, or the sensors report raw "
                        "counts (set foot_force_units: raw and calibrate)")
    if units != RAW:
        raise ValueError(f"foot_force_units {units!r}")
    if calibration is None:
        return CheckRow("foot_sensors", False, f"raw {_fmt(feet, 0)}; {problem or 'no calibration'}",
                        "a calibration for this robot",
                        "calibrate the foot sensors: robot lying (or hung), call estimator/calibrate_feet_unloaded;"
                        " after stand-up, estimator/calibrate_feet_standing")
    residual = unloaded_residual_n(calibration, feet)
    limit, unit = (lim.max_unloaded_foot_n, "N") if calibration.complete else (lim.max_unloaded_foot_counts, "counts")
    return CheckRow("foot_sensors", bool(np.all(np.abs(residual) <= limit)),
                    f"{_fmt(residual, 0)} {unit} from calibrated unloaded", f"|F| ≤ {limit:g} {unit}",
                    "the feet read far from their calibration: a foot is loaded or trapped, a sensor drifted "
                    "(recalibrate: estimator/calibrate_feet_unloaded), or the calibration is another robot's")


def _stream_rows(capture: PreflightCapture, lim: PreflightLimits) -> list[CheckRow]:
    rows = []
    window = capture.source or capture.arrival
    arrival = capture.arrival
    if window is None or arrival is None:
        rows.append(CheckRow("lowstate_rate", False, f"{capture.samples} samples", f"≥ {lim.min_rate_hz:.0f} Hz",
                             "too few samples to judge: check the link"))
    else:
        timed = math.isfinite(arrival.std_interval_ms)
        ok = window.rate_hz >= lim.min_rate_hz and (not timed or (arrival.std_interval_ms <= lim.max_interval_std_ms
                                                                  and arrival.max_interval_ms <= lim.max_gap_ms))
        rows.append(CheckRow(
            "lowstate_rate", ok, f"{window.rate_hz:.0f} Hz, " + (
                f"interval std {arrival.std_interval_ms:.1f} ms, largest gap {arrival.max_interval_ms:.1f} ms"
                if timed else "jitter not measurable on this link (samples taken in bursts)"),
            f"≥ {lim.min_rate_hz:.0f} Hz, std ≤ {lim.max_interval_std_ms:g} ms, gap ≤ {lim.max_gap_ms:g} ms",
            "the stream is too slow or uneven: use the wired Ethernet link, check the robot's CPU load and that "
            "no other program floods the network"))
    if capture.crc_checked == 0:
        rows.append(CheckRow("lowstate_crc", None, "not checked on this link", "-", ""))
    else:
        ok = capture.crc_failures == 0 or lim.allow_without_crc
        measured = f"{capture.crc_failures}/{capture.crc_checked} samples with a bad CRC"
        if capture.crc_failures and lim.allow_without_crc:
            measured += " (allowed: allow_lowstate_without_crc, simulators only)"
        rows.append(CheckRow("lowstate_crc", ok, measured, "0",
                             "rt/lowstate samples fail their CRC: a corrupted link (cable, switch), or a simulator "
                             "that leaves crc unset (set allow_lowstate_without_crc: true for simulators only; "
                             "never on the robot)"))
    if capture.tick_advancing is None:
        rows.append(CheckRow("lowstate_clock", None, "too few samples", "-", ""))
    else:
        rows.append(CheckRow("lowstate_clock", True, "tick advances" if capture.tick_advancing else
                             "tick frozen: the gait clock and estimator use this computer's clock (warning)",
                             "tick, or the host clock", ""))
    if capture.latency_spread_ms is None:
        rows.append(CheckRow("link_latency", None, "no source stamps on this link", "-", ""))
    else:
        median = capture.latency_median_ms
        synced = median is not None and abs(median) < 50.0
        rows.append(CheckRow(
            "link_latency", capture.latency_spread_ms <= lim.max_latency_spread_ms,
            f"p99 {capture.latency_spread_ms:.1f} ms above the fastest" + (f", median {median:.1f} ms" if synced else
                                                                           " (clocks not synced: no absolute figure)"),
            f"≤ {lim.max_latency_spread_ms:g} ms", "samples are delayed unevenly: use the wired Ethernet link, not "
            "Wi-Fi; check for a busy switch or another program on the link"))
    return rows


def _health_rows(capture: PreflightCapture, lim: PreflightLimits, robot: str) -> list[CheckRow]:
    h = capture.health
    if h is None:
        return [CheckRow("battery", None, f"not reported on the {robot}'s link here", "-", "check it in the app"),
                CheckRow("motor_temperature", None, f"not reported on the {robot}'s link here", "-", "")]
    battery_ok = h.battery_soc_pct >= lim.min_battery_soc_pct and h.power_v >= lim.min_battery_v
    hottest = int(np.argmax(h.motor_temperature_c))
    return [
        CheckRow("battery", battery_ok, f"{h.battery_soc_pct:.0f} %, {h.power_v:.1f} V",
                 f"≥ {lim.min_battery_soc_pct:g} %, ≥ {lim.min_battery_v:g} V",
                 "charge or swap the battery before standing up (a sagging battery cannot carry a fall recovery)"),
        CheckRow("motor_temperature", bool(np.all(h.motor_temperature_c <= lim.max_motor_temperature_c)),
                 f"hottest motor {hottest}: {h.motor_temperature_c[hottest]:.0f} °C",
                 f"≤ {lim.max_motor_temperature_c:g} °C", "let the motors cool with the robot lying down"),
    ]

