"""Foot-force units, and the per-robot calibration that turns a real Go2's raw sensor counts into newtons.

`foot_force` on the wire is an int16 per foot. Our rehearsal simulator reports newtons. A real Go2
reports raw sensor values: an offset (what an unloaded foot reads, different for each foot and drifting
between robots) plus a per-foot gain; public Go2 estimators tune their contact thresholds on those raw
numbers (e.g. 40/60 counts) and the Go1's are different again. The estimator's contact thresholds are
newtons, so raw counts must be calibrated first:

- offset: the mean reading with the feet unloaded (legs in the air, or the robot lying down on its
  body, feet free), per foot;
- gain: the robot standing still on four feet carries its weight; the model (MJCF mass and centre of
  mass, leg kinematics at the measured pose, `standing_foot_loads_n`) says how that weight splits
  between the feet, so newtons per count = expected load / (reading − offset), per foot.

The calibration is stored per robot (model and the serial number the robot reports in LowState `sn`)
and checked when a node starts: a file for another robot, or with implausible numbers, is refused.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from pathlib import Path

import numpy as np

NEWTONS, RAW, NONE = "newtons", "raw", "none"
FOOT_FORCE_UNITS = (NEWTONS, RAW, NONE)
DEFAULT_CALIBRATION_DIR = "~/.config/surrogait/foot_force"
MAX_UNLOADED_SPREAD = 30.0  # counts: an unloaded foot's reading must be steady (std) to serve as its offset
MIN_LOADED_COUNTS = 5.0  # counts above the offset a standing foot must read to give its gain


class CalibrationError(ValueError):
    """A foot-force calibration cannot be made, read or used; the message says why and what to do."""


def serial_name(serial: tuple[int, int] | None) -> str:
    """The robot's serial as a file-name part ("unknown" when the robot reports none)."""
    if serial is None or tuple(serial) == (0, 0):
        return "unknown"
    return f"{serial[0]:08x}{serial[1]:08x}"


def calibration_path(directory: str | Path, robot: str, serial: tuple[int, int] | None) -> Path:
    """Where the calibration of this robot lives: one file per robot model and serial number."""
    return Path(directory).expanduser() / f"{robot}-{serial_name(serial)}.json"


@dataclasses.dataclass(frozen=True)
class FootForceCalibration:
    robot: str
    serial: str  # serial_name(...) of the robot it was made on
    offset_counts: tuple[float, float, float, float]  # FR, FL, RR, RL: unloaded reading
    newtons_per_count: tuple[float, float, float, float] | None  # None until the standing step is done
    unloaded_at: str = ""  # ISO time of each step
    standing_at: str = ""

    @property
    def complete(self) -> bool:
        return self.newtons_per_count is not None

    def newtons(self, raw: np.ndarray) -> np.ndarray:
        """Raw counts (4,) -> newtons (4,); needs the standing step."""
        if self.newtons_per_count is None:
            raise CalibrationError("the foot-force calibration has no gains yet: stand the robot and run the "
                                   "standing step")
        return (np.asarray(raw, dtype=np.float64) - np.asarray(self.offset_counts)) * np.asarray(self.newtons_per_count)

    def check(self, robot: str, serial: str) -> None:
        """Refuse a calibration made on another robot, or one whose numbers a foot sensor cannot have."""
        if self.robot != robot or self.serial != serial:
            raise CalibrationError(f"the foot-force calibration is for {self.robot} serial {self.serial}, this is "
                                   f"{robot} serial {serial}: calibrate this robot")
        offsets = np.asarray(self.offset_counts, dtype=np.float64)
        if offsets.shape != (4,) or not np.all(np.isfinite(offsets)) or np.any(np.abs(offsets) > 32767):
            raise CalibrationError(f"foot-force offsets {self.offset_counts} are not four int16 sensor readings")
        if self.newtons_per_count is not None:
            gains = np.asarray(self.newtons_per_count, dtype=np.float64)
            if gains.shape != (4,) or not np.all(np.isfinite(gains)) or np.any(gains <= 0) or np.any(gains > 100):
                raise CalibrationError(f"foot-force gains {self.newtons_per_count} N/count are not four positive, "
                                       "plausible numbers: redo the standing step")

    def save(self, path: Path) -> Path:
        path = Path(path).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: Path) -> FootForceCalibration:
        path = Path(path).expanduser()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            gains = data.get("newtons_per_count")
            return cls(robot=str(data["robot"]), serial=str(data["serial"]),
                       offset_counts=tuple(float(v) for v in data["offset_counts"]),
                       newtons_per_count=None if gains is None else tuple(float(v) for v in gains),
                       unloaded_at=str(data.get("unloaded_at", "")), standing_at=str(data.get("standing_at", "")))
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise CalibrationError(f"cannot read the foot-force calibration {path}: {e}; calibrate again") from e


