"""Every surrogait node's ROS participant on UDP alone: no Fast DDS shared memory between control processes.

A Fast DDS shared-memory send opens the receiver's port under a lock (its named mutex), while the writer's own
mutex is held. Two ways that stops a control loop:

- Fast DDS 2.14 (ROS 2 Jazzy) checks a port's health each time a participant opens it, and on a healthy idle
  port the check waits out its timeout, ~333 ms (eProsima/Fast-DDS#6535). A new reader (a node starting, or a
  `ros2 topic echo` on the robot) makes every writer that matches it open its port: measured in Jazzy
  rehearsals (docs/rehearsal-log.md, 2026-12-05), the simulator's physics loop blocked 330-350 ms inside
  `publish` in 4 of 6 sessions, both CPUs idle, its discovery thread in `open_port_internal` holding the
  writer's mutex.
- A peer stopped while it holds a port's lock (a SIGSTOPped or hung process) holds up every sender to that port
  (bench/results/bridge_stop_stalls_shm.md).

rclpy's `publish` keeps the interpreter lock while it blocks, so a node's whole process stops with it. A UDP send
never waits on its receiver, and the messages between these nodes are small. So, before rclpy starts, a node
switches its participant to UDP alone, with the same discovery, where that changes nothing else: Fast DDS is the
middleware and the user has no Fast DDS profile or static peers of their own. Under LOCALHOST rmw_fastrtps builds
the participant itself and ignores profiles, so the range becomes SYSTEM_DEFAULT with a profile that rebuilds
LOCALHOST's discovery (`fastdds_udp_localhost.xml`); under SUBNET (Jazzy's default) a profile with Fast DDS's
defaults less shared memory (`fastdds_udp.xml`). Peers that keep shared memory talk to these nodes over UDP.

On this host a participant also announces itself every 0.5 s, not every 3 s (Fast DDS's default). A participant's
first announcement leaves before it listens: Fast DDS's `RTPSParticipantImpl::enable` sends it, then registers its
receivers, and a datagram that arrives in between is read and dropped. A peer already up answers a newcomer's first
announcement at once, and only once, so on loopback its answer is lost in that window now and then; the newcomer
then learns of the peer only at the peer's next periodic announcement, after the peer's five initial ones are over.
Measured in rehearsal start-ups (Session.start, go2_sim beside the recorder, 20 runs): the simulator's ground truth
reached the harness's operator 1.0-1.9 s after the start in 9 and 3.6 s in 11, the simulator having missed the
operator's answer, and found the operator only at its 3 s announcement; with the operator announcing every 1 s the
late ones came at 1.6 s. So the nodes' localhost profile and the harness's own participant
(`frequent_announcements`, `fastdds_announcements.xml`) announce every 0.5 s: at most half a second lost, for a few
hundred bytes per peer per announcement on loopback.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path

LOCALHOST_PROFILE = Path(__file__).with_name("fastdds_udp_localhost.xml")
SUBNET_PROFILE = Path(__file__).with_name("fastdds_udp.xml")
ANNOUNCEMENTS_PROFILE = Path(__file__).with_name("fastdds_announcements.xml")
FASTDDS_RMWS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")
# Fast DDS 3 (Kilted) reads the first (and warns that the second is deprecated), Fast DDS 2 (Jazzy) only the second.
PROFILE_VARS = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def library_dirs(environ: MutableMapping[str, str] = os.environ) -> list[Path]:
    """Where the middleware's libraries are found: this interpreter's prefix (ROS wheels), each ROS prefix
    (`AMENT_PREFIX_PATH`: /opt/ros/<distro> on apt installs), `LD_LIBRARY_PATH`."""
    prefixes = [sys.prefix, *environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
    dirs = [Path(p) / "lib" for p in prefixes if p]
    return dirs + [Path(d) for d in environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]


def fast_dds_2(dirs: Iterable[Path]) -> bool:
    """Whether the Fast DDS found is version 2 (libfastrtps.so.2, ROS 2 Jazzy and older), which reads its default
    profile from FASTRTPS_DEFAULT_PROFILES_FILE only."""
    return any(next(d.glob("libfastrtps.so.2*"), None) is not None for d in dirs if d.is_dir())


def use_udp_alone(environ: MutableMapping[str, str] = os.environ, dirs: Iterable[Path] | None = None) -> str:
    """Before rclpy starts: put this process's participant on UDP alone, discovery unchanged, where that changes
    nothing else (module docstring). `dirs`: where to look for Fast DDS 2 (default `library_dirs`). Returns what
    it did, for the node's log."""
    rmw = environ.get("RMW_IMPLEMENTATION") or "rmw_fastrtps_cpp"
    if rmw not in FASTDDS_RMWS:
        return f"DDS transports left to {rmw}"
    if any(environ.get(var) for var in PROFILE_VARS):
        return "DDS transports left to your Fast DDS profile"
    if environ.get("ROS_STATIC_PEERS"):
        return "DDS transports left as configured (ROS_STATIC_PEERS is set)"
    discovery = environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") or "SUBNET"
    if discovery == "LOCALHOST":
        environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "SYSTEM_DEFAULT"
        profile = LOCALHOST_PROFILE
    elif discovery == "SUBNET":
        profile = SUBNET_PROFILE
    else:
        return f"DDS transports left as configured (discovery range {discovery})"
    environ[PROFILE_VARS[0]] = str(profile)
    if fast_dds_2(library_dirs(environ) if dirs is None else dirs):
        environ[PROFILE_VARS[1]] = str(profile)
    where = "this host" if profile is LOCALHOST_PROFILE else "the subnet"
    return f"ROS participant on UDP alone, discovery on {where} ({profile.name}): no shared-memory port lock"


@contextlib.contextmanager
def frequent_announcements(environ: MutableMapping[str, str] = os.environ,
                           dirs: Iterable[Path] | None = None) -> Iterator[bool]:
    """Around the creation of a process's ROS participant that is not a node's (the rehearsal harness's operator):
    Fast DDS's default profile is `fastdds_announcements.xml` (the participant announces itself every 0.5 s, its
    transports and discovery range as rmw_fastrtps builds them), then `environ` is as it was, so the processes this
    one starts do not inherit it. Yields whether it applied: only with Fast DDS and no Fast DDS profile of the user's.

    rmw_fastrtps starts from Fast DDS's default profile under every range, LOCALHOST included (there it replaces
    only the transports and initial peers), so the period applies (measured: with a 1 s profile the operator
    announced itself every 1 s under LOCALHOST). Fast DDS reads its default profile once per process, at its first
    participant: one made before without it leaves every later one at Fast DDS's 3 s; one made with it leaves the
    profile in place for the process's later participants (the next operator)."""
    rmw = environ.get("RMW_IMPLEMENTATION") or "rmw_fastrtps_cpp"
    if rmw not in FASTDDS_RMWS or any(environ.get(var) for var in PROFILE_VARS):
        yield False
        return
    names = PROFILE_VARS if fast_dds_2(library_dirs(environ) if dirs is None else dirs) else PROFILE_VARS[:1]
    for name in names:
        environ[name] = str(ANNOUNCEMENTS_PROFILE)
    try:
        yield True
    finally:
        for name in names:
            environ.pop(name, None)
