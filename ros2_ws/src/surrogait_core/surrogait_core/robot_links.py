"""Each robot's low-level link, as data: which protocol carries its commands and states, and what that means.

The robot's body (kinematics, inertia, limits, default pose) is its MJCF (`robot_spec`); how a control computer
talks to it is here, one entry per robot. Code that speaks a protocol (the nodes' links, the rehearsal
simulators, the fault suite's observers) branches on `link.protocol`, never on the robot's name, so a robot
on a known protocol is one new entry.
"""

from __future__ import annotations

import dataclasses

from surrogait_core.robot_spec import ROBOTS, UnknownRobotError

DDS = "dds"  # unitree_sdk2: rt/lowcmd and rt/lowstate on DDS, every process a peer on the wire
UDP = "udp"  # unitree_legged_sdk: one LowCmd answered by one LowState, point to point over UDP


@dataclasses.dataclass(frozen=True)
class RobotLink:
    protocol: str  # DDS or UDP
    sdk: str  # the vendor SDK and its transport, in words
    lowstate: str  # what the robot's state messages are called on this link
    # The safety monitor is the link's gateway: a point-to-point link has room for one peer of the robot, so the
    # monitor holds it and forwards (docs/go1.md); on DDS every process sees the wire and the monitor watches it.
    monitor_is_gateway: bool


ROBOT_LINKS: dict[str, RobotLink] = {
    "go2": RobotLink(DDS, "unitree_sdk2 DDS", "rt/lowstate", monitor_is_gateway=False),
    "go1": RobotLink(UDP, "unitree_legged_sdk UDP", "LowState", monitor_is_gateway=True),
}
assert set(ROBOT_LINKS) == set(ROBOTS), "every robot with a description has a link, and no other"


def robot_link(robot: str) -> RobotLink:
    """`robot`'s link; UnknownRobotError naming the known robots."""
    if robot not in ROBOT_LINKS:
        raise UnknownRobotError(f"unknown robot {robot!r}: expected one of {', '.join(ROBOT_LINKS)}")
    return ROBOT_LINKS[robot]
