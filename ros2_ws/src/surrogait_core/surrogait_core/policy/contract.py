"""The policy contract: everything a policy depends on, stored inside its ONNX file.

Export writes it into the model's `metadata_props`; deployment and evaluation read it
back, so joint order, default pose, observation scales, action mapping, soft joint range, PD
gains, control period and gait clock can never drift from what the policy was trained with.

Schema history (a file of another version is refused, never migrated silently):
  1  the default pose and joint range came from the robot model at load time
  2  adds `default_joint_pos` and the soft joint range (`soft_joint_pos_lower/upper`);
     `surrogait-train upgrade-contract` rewrites a version-1 file's contract.
     Later, compatible within version 2: `gaits` (a multi-gait policy's gaits; absent = one gait,
     `gait`) and the observation source "gait" (the gait's parameters as policy inputs).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Literal

SCHEMA_VERSION = 2
METADATA_KEY = "surrogait.contract"
SCHEMA_KEY = "surrogait.schema_version"

ObsSource = Literal["proprioception", "estimator", "command", "gait_clock", "gait", "policy"]
OBS_SOURCES = ("proprioception", "estimator", "command", "gait_clock", "gait", "policy")


class ContractError(ValueError):
    """A policy file's contract cannot be used; the message names the file and the problem."""


class MissingContractError(ContractError):
    pass


class MalformedContractError(ContractError):
    pass


class SchemaVersionError(ContractError):
    pass


class RobotMismatchError(ContractError):
    pass


class PolicyFileError(ContractError):
    """The policy file itself is missing or is not a readable ONNX model."""


@dataclasses.dataclass(frozen=True)
class ObsTerm:
    """One observation term: obs = clip(value · scale, -clip, clip)."""

    name: str
    size: int
    scale: float = 1.0
    clip: float = 100.0
    source: ObsSource = "proprioception"


@dataclasses.dataclass(frozen=True)
class ActionSpec:
    """joint_targets = offset + scale · clip(action, -clip, clip), in SDK joint order."""

    scale: tuple[float, ...]
    offset: tuple[float, ...]
    clip: float = 10.0


@dataclasses.dataclass(frozen=True)
class GaitSpec:
    """A periodic gait schedule: leg i is in stance while its phase is below duty_factor.

    Phase offsets are per leg in SDK leg order (FR, FL, RR, RL), in cycles (0..1).
    """

    name: str = "trot"
    period_s: float = 0.5
    duty_factor: float = 0.5
    phase_offsets: tuple[float, float, float, float] = (0.0, 0.5, 0.5, 0.0)
    swing_height_m: float = 0.08


@dataclasses.dataclass(frozen=True)
class CommandRanges:
    """Velocity command limits (body frame): m/s, m/s, rad/s."""

    lin_vel_x: tuple[float, float] = (-0.5, 1.0)
    lin_vel_y: tuple[float, float] = (-0.3, 0.3)
    ang_vel_yaw: tuple[float, float] = (-0.5, 0.5)


