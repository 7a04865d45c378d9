"""The Gazebo bridge's ROS participant on UDP alone, still discovering on this host only.

Under `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` rmw_fastrtps gives a participant shared memory and UDP, and
ignores `FASTDDS_BUILTIN_TRANSPORTS` and XML profiles. A shared-memory send waits on the receiver's port
lock, so a peer stopped while holding it (a SIGSTOPped or hung ROS process) stops the sender's Fast DDS event
thread, then the bridge's publisher behind it, and with the GIL the whole bridge
(`bench/results/bridge_stop_stalls_shm.md` has the stacks). A UDP send never waits on its receiver. So for the
bridge this asks rmw for no discovery setup of its own (`SYSTEM_DEFAULT`) and gives Fast DDS the LOCALHOST
setup as a default profile, UDP alone: `fastdds_udp_localhost.xml`. Peers that keep shared memory talk to the
bridge over UDP.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

PROFILE = Path(__file__).with_name("fastdds_udp_localhost.xml")
FASTDDS_RMWS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")
PROFILE_VARS = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def use_udp_alone_on_localhost(environ: MutableMapping[str, str] = os.environ) -> str:
    """Before rclpy starts: switch this process's participant to UDP alone when it would discover on localhost
    with Fast DDS and the user has no profile or static peers of their own. Returns what it did, for the log."""
    rmw = environ.get("RMW_IMPLEMENTATION") or "rmw_fastrtps_cpp"
    if rmw not in FASTDDS_RMWS:
        return f"DDS transports left to {rmw}"
    if environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST":
        return "DDS transports left as configured (discovery range is not LOCALHOST)"
    if any(environ.get(var) for var in PROFILE_VARS):
        return "DDS transports left to your Fast DDS profile"
    if environ.get("ROS_STATIC_PEERS"):
        return "DDS transports left as configured (ROS_STATIC_PEERS is set)"
    environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "SYSTEM_DEFAULT"
    environ["FASTDDS_DEFAULT_PROFILES_FILE"] = str(PROFILE)
    return f"ROS participant on UDP alone, discovery on this host ({PROFILE.name}): a stopped peer cannot hold it up"
