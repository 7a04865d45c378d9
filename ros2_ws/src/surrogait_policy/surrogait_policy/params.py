"""The policy node's parameters: one table (`PolicyNodeParams`), read and checked without ROS.

Only deployment choices live here (docs/architecture.md, Principles: one source of truth);
everything the policy depends on (gains, control period, command ranges, gait) comes from the ONNX
file's contract.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
from collections.abc import Mapping

from surrogait_core.inputs.foot_force import DEFAULT_CALIBRATION_DIR, FOOT_FORCE_UNITS, RAW
from surrogait_core.policy.command_input import COMMAND_SLEW_RATE
from surrogait_core.robot_links import UDP, robot_link
from surrogait_core.robot_spec import ROBOTS
from surrogait_core.runtime.node_params import (
    ParamError,
    param,
    parameter_table,
    read_params,
    realtime_priority_problem,
)
from surrogait_core.wire import go1_wire
from surrogait_core.wire.network_interface import interface_problem, udp_peer_problem

COMMAND_RATE_RANGE_HZ = (50.0, 1000.0)


@dataclasses.dataclass(frozen=True)
class PolicyNodeParams:
    robot: str = param("go2", "robot model: go2 (unitree_sdk2 DDS) or go1 (unitree_legged_sdk UDP); a policy "
                              "exported for another robot is refused")
    policy_path: str = param("", "exported ONNX policy with its surrogait contract; relative paths from the "
                                 "working directory")
    network_interface: str = param("lo", "go2: network interface for unitree_sdk2 DDS (the robot's Ethernet "
                                         "interface, or lo in rehearsal); go1: the interface that reaches "
                                         "udp_peer_ip (lo for the safety monitor on this machine)")
    dds_domain: int = param(1, "go2: unitree_sdk2 DDS domain of rt/lowstate and rt/lowcmd (robot 0, rehearsal 1)")
    release_sport_mode: bool = param(False, "go2: hand the robot over from the built-in sport controller first, as "
                                            "the vendor does: StandDown, wait until rt/lowstate shows it lying, then "
                                            "ReleaseMode (robot only); the Go1 leaves sport mode with its remote")
    restore_sport_mode: bool = param(False, "go2: on shutdown, after the damping, select the released sport mode "
                                            "again (the robot, lying, is the sport controller's again)")
    sport_mode_lying_timeout_s: float = param(10.0, "go2: how long StandDown may take before the hand-over gives up "
                                                    "without releasing, s")
    udp_peer_ip: str = param("127.0.0.1", "go1: where LowCmds go and LowStates come from: the safety monitor "
                                          "(127.0.0.1), which forwards them to the robot")
    udp_peer_port: int = param(go1_wire.MONITOR_POLICY_PORT, "go1: the peer's UDP port (the safety monitor's port "
                                                             "for the policy node)")
    udp_local_port: int = param(go1_wire.POLICY_LOCAL_PORT, "go1: this node's UDP port (unitree_legged_sdk socket)")
    robot_reply_timeout_s: float = param(2.0, "go1: at start, damping LowCmds are streamed until the first LowState "
                                              "comes back; none within this long: exit with an error, s")
    power_protect_level: int = param(0, "go1: unitree_legged_sdk's PowerProtect on every policy step, level 1..10 "
                                        "(10..100 % of its power limit); a trip damps the motors; 0 = off")
    allow_lowstate_without_crc: bool = param(False, "use rt/lowstate samples whose CRC fails: ONLY for a simulator "
                                                    "that leaves LowState's crc unset (unitree_mujoco); never on "
                                                    "the robot, where a failing CRC is a corrupted sample")
    preflight_before_stand_up: bool = param(True, "policy/stand_up (and the gamepad's) runs the pre-flight first and "
                                                  "is refused, with what failed and how to fix it, unless it passes")
    foot_force_units: str = param(RAW, "what rt/lowstate foot_force carries: raw (a real Go2's sensor counts, "
                                       "checked against this robot's calibration), newtons (the rehearsal "
                                       "simulator), none (not used)")
    foot_force_calibration_dir: str = param(DEFAULT_CALIBRATION_DIR, "where each robot's foot-force calibration "
                                                                     "is kept (<robot>-<serial>.json)")
    frozen_observation_steps: int = param(10, "WALK: an observation unchanged for this many policy steps is a "
                                              "fault (DAMP)")
    dry_run_gain_fraction: float = param(0.0, "suspended dry run, the first thing to run on a new robot: kp and kd "
                                              "of every stiff command times this fraction (e.g. 0.2), the robot "
                                              "hung in a harness, legs moving gently in the air; 0 = off")
    stand_up_duration_s: float = param(2.0, "time to move from the current pose to the default pose, s")
    damping_kd: float = param(1.0, "motor damping while PASSIVE or DAMP, N·m·s/rad")
    state_timeout_s: float = param(0.06, "no rt/lowstate for this long while the motors are stiff: DAMP, s")
    estimator_timeout_s: float = param(0.1, "no odometry for this long while walking (policies that need it): "
                                            "DAMP, s")
    cmd_vel_timeout_s: float = param(0.5, "no cmd_vel or gamepad stick for this long: zero velocity command, s")
    command_accel_m_s2: float = param(COMMAND_SLEW_RATE[0], "the followed vx and vy move towards the operator's "
                                                            "command at most this fast (a stop from 1 m/s takes "
                                                            "1 s), m/s²; 0 = at once")
    command_yaw_accel_rad_s2: float = param(COMMAND_SLEW_RATE[2], "the followed yaw rate moves towards the "
                                                                  "operator's at most this fast, rad/s²; 0 = at once")
    reset_requires_safety_ok: bool = param(True, "policy/reset (DAMP -> PASSIVE) only while the safety monitor "
                                                 "reports OK")
    diagnostics_period_s: float = param(1.0, "diagnostics publishing period, s")
    command_rate_hz: float = param(500.0, "rt/lowcmd stream rate, Hz (50..1000, a whole multiple of the policy's "
                                          "control rate): the latest targets, gains and mode are re-sent between "
                                          "policy steps, as the motor drivers expect")
    feedback_rate_hz: float = param(10.0, "JointState and Imu publishing rate, Hz: every n-th LowCmd cycle, the "
                                          "highest rate not above this; the policy state is published on every "
                                          "change")
    realtime_priority: int = param(0, "SCHED_FIFO priority of the control thread, 1..99, the process's other "
                                      "threads one below (needs root or CAP_SYS_NICE; falls back to normal "
                                      "scheduling); 0 = normal")
    timing_log_path: str = param("", "if set, per-cycle loop timings are written there (.npz) on exit, for "
                                     "benchmarks")

    def validate(self) -> PolicyNodeParams:
        """Values that cannot work, all of them in one ParamError; the cross-field check against the
        contract (`commands_per_policy_step`) comes once the policy file is read."""
        problems = []
        if self.robot not in ROBOTS:
            problems.append(f"robot {self.robot!r} is not one of {', '.join(ROBOTS)}")
        if not self.policy_path:
            problems.append("policy_path is empty: set it to an exported policy (.onnx)")
        if not 0 <= self.dds_domain <= 232:
            problems.append(f"dds_domain {self.dds_domain} is outside 0..232")
        if self.robot in ROBOTS and robot_link(self.robot).protocol == UDP:
            problems += self._go1_problems()
        elif (problem := interface_problem(self.network_interface)) is not None:
            problems.append(problem)
        for name in ("stand_up_duration_s", "state_timeout_s", "estimator_timeout_s", "cmd_vel_timeout_s",
                     "diagnostics_period_s", "feedback_rate_hz"):
            if getattr(self, name) <= 0:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if not COMMAND_RATE_RANGE_HZ[0] <= self.command_rate_hz <= COMMAND_RATE_RANGE_HZ[1]:
            problems.append(f"command_rate_hz {self.command_rate_hz:g} is outside {COMMAND_RATE_RANGE_HZ[0]:g}.."
                            f"{COMMAND_RATE_RANGE_HZ[1]:g} Hz (the Go2's motor drivers expect a stream of "
                            "hundreds of Hz; 500 is the vendor examples' rate)")
        if (problem := realtime_priority_problem(self.realtime_priority)) is not None:
            problems.append(problem)
        if self.damping_kd <= 0:
            problems.append(f"damping_kd must be positive (damping needs kd > 0), got {self.damping_kd}")
        if self.foot_force_units not in FOOT_FORCE_UNITS:
            problems.append(f"foot_force_units {self.foot_force_units!r} is not one of {', '.join(FOOT_FORCE_UNITS)}")
        if not 0.0 <= self.dry_run_gain_fraction < 1.0:
            problems.append(f"dry_run_gain_fraction {self.dry_run_gain_fraction:g} must be in [0, 1) (0 = off; 0.2: "
                            "a fifth of the policy's gains)")
        for name in ("command_accel_m_s2", "command_yaw_accel_rad_s2"):
            if not math.isfinite(getattr(self, name)) or getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0 (0 = follow the command at once), got {getattr(self, name)}")
        if self.frozen_observation_steps < 2:
            problems.append(f"frozen_observation_steps must be >= 2, got {self.frozen_observation_steps}")
        if self.restore_sport_mode and not self.release_sport_mode:
            problems.append("restore_sport_mode needs release_sport_mode: only a mode the node released can be "
                            "restored")
        if self.sport_mode_lying_timeout_s <= 0:
            problems.append(f"sport_mode_lying_timeout_s must be positive, got {self.sport_mode_lying_timeout_s}")
        if problems:
            raise ParamError("; ".join(problems))
        return self

    def _go1_problems(self) -> list[str]:
        """The Go1's UDP link: ports, peer address, the interface that reaches it, Go2-only choices."""
        problems = []
        if self.restore_sport_mode:
            problems.append("restore_sport_mode is for the Go2 only; set it false")
        if self.release_sport_mode:
            problems.append("release_sport_mode is for the Go2 only: the Go1 leaves sport mode with its remote "
                            "(L2+A, L2+B, then L1+L2+start for low-level mode); set it false")
        for name in ("udp_peer_port", "udp_local_port"):
            if not 1 <= getattr(self, name) <= 65535:
                problems.append(f"{name} {getattr(self, name)} is outside 1..65535")
        try:
            ipaddress.IPv4Address(self.udp_peer_ip)
        except ValueError:
            problems.append(f"udp_peer_ip {self.udp_peer_ip!r} is not an IPv4 address (127.0.0.1: the safety monitor)")
        else:
            if (problem := udp_peer_problem(self.network_interface, self.udp_peer_ip)) is not None:
                problems.append(problem)
            if self.udp_peer_ip.startswith("127.") and self.udp_local_port == self.udp_peer_port:
                problems.append(f"udp_local_port and udp_peer_port are both {self.udp_local_port} on this machine: "
                                "the node's socket and its peer's need two ports")
        if self.damping_kd > go1_wire.KD_MAX:
            problems.append(f"damping_kd {self.damping_kd:g} is above {go1_wire.KD_MAX:g}, the most a Go1 LowCmd "
                            "carries")
        if self.robot_reply_timeout_s <= 0:
            problems.append(f"robot_reply_timeout_s must be positive, got {self.robot_reply_timeout_s}")
        if not 0 <= self.power_protect_level <= 10:
            problems.append(f"power_protect_level must be in 0..10 (0 = off), got {self.power_protect_level}")
        return problems


