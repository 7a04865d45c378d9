"""The session recorder's parameters: one table (`SessionRecorderParams`), read and checked without ROS."""

from __future__ import annotations

import dataclasses
import time

from surrogait_core.robot_spec import ROBOTS
from surrogait_core.runtime.node_params import ParamError, check_interface, param, parameter_table
from surrogait_core.wire import go1_wire


@dataclasses.dataclass(frozen=True)
class SessionRecorderParams:
    robot: str = param("go2", "the robot whose wire is recorded: go2 (unitree_sdk2 DDS rt/lowstate, rt/lowcmd) or "
                              "go1 (the UDP packets the safety monitor's gateway copies to udp_record_port)")
    output_path: str = param("runs/sessions/session_{stamp}.mcap", "the MCAP file; {stamp} becomes the start time "
                                                                    "(UTC); relative paths from the working directory")
    dds_domain: int = param(1, "go2: unitree_sdk2 DDS domain of rt/lowstate and rt/lowcmd (robot 0, rehearsal 1)")
    network_interface: str = param("lo", "go2: the network interface to the robot's DDS (lo in rehearsal)")
    udp_record_port: int = param(go1_wire.RECORDER_PORT, "go1: the port (127.0.0.1) the safety monitor's gateway "
                                                          "copies every LowState and LowCmd to (0 = no wire)")
    record_hz: float = param(50.0, "how often the pending messages of every topic and the Go2's wire are taken and "
                                   "written (between takes ROS keeps 500 of each topic, DDS 512 wire samples), Hz")
    policy_path: str = param("", "the policy the session runs: its path and sha256 go into the file's metadata")
    attach_files: str = param("", "comma-separated files attached to the recording when it ends, if they exist "
                                  "(the safety monitor's fault log)")

    def validate(self) -> None:
        if self.robot not in ROBOTS:
            raise ParamError(f"parameter 'robot' is {self.robot!r}; expected one of {', '.join(ROBOTS)}")
        if not self.output_path.endswith(".mcap"):
            raise ParamError(f"parameter 'output_path' {self.output_path!r}: give a file name ending in .mcap")
        if not 0 <= self.dds_domain <= 232:
            raise ParamError(f"parameter 'dds_domain' must be a DDS domain 0..232, got {self.dds_domain!r}")
        if self.robot == "go2":
            check_interface(self.network_interface)
        if not 0 <= self.udp_record_port <= 65535:
            raise ParamError(f"parameter 'udp_record_port' must be a UDP port 1..65535 (0 = none), "
                             f"got {self.udp_record_port!r}")
        if not 1.0 <= self.record_hz <= 1000.0:
            raise ParamError(f"parameter 'record_hz' must be within 1..1000 Hz, got {self.record_hz!r}")


PARAMETERS = parameter_table(SessionRecorderParams)


def expand_output_path(path: str) -> str:
    """`{stamp}` becomes the UTC start time, so every session gets its own file."""
    return path.replace("{stamp}", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