@dataclasses.dataclass(frozen=True)
class PolicyContract:
    """Per-joint fields are in `joint_names` order (the SDK's: FR, FL, RR, RL x hip, thigh, calf)."""

    robot: str
    joint_names: tuple[str, ...]
    observation: tuple[ObsTerm, ...]
    action: ActionSpec
    kp: tuple[float, ...]
    kd: tuple[float, ...]
    # rad; `joint_pos_rel` is measured from it. Stored, not read from the robot model at load time,
    # so that a regenerated model cannot change a trained policy's input.
    default_joint_pos: tuple[float, ...]
    # rad; joint targets are clipped to [lower, upper] in training and deployment alike. Strictly
    # inside the robot's hard joint range, so a policy that does what training allowed keeps its
    # joints clear of the stops, where the safety monitor faults.
    soft_joint_pos_lower: tuple[float, ...]
    soft_joint_pos_upper: tuple[float, ...]
    control_dt_s: float = 0.02
    gait: GaitSpec = GaitSpec()  # the gait it walks with (a multi-gait policy's default: the first of `gaits`)
    command_ranges: CommandRanges = CommandRanges()
    schema_version: int = SCHEMA_VERSION
    # A multi-gait policy: every gait it was trained for, whose parameters it sees as inputs (the
    # observation source "gait"); it may switch between them while walking. Empty: one gait, `gait`.
    gaits: tuple[GaitSpec, ...] = ()

    @property
    def gait_names(self) -> tuple[str, ...]:
        """The gaits this policy can walk with, the default first."""
        return tuple(g.name for g in self.gaits) or (self.gait.name,)

    def gait_named(self, name: str) -> GaitSpec:
        for gait in self.gaits or (self.gait,):
            if gait.name == name:
                return gait
        raise KeyError(f"this policy was trained for the gaits {', '.join(self.gait_names)}, not {name!r}")

    @property
    def obs_size(self) -> int:
        return sum(t.size for t in self.observation)

    @property
    def action_size(self) -> int:
        return len(self.joint_names)

    @property
    def estimator_terms(self) -> tuple[str, ...]:
        """Terms the policy needs from the state estimator (e.g. base_lin_vel_b)."""
        return tuple(t.name for t in self.observation if t.source == "estimator")

    def term(self, name: str) -> ObsTerm:
        for t in self.observation:
            if t.name == name:
                return t
        raise KeyError(name)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, source: str = "<string>") -> PolicyContract:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise MalformedContractError(f"{source}: contract metadata is not valid JSON ({e})") from None
        return cls.from_dict(raw, source)

    @classmethod
    def from_dict(cls, raw: object, source: str = "<dict>") -> PolicyContract:
        """The contract from its parsed JSON object; refuses other schema versions and bad fields."""
        if not isinstance(raw, dict):
            raise MalformedContractError(f"{source}: contract metadata must be a JSON object")
        version = raw.get("schema_version")
        if version == 1:
            raise SchemaVersionError(
                f"{source}: contract schema version 1 has no stored default pose and no soft joint range, "
                f"and this surrogait reads version {SCHEMA_VERSION}. Re-export the policy with "
                f"`surrogait-train export`, or run `surrogait-train upgrade-contract {source} --out NEW.onnx` "
                "(adds the robot model's soft range and default pose; the policy was not trained with that "
                "soft range)"
            )
        if version != SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{source}: contract schema version {version!r}, this surrogait reads version "
                f"{SCHEMA_VERSION}; re-export the policy with this version of surrogait"
            )
        try:
            contract = cls(
                robot=str(raw["robot"]),
                joint_names=tuple(raw["joint_names"]),
                observation=tuple(ObsTerm(**t) for t in raw["observation"]),
                action=ActionSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw["action"].items()}),
                kp=tuple(raw["kp"]),
                kd=tuple(raw["kd"]),
                default_joint_pos=tuple(raw["default_joint_pos"]),
                soft_joint_pos_lower=tuple(raw["soft_joint_pos_lower"]),
                soft_joint_pos_upper=tuple(raw["soft_joint_pos_upper"]),
                control_dt_s=float(raw["control_dt_s"]),
                gait=GaitSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw["gait"].items()}),
                command_ranges=CommandRanges(**{k: tuple(v) for k, v in raw["command_ranges"].items()}),
                schema_version=version,
                gaits=tuple(GaitSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in g.items()})
                            for g in raw.get("gaits", ())),
            )
        except (KeyError, TypeError) as e:
            raise MalformedContractError(f"{source}: contract is missing or has a wrong field ({e!r})") from None
        contract.validate(source)
        return contract

    def validate(self, source: str = "<contract>") -> None:
        n = len(self.joint_names)
        problems = []
        for field in ("kp", "kd", "default_joint_pos", "soft_joint_pos_lower", "soft_joint_pos_upper"):
            if len(getattr(self, field)) != n:
                problems.append(f"{field} has {len(getattr(self, field))} entries for {n} joints")
        lower, upper = self.soft_joint_pos_lower, self.soft_joint_pos_upper
        if len(lower) == len(upper) == n:
            # `not lo < hi` also catches NaN
            empty = [self.joint_names[i] for i in range(n) if not lower[i] < upper[i]]
            if empty:
                problems.append(f"soft joint range needs lower < upper, not so for {', '.join(empty)}")
            elif len(self.default_joint_pos) == n:
                outside = [self.joint_names[i] for i in range(n)
                           if not lower[i] <= self.default_joint_pos[i] <= upper[i]]
                if outside:
                    problems.append(f"default_joint_pos is outside the soft joint range for {', '.join(outside)}")
        if len(self.action.scale) != n or len(self.action.offset) != n:
            problems.append(f"action scale/offset must have {n} entries")
        if self.control_dt_s <= 0:
            problems.append("control_dt_s must be positive")
        for gait in (self.gait, *self.gaits):
            if len(gait.phase_offsets) != 4 or not 0 < gait.duty_factor < 1 or not gait.period_s > 0:
                problems.append(f"gait {gait.name!r} needs 4 phase offsets, a duty factor in (0, 1) and a period > 0")
        if self.gaits:
            names = [g.name for g in self.gaits]
            if len(set(names)) != len(names):
                problems.append(f"gaits are listed twice: {names}")
            if self.gait != self.gaits[0]:
                problems.append("a multi-gait policy's `gait` must be the first of its `gaits`")
        if any(t.source == "gait" for t in self.observation) and not self.gaits:
            problems.append("the observation has the gait's parameters but `gaits` lists none")
        for t in self.observation:
            if t.source not in OBS_SOURCES:
                problems.append(f"observation term {t.name!r} has unknown source {t.source!r}")
            if t.size <= 0:
                problems.append(f"observation term {t.name!r} has size {t.size}")
        if problems:
            raise MalformedContractError(f"{source}: " + "; ".join(problems))

    def check_robot(self, robot: str, source: str = "<contract>") -> None:
        if self.robot != robot:
            raise RobotMismatchError(
                f"{source}: this policy was trained for the {self.robot!r}, but the robot here is a "
                f"{robot!r}; use a policy exported for the {robot!r}"
            )