def load_calibration(directory: str | Path, robot: str, serial: tuple[int, int] | None) -> \
        tuple[FootForceCalibration | None, str]:
    """(this robot's calibration, "") or (None, why there is none it may use)."""
    path = calibration_path(directory, robot, serial)
    try:
        calibration = FootForceCalibration.load(path)
        calibration.check(robot, serial_name(serial))
    except FileNotFoundError:
        return None, f"no foot-force calibration for this {robot} (serial {serial_name(serial)}) at {path}"
    except CalibrationError as e:
        return None, f"{path}: {e}"
    return calibration, ""


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def unloaded_step(raw: np.ndarray, robot: str, serial: str) -> FootForceCalibration:
    """Offsets from raw readings (N, 4) of unloaded feet; refused if a foot did not read steadily."""
    raw = np.asarray(raw, dtype=np.float64)
    if raw.ndim != 2 or raw.shape[1] != 4 or raw.shape[0] < 10:
        raise CalibrationError(f"need at least 10 samples of 4 feet for the unloaded step, got {raw.shape}")
    spread = raw.std(axis=0)
    if np.any(spread > MAX_UNLOADED_SPREAD):
        raise CalibrationError(f"foot readings moved during the unloaded step (std {np.round(spread, 1).tolist()} "
                               f"counts > {MAX_UNLOADED_SPREAD:g}): keep the robot still with its feet free")
    offsets = raw.mean(axis=0)
    return FootForceCalibration(robot, serial, tuple(float(v) for v in offsets), None, unloaded_at=_now())


def standing_step(calibration: FootForceCalibration, raw: np.ndarray, expected_loads_n: np.ndarray) -> \
        FootForceCalibration:
    """Gains from raw readings (N, 4) of the robot standing still, against the model's load on each foot."""
    raw = np.asarray(raw, dtype=np.float64)
    if raw.ndim != 2 or raw.shape[1] != 4 or raw.shape[0] < 10:
        raise CalibrationError(f"need at least 10 samples of 4 feet for the standing step, got {raw.shape}")
    loaded = raw.mean(axis=0) - np.asarray(calibration.offset_counts)
    loads = np.asarray(expected_loads_n, dtype=np.float64)
    if np.any(loaded < MIN_LOADED_COUNTS) or np.any(loads <= 0):
        raise CalibrationError(f"standing feet read {np.round(loaded, 1).tolist()} counts above their unloaded "
                               f"offsets (need > {MIN_LOADED_COUNTS:g} on every foot, with the model's loads "
                               f"{np.round(loads, 1).tolist()} N): is the robot standing on all four feet?")
    gains = loads / loaded
    return dataclasses.replace(calibration, newtons_per_count=tuple(float(v) for v in gains), standing_at=_now())


def standing_foot_loads_n(mass_kg: float, com_w: np.ndarray, feet_w: np.ndarray, gravity_mps2: float = 9.81) -> \
        np.ndarray:
    """Vertical load (N) on each of four feet of a robot standing still: force and moment balance about the
    centre of mass (3 equations), the least-norm split of the 4 unknowns (a four-legged stand is statically
    indeterminate by one; the least-norm split is the symmetric one a level robot stands with)."""
    com = np.asarray(com_w, dtype=np.float64)
    feet = np.asarray(feet_w, dtype=np.float64)
    a = np.vstack([np.ones(4), feet[:, 0] - com[0], feet[:, 1] - com[1]])
    b = np.array([mass_kg * gravity_mps2, 0.0, 0.0])
    loads = np.linalg.pinv(a) @ b
    if not np.all(np.isfinite(loads)) or np.any(loads <= 0):
        raise CalibrationError(f"the centre of mass is not over the feet (loads {np.round(loads, 1).tolist()} N): "
                               "stand the robot level on four feet")
    return loads


