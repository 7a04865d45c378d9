"""The safety monitor's parameters: one table (`SafetyMonitorParams`), read and checked without ROS.

The thresholds are a second table, `surrogait_core.safety.SafetyThresholds`, under the
`thresholds.` prefix: their defaults come from the robot model, so the node declares them once it
knows the robot, and `thresholds_from_params` checks them. The control period and the soft joint
range come from the policy file's contract, never from here.
"""

from __future__ import annotations

import dataclasses

from surrogait_core.robot_links import robot_link
from surrogait_core.robot_spec import ROBOTS
from surrogait_core.runtime.node_params import (
    ParamError,
    check_interface,
    check_realtime_priority,
    param,
    parameter_table,
)
from surrogait_core.wire import go1_wire
from surrogait_core.wire.network_interface import udp_peer_problem


@dataclasses.dataclass(frozen=True)
class SafetyMonitorParams:
    robot: str = param("go2", "robot model (its MJCF gives the limits and the leg kinematics); go2 watches the "
                              "DDS wire, go1 is the gateway of the UDP link (surrogait_safety.go1_gateway)")
    dds_domain: int = param(1, "unitree_sdk2 DDS domain of rt/lowstate and rt/lowcmd (robot 0, rehearsal 1); go2")
    network_interface: str = param("lo", "network interface to the robot: unitree_sdk2 DDS (go2), or the one with "
                                         "an address in the robot's subnet (go1); lo in rehearsal")
    udp_robot_ip: str = param(go1_wire.ROBOT_IP, "go1: the robot's low-level UDP address (127.0.0.1 in rehearsal)")
    udp_robot_port: int = param(go1_wire.ROBOT_PORT, "go1: the robot's low-level UDP port")
    udp_robot_local_port: int = param(go1_wire.LOCAL_PORT, "go1: this gateway's port towards the robot")
    udp_policy_port: int = param(go1_wire.MONITOR_POLICY_PORT, "go1: the port (127.0.0.1) the policy node sends "
                                                                "its LowCmds to; its LowStates come back from it")
    udp_estimator_port: int = param(go1_wire.ESTIMATOR_LOWSTATE_PORT, "go1: every LowState is also forwarded to "
                                                                       "127.0.0.1 at this port (0 = none)")
    allow_lowstate_without_crc: bool = param(False, "go2: judge rt/lowstate samples whose CRC fails: ONLY for a "
                                                    "simulator that leaves LowState's crc unset; never on the robot")
    diagnostics_period_s: float = param(1.0, "period of the monitor's /diagnostics (latched state, input issues), s")
    udp_record_port: int = param(go1_wire.RECORDER_PORT, "go1: every LowState from the robot and every LowCmd "
                                                          "sent to it is also copied to 127.0.0.1 at this port, "
                                                          "for the session recorder (0 = none)")
    check_rate_hz: float = param(200.0, "rate of the checks, Hz (20..2000, at least the policy's control rate)")
    realtime_priority: int = param(0, "SCHED_FIFO priority of the process, 1..99 (0 = normal scheduling; needs "
                                      "root or CAP_SYS_NICE)")
    odom_timeout_s: float = param(0.2, "the estimator's height older than this: the height from leg kinematics, s")
    policy_path: str = param("", "the policy file the policy node runs: the control period and the soft joint "
                                 "range come from its contract")
    fault_log_path: str = param("runs/safety/fault_log_{stamp}.jsonl", "JSON-lines fault log; {stamp} becomes the "
                                                                        "start time (UTC)")

    def validate(self) -> None:
        """Values the monitor cannot run with raise ParamError (run by `read_params`)."""
        if self.robot not in ROBOTS:
            raise ParamError(f"parameter 'robot' is {self.robot!r}; expected one of {', '.join(ROBOTS)}")
        check_realtime_priority(self.realtime_priority)
        check_interface(self.network_interface)
        if robot_link(self.robot).monitor_is_gateway:
            if (problem := udp_peer_problem(self.network_interface, self.udp_robot_ip)) is not None:
                raise ParamError(f"parameters 'network_interface' / 'udp_robot_ip': {problem}")
            ports = {"udp_robot_port": self.udp_robot_port, "udp_robot_local_port": self.udp_robot_local_port,
                     "udp_policy_port": self.udp_policy_port, "udp_estimator_port": self.udp_estimator_port,
                     "udp_record_port": self.udp_record_port}
            for name, port in ports.items():
                if not (0 if name in ("udp_estimator_port", "udp_record_port") else 1) <= port <= 65535:
                    raise ParamError(f"parameter {name!r} must be a UDP port 1..65535, got {port!r}")
            if self.udp_policy_port in (self.udp_estimator_port, self.udp_robot_local_port, self.udp_record_port):
                raise ParamError(f"parameter 'udp_policy_port' {self.udp_policy_port} is also used for another "
                                 "socket of the gateway: give each its own port")
        if not 0 <= self.dds_domain <= 232:
            raise ParamError(f"parameter 'dds_domain' must be an integer 0..232, got {self.dds_domain!r}")
        if self.diagnostics_period_s <= 0:
            raise ParamError(f"parameter 'diagnostics_period_s' must be positive, got {self.diagnostics_period_s!r}")
        if not 20.0 <= self.check_rate_hz <= 2000.0:
            raise ParamError(f"parameter 'check_rate_hz' must be 20..2000 Hz, got {self.check_rate_hz!r}")
        if not self.policy_path:
            raise ParamError("parameter 'policy_path' is empty: set it to the policy file the policy node runs; "
                             "the monitor reads its control period and soft joint range from the contract")


PARAMETERS = parameter_table(SafetyMonitorParams)  # name: (default, description); the thresholds come on top