def write_contract(onnx_path: Path | str, contract: PolicyContract) -> None:
    """Embed `contract` in an existing ONNX file's metadata (rewrites the file atomically)."""
    import onnx

    contract.validate(str(onnx_path))
    model = onnx.load(str(onnx_path))
    kept = [p for p in model.metadata_props if p.key not in (METADATA_KEY, SCHEMA_KEY)]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    for key, value in ((METADATA_KEY, contract.to_json()), (SCHEMA_KEY, str(contract.schema_version))):
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    tmp = Path(f"{onnx_path}.tmp")
    onnx.save(model, str(tmp))
    tmp.replace(onnx_path)


def open_session(onnx_path: Path | str, threads: int = 1):
    """onnxruntime's session of a policy file (`threads` for its operators); PolicyFileError where the file is
    missing or unreadable. The contract is read from its metadata too: the nodes load onnxruntime anyway, and the
    `onnx` package (it pulls in ml_dtypes) cost each node 0.6-1 s of CPU at start-up, on the cores the simulator or
    the robot's other processes are using then."""
    import onnxruntime as ort

    path = Path(onnx_path)
    if not path.is_file():
        raise PolicyFileError(f"{path}: policy file not found; export one with `surrogait-train export`")
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.log_severity_level = 3  # a corrupt file is reported below, not logged by onnxruntime too
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises several types for a corrupt file
        raise PolicyFileError(f"{path}: not a readable ONNX model ({type(e).__name__}: {e})") from None


def session_metadata(session) -> dict[str, str]:
    """The metadata of the ONNX file an onnxruntime session was made from."""
    return dict(session.get_modelmeta().custom_metadata_map)


def read_metadata(onnx_path: Path | str) -> dict[str, str]:
    """An ONNX file's metadata, read by onnxruntime."""
    return session_metadata(open_session(onnx_path))


def read_contract_json(onnx_path: Path | str, metadata: dict[str, str] | None = None) -> dict:
    """The raw contract of an ONNX policy as a JSON object, of whatever schema version (for upgrades); from
    `metadata` where the file's is already read (an OnnxPolicy's session)."""
    path = Path(onnx_path)
    meta = read_metadata(path) if metadata is None else metadata
    if METADATA_KEY not in meta:
        raise MissingContractError(
            f"{path}: no surrogait policy contract in the ONNX metadata; this file was not exported "
            "by `surrogait-train export`"
        )
    try:
        raw = json.loads(meta[METADATA_KEY])
    except json.JSONDecodeError as e:
        raise MalformedContractError(f"{path}: contract metadata is not valid JSON ({e})") from None
    if not isinstance(raw, dict):
        raise MalformedContractError(f"{path}: contract metadata must be a JSON object")
    return raw


def read_contract(onnx_path: Path | str, robot: str | None = None,
                  metadata: dict[str, str] | None = None) -> PolicyContract:
    """Read and check the contract of an ONNX policy; `robot` refuses a policy for another robot."""
    contract = PolicyContract.from_dict(read_contract_json(onnx_path, metadata), source=str(onnx_path))
    if robot is not None:
        contract.check_robot(robot, str(onnx_path))
    return contract


def upgrade_contract_v1(
    raw: dict,
    default_joint_pos: tuple[float, ...],
    soft_joint_pos_lower: tuple[float, ...],
    soft_joint_pos_upper: tuple[float, ...],
    source: str = "<contract>",
) -> PolicyContract:
    """A version-1 contract (JSON object) with the fields version 2 added; everything else is kept.

    The caller chooses the new fields (surrogait-train's `upgrade-contract` takes them from the robot
    model) and must tell the user that the policy was trained without that soft range.
    """
    if raw.get("schema_version") != 1:
        raise SchemaVersionError(f"{source}: contract schema version {raw.get('schema_version')!r}, not 1")
    upgraded = {
        **raw,
        "default_joint_pos": [float(x) for x in default_joint_pos],
        "soft_joint_pos_lower": [float(x) for x in soft_joint_pos_lower],
        "soft_joint_pos_upper": [float(x) for x in soft_joint_pos_upper],
        "schema_version": SCHEMA_VERSION,
    }
    return PolicyContract.from_dict(upgraded, source)