def feedback_every_n_cycles(feedback_rate_hz: float, cycle_dt_s: float) -> int:
    """Publish JointState / Imu every n-th loop cycle: the highest rate not above `feedback_rate_hz`."""
    return max(1, math.ceil(1.0 / (feedback_rate_hz * cycle_dt_s) - 1e-9))  # 1e-9: 1/(10 Hz·0.02 s) is 5, not 6


def commands_per_policy_step(command_rate_hz: float, control_dt_s: float) -> int:
    """LowCmds written per policy step: the stream must divide the policy's period evenly, or the
    policy's steps would drift against the stream and its period would jitter by a command period."""
    ratio = command_rate_hz * control_dt_s
    n = round(ratio)
    if n < 1 or abs(ratio - n) > 1e-6:
        raise ParamError(f"command_rate_hz {command_rate_hz:g} is not a whole multiple of the policy's control "
                         f"rate {1 / control_dt_s:g} Hz (its contract's control_dt_s); use e.g. "
                         f"{round(500 * control_dt_s) / control_dt_s:g}")
    return n


PARAMETERS = parameter_table(PolicyNodeParams)  # name: (default, description), for the launch-file test


def from_values(values: Mapping[str, object]) -> PolicyNodeParams:
    """The checked parameters from {name: value}: unknown names, wrong types and values that cannot work
    are refused (ParamError)."""
    return read_params(PolicyNodeParams, values)