def unloaded_residual_n(calibration: FootForceCalibration, raw: np.ndarray) -> np.ndarray:
    """How far unloaded feet read from their calibrated offset, in newtons (counts if no gains yet)."""
    delta = np.asarray(raw, dtype=np.float64) - np.asarray(calibration.offset_counts)
    return delta if calibration.newtons_per_count is None else delta * np.asarray(calibration.newtons_per_count)


def fmt(values: np.ndarray) -> str:
    return "[" + ", ".join("nan" if not math.isfinite(v) else f"{v:.0f}" for v in values) + "]"


ALL_ZERO_S = 1.0  # all four feet reading exactly 0 this long: no foot sensors on this source


class FootForceSource:
    """The estimator's foot forces in newtons, or None with the reason they cannot be used now.

    Usable: `newtons` units, or `raw` with this robot's complete calibration; and no sensor stuck while its
    leg moves (`sanity.StuckFeet`), and not all four at exactly 0 for ALL_ZERO_S (a source without foot
    sensors). Otherwise contacts come from leg kinematics and the gait schedule. A stuck or silent sensor
    that reads again makes the forces usable again.
    """

    def __init__(self, units: str, robot: str, calibration_dir: str | Path = DEFAULT_CALIBRATION_DIR):
        from surrogait_core.inputs.sanity import SanityConfig, StuckFeet

        if units not in FOOT_FORCE_UNITS:
            raise CalibrationError(f"foot_force_units {units!r} is not one of {', '.join(FOOT_FORCE_UNITS)}")
        self.units, self.robot, self.calibration_dir = units, robot, calibration_dir
        self.calibration: FootForceCalibration | None = None
        self.calibration_problem = ""  # why raw counts cannot be converted ("" when they can)
        self.serial: tuple[int, int] | None = None
        self._stuck = StuckFeet(SanityConfig())
        self._stuck_checked_t: float | None = None
        self.stuck_issue = None
        self._zero_since: float | None = None
        self.reason = "" if units != NONE else "foot_force_units none"  # why unusable now ("" when usable)

    def on_robot(self, serial: tuple[int, int] | None) -> None:
        """The robot's serial, from its first LowState: loads and checks its calibration (raw units)."""
        self.serial = serial
        if self.units == RAW:
            self.calibration, self.calibration_problem = load_calibration(self.calibration_dir, self.robot, serial)
            if self.calibration is not None and not self.calibration.complete:
                self.calibration_problem = "the calibration has no gains yet (standing step not done)"

    def set_calibration(self, calibration: FootForceCalibration) -> None:
        self.calibration = calibration
        self.calibration_problem = "" if calibration.complete else \
            "the calibration has no gains yet (standing step not done)"

    def newtons(self, foot_force: np.ndarray, joint_vel: np.ndarray, t_s: float) -> np.ndarray | None:
        """Forces in newtons (4,), or None (see `reason`)."""
        if self.units == NONE:
            return None
        last = self._stuck_checked_t
        if last is None or not 0.0 <= t_s - last < self._stuck.config.min_interval_s:  # judged at ~65 Hz: cheap
            dt = 0.0 if last is None else min(max(t_s - last, 0.0), 0.1)
            self._stuck_checked_t = t_s
            self.stuck_issue = self._stuck.update(foot_force, joint_vel, t_s, dt)
        if np.all(foot_force == 0.0):
            self._zero_since = t_s if self._zero_since is None else self._zero_since
        else:
            self._zero_since = None
        if self._zero_since is not None and t_s - self._zero_since >= ALL_ZERO_S:
            self.reason = f"all four foot sensors read 0 for ≥ {ALL_ZERO_S:g} s: no foot force on this source"
            return None
        if self.stuck_issue is not None:
            self.reason = self.stuck_issue.detail
            return None
        if self.units == RAW:
            if self.calibration is None or not self.calibration.complete:
                self.reason = f"raw foot-force counts without a complete calibration: {self.calibration_problem}"
                return None
            self.reason = ""
            return self.calibration.newtons(foot_force)
        self.reason = ""
        return np.asarray(foot_force, dtype=np.float64)
