"""The policy node's parameters: one dataclass, used to declare them and by the launch-file test.

Only deployment choices live here (docs/architecture.md, Principles: one source of truth);
everything the policy depends on (gains, control period, command ranges, gait) comes from the ONNX
file's contract.
"""

from __future__ import annotations

import dataclasses
import math

from surrogait_core.network_interface import interface_problem
from surrogait_core.robot_spec import ROBOTS

COMMAND_RATE_RANGE_HZ = (50.0, 1000.0)


class ParamsError(ValueError):
    """A parameter is missing, has the wrong type or a value that cannot work; the message says which."""


@dataclasses.dataclass(frozen=True)
class PolicyNodeParams:
    robot: str = "go2"
    policy_path: str = ""  # the exported ONNX file (relative paths: from the working directory)
    network_interface: str = "lo"  # the robot's Ethernet interface, or "lo" in rehearsal
    dds_domain: int = 1  # unitree_sdk2 DDS domain: 0 on the robot, 1 in rehearsal
    release_sport_mode: bool = False  # release the built-in sport controller first (robot only)
    stand_up_duration_s: float = 2.0
    damping_kd: float = 1.0  # N·m·s/rad while PASSIVE or DAMP
    state_timeout_s: float = 0.06  # no rt/lowstate this long while stiff → DAMP
    estimator_timeout_s: float = 0.1  # no odometry this long while walking (if the policy needs it) → DAMP
    cmd_vel_timeout_s: float = 0.5  # no cmd_vel / stick this long → zero velocity command
    reset_requires_safety_ok: bool = True  # DAMP → PASSIVE only while the safety monitor reports OK
    diagnostics_period_s: float = 1.0
    command_rate_hz: float = 500.0  # LowCmd stream to the motors; the policy runs at its contract's rate
    feedback_rate_hz: float = 10.0  # JointState / Imu publishing rate (for people and tools, not for control)
    realtime_priority: int = 0  # SCHED_FIFO priority of the control thread, the rest one below (0 = normal)
    timing_log_path: str = ""  # if set, per-cycle timings are saved there (.npz) on exit (benchmarks)

    def validate(self) -> PolicyNodeParams:
        problems = []
        if self.robot not in ROBOTS:
            problems.append(f"robot {self.robot!r} is not one of {', '.join(ROBOTS)}")
        if not self.policy_path:
            problems.append("policy_path is empty: set it to an exported policy (.onnx)")
        if not 0 <= self.dds_domain <= 232:
            problems.append(f"dds_domain {self.dds_domain} is outside 0..232")
        if (problem := interface_problem(self.network_interface)) is not None:
            problems.append(problem)
        for name in ("stand_up_duration_s", "state_timeout_s", "estimator_timeout_s", "cmd_vel_timeout_s",
                     "diagnostics_period_s", "feedback_rate_hz"):
            if getattr(self, name) <= 0:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if not COMMAND_RATE_RANGE_HZ[0] <= self.command_rate_hz <= COMMAND_RATE_RANGE_HZ[1]:
            problems.append(f"command_rate_hz {self.command_rate_hz:g} is outside {COMMAND_RATE_RANGE_HZ[0]:g}.."
                            f"{COMMAND_RATE_RANGE_HZ[1]:g} Hz (the Go2's motor drivers expect a stream of "
                            "hundreds of Hz; 500 is the vendor examples' rate)")
        if not 0 <= self.realtime_priority <= 99:
            problems.append(f"realtime_priority must be in 0..99, got {self.realtime_priority}")
        if self.damping_kd <= 0:
            problems.append(f"damping_kd must be positive (damping needs kd > 0), got {self.damping_kd}")
        if problems:
            raise ParamsError("; ".join(problems))
        return self


def feedback_every_n_cycles(feedback_rate_hz: float, cycle_dt_s: float) -> int:
    """Publish JointState / Imu every n-th loop cycle: the highest rate not above `feedback_rate_hz`."""
    return max(1, math.ceil(1.0 / (feedback_rate_hz * cycle_dt_s) - 1e-9))  # 1e-9: 1/(10 Hz·0.02 s) is 5, not 6


def commands_per_policy_step(command_rate_hz: float, control_dt_s: float) -> int:
    """LowCmds written per policy step: the stream must divide the policy's period evenly, or the
    policy's steps would drift against the stream and its period would jitter by a command period."""
    ratio = command_rate_hz * control_dt_s
    n = round(ratio)
    if n < 1 or abs(ratio - n) > 1e-6:
        raise ParamsError(f"command_rate_hz {command_rate_hz:g} is not a whole multiple of the policy's control "
                          f"rate {1 / control_dt_s:g} Hz (its contract's control_dt_s); use e.g. "
                          f"{round(500 * control_dt_s) / control_dt_s:g}")
    return n


DESCRIPTIONS = {
    "robot": "robot model (go2); a policy exported for another robot is refused",
    "policy_path": "exported ONNX policy with its surrogait contract; relative paths from the working directory",
    "network_interface": "network interface for unitree_sdk2 DDS: the robot's Ethernet interface, or lo in rehearsal",
    "dds_domain": "unitree_sdk2 DDS domain of rt/lowstate and rt/lowcmd (robot 0, rehearsal 1)",
    "release_sport_mode": "release the built-in sport controller through the motion switcher first (robot only)",
    "stand_up_duration_s": "time to move from the current pose to the default pose, s",
    "damping_kd": "motor damping while PASSIVE or DAMP, N·m·s/rad",
    "state_timeout_s": "no rt/lowstate for this long while the motors are stiff: DAMP, s",
    "estimator_timeout_s": "no odometry for this long while walking (policies that need it): DAMP, s",
    "cmd_vel_timeout_s": "no cmd_vel or gamepad stick for this long: zero velocity command, s",
    "reset_requires_safety_ok": "policy/reset (DAMP -> PASSIVE) only while the safety monitor reports OK",
    "diagnostics_period_s": "diagnostics publishing period, s",
    "command_rate_hz": "rt/lowcmd stream rate, Hz (50..1000, a whole multiple of the policy's control rate): the "
                       "latest targets, gains and mode are re-sent between policy steps, as the motor drivers expect",
    "feedback_rate_hz": "JointState and Imu publishing rate, Hz: every n-th LowCmd cycle, the highest rate not above "
                        "this; the policy state is published on every change",
    "realtime_priority": "SCHED_FIFO priority of the control thread, 1..99, the process's other threads one "
                         "below (needs root or CAP_SYS_NICE; falls back to normal scheduling); 0 = normal",
    "timing_log_path": "if set, per-cycle loop timings are written there (.npz) on exit, for benchmarks",
}

# name: (default, description), the convention the other surrogait nodes and the launch test share.
PARAMETERS: dict[str, tuple[object, str]] = {
    f.name: (f.default, DESCRIPTIONS[f.name]) for f in dataclasses.fields(PolicyNodeParams)
}

_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def coerce(name: str, value, default):
    """A parameter value as the type of its default; ints are accepted for floats (YAML `2` for 2.0)."""
    kind = type(default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ParamsError(f"parameter {name!r} must be {_KIND_NAMES[kind]}, got {value!r}")
    return value


def from_values(values: dict, cls=PolicyNodeParams):
    """Build the params from {name: value}; unknown names are refused (a typo must not pass silently)."""
    fields = {f.name: f.default for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ParamsError(f"unknown parameter(s) {', '.join(unknown)}; this node takes: {', '.join(fields)}")
    return cls(**{name: coerce(name, values.get(name, default), default) for name, default in fields.items()})
