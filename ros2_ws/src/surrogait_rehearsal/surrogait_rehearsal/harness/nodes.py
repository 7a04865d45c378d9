"""The rehearsal's node set: which processes play which part, their packages' parameters files, each robot's link.

A node's name is its console script, its ROS node name and the section of its parameters file. What differs
between the robots is data (`REHEARSAL_ROBOTS`): the simulator that plays the robot's end of its wire, the
line each node logs once it is up, and the link parameters that put every node of a rehearsal on the same
wire (the Go2's DDS domain, or the Go1's UDP ports).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[5]
PACKAGES = REPO_ROOT / "ros2_ws" / "src"
SHIPPED_POLICY = "{robot}_trot.onnx"  # in surrogait_bringup's policies/


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """One node of the rehearsal: its name is the console script, the ROS node and the YAML section."""

    name: str
    module: str  # the console script's module (its main()), for a package installed without its scripts
    params_file: Path  # the package's parameters file: what the launch file (and every rehearsal) gives it
    required: bool  # a rehearsal session needs it (a session skips the others when they are not installed)
    renders: bool = False  # it films the session (offscreen OpenGL); the robot's nodes never render


# Every process a rehearsal starts by name, in start order.
NODES: dict[str, NodeSpec] = {spec.name: spec for spec in (
    NodeSpec("go2_sim", "surrogait_rehearsal.sim.mujoco.node", PACKAGES / "surrogait_rehearsal/config/go2_sim.yaml",
             True, renders=True),
    NodeSpec("go1_sim", "surrogait_rehearsal.sim.mujoco.go1_node",
             PACKAGES / "surrogait_rehearsal/config/go1_sim.yaml", True, renders=True),
    # The Gazebo rehearsal (launch/go2_gazebo.launch.py; `demo --simulator gazebo*`): the MuJoCo stand-in for
    # gz sim + ros_gz_bridge, and the bridge from Gazebo's topics to the Go2's wire.
    NodeSpec("gz_standin", "surrogait_rehearsal.sim.gazebo.standin_node",
             PACKAGES / "surrogait_rehearsal/config/gz_standin.yaml", True, renders=True),
    NodeSpec("gazebo_bridge", "surrogait_rehearsal.sim.gazebo.bridge_node",
             PACKAGES / "surrogait_rehearsal/config/gazebo_bridge.yaml", True),
    NodeSpec("estimator_node", "surrogait_estimator.estimator_node",
             PACKAGES / "surrogait_estimator/config/estimator.yaml", False),
    NodeSpec("safety_monitor", "surrogait_safety.safety_monitor_node",
             PACKAGES / "surrogait_safety/config/safety_monitor.yaml", False),
    NodeSpec("policy_node", "surrogait_policy.policy_node", PACKAGES / "surrogait_policy/config/policy_node.yaml",
             True),
    # Every session's MCAP file (surrogait_recorder), as the launch files start it beside the stack.
    NodeSpec("session_recorder", "surrogait_recorder.session_recorder_node",
             PACKAGES / "surrogait_recorder/config/session_recorder.yaml", False),
)}
# The robot's own stack, as launch/<robot>_robot.launch.py starts it (and every rehearsal beside its simulator).
DEPLOYMENT_NODES = ("estimator_node", "safety_monitor", "policy_node")
# What a rehearsal session sets over a package's parameters file, and nothing else: the link that puts every
# process on the rehearsal's wire, the policy file, and where a node records.
SESSION_PARAMS = frozenset({
    "robot", "dds_domain", "network_interface", "udp_host", "udp_port", "udp_tap_port", "udp_robot_ip",
    "udp_robot_port", "udp_robot_local_port", "udp_policy_port", "udp_estimator_port", "udp_peer_ip",
    "udp_peer_port", "udp_local_port", "udp_lowstate_port", "udp_record_port", "policy_path", "fault_log_path",
    "log_path", "video_path", "timing_log_path", "output_path", "attach_files",
    # what the wire's foot sensors report: a simulator newtons, a real robot raw counts (the packages' default)
    "foot_force_units",
})


@dataclasses.dataclass(frozen=True)
class Go1Ports:
    """The UDP ports of one Go1 rehearsal on 127.0.0.1 (the robot's side played by the simulator)."""

    robot: int  # the simulated robot (the Go1's 8007)
    monitor_robot_side: int  # the gateway's socket towards the robot (8080 on a robot)
    policy: int  # the gateway's socket the policy node sends to (8017)
    policy_local: int  # the policy node's SDK socket (8081)
    estimator: int  # where the gateway forwards LowState for the estimator (8019)
    tap: int  # the simulator's copy of its traffic, for an observer (rehearsal only)
    recorder: int  # where the gateway copies every packet for the session recorder (8021)


def go1_ports(domain: int) -> Go1Ports:
    """Ports derived from the rehearsal's ROS domain, so that rehearsals on different domains never collide
    (and none uses the robot's own 8007/8080, which a vendor tool on this machine may hold)."""
    base = 21000 + 10 * domain
    return Go1Ports(base, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6)


# The rehearsal's simulators report foot force in newtons (a real robot: raw sensor counts, the nodes' built-in
# default, calibrated per robot: docs/robot.md); so every rehearsal tells the nodes that read it.
SIMULATED_FOOT_FORCE = {"foot_force_units": "newtons"}


def _go2_link(domain: int) -> dict[str, dict]:
    """unitree_sdk2 DDS: every process on DDS domain `domain`, on loopback."""
    link = {"dds_domain": domain, "network_interface": "lo"}
    nodes = {name: dict(link) for name in ("go2_sim", "gazebo_bridge", *DEPLOYMENT_NODES, "session_recorder")}
    for name in ("policy_node", "estimator_node"):
        nodes[name].update(SIMULATED_FOOT_FORCE)
    return nodes


def _go1_link(domain: int) -> dict[str, dict]:
    """unitree_legged_sdk UDP on 127.0.0.1, the safety monitor the link's gateway, on the ports of `domain`."""
    ports = go1_ports(domain)
    return {
        "go1_sim": {"udp_host": "127.0.0.1", "udp_port": ports.robot, "udp_tap_port": ports.tap},
        "safety_monitor": {"robot": "go1", "network_interface": "lo", "udp_robot_ip": "127.0.0.1",
                           "udp_robot_port": ports.robot, "udp_robot_local_port": ports.monitor_robot_side,
                           "udp_policy_port": ports.policy, "udp_estimator_port": ports.estimator,
                           "udp_record_port": ports.recorder},
        "policy_node": {"robot": "go1", "network_interface": "lo", "udp_peer_ip": "127.0.0.1",
                        "udp_peer_port": ports.policy, "udp_local_port": ports.policy_local, **SIMULATED_FOOT_FORCE},
        "estimator_node": {"robot": "go1", "udp_lowstate_port": ports.estimator, **SIMULATED_FOOT_FORCE},
        "session_recorder": {"robot": "go1", "udp_record_port": ports.recorder},
    }


@dataclasses.dataclass(frozen=True)
class RehearsalRobot:
    """What a rehearsal needs to know about one robot."""

    name: str
    sim_node: str  # the MuJoCo simulator that plays the robot's end of its wire
    ready_lines: Mapping[str, str]  # each node's log line once it is up on this robot's link
    link: Callable[[int], dict[str, dict]]  # domain -> each node's link parameters
    wire: Callable[[int], str]  # domain -> where the rehearsal's wire runs, in words
    gazebo: bool  # the Gazebo bridge plays this robot's wire (a Gazebo rehearsal exists)


REHEARSAL_ROBOTS: dict[str, RehearsalRobot] = {robot.name: robot for robot in (
    RehearsalRobot("go2", "go2_sim",
                   {"go2_sim": "Go2 simulator:", "gz_standin": "Gazebo stand-in:", "gazebo_bridge": "Gazebo bridge:",
                    "estimator_node": "state estimator for go2", "safety_monitor": "watching rt/lowstate",
                    "policy_node": "unitree_sdk2 DDS domain", "session_recorder": "session recorder: writing"},
                   _go2_link, lambda domain: f"DDS domain {domain} on lo", gazebo=True),
    RehearsalRobot("go1", "go1_sim",
                   {"go1_sim": "Go1 simulator:", "estimator_node": "state estimator for go1",
                    "safety_monitor": "gateway ", "policy_node": "unitree_legged_sdk UDP link to",
                    "session_recorder": "session recorder: writing"},
                   _go1_link, lambda domain: f"Go1 UDP on 127.0.0.1 ports {go1_ports(domain).robot}..",
                   gazebo=False),
)}


def rehearsal_robot(robot: str) -> RehearsalRobot:
    if robot not in REHEARSAL_ROBOTS:
        raise ValueError(f"no rehearsal for robot {robot!r}; expected one of {', '.join(REHEARSAL_ROBOTS)}")
    return REHEARSAL_ROBOTS[robot]


def sim_node(robot: str) -> str:
    """The rehearsal simulator of `robot`: the node that plays that robot's side of its wire."""
    return rehearsal_robot(robot).sim_node


def ready_line(name: str, robot: str = "go2") -> str:
    """The line node `name` logs once it is up on `robot`'s link."""
    return rehearsal_robot(robot).ready_lines[name]


def link_params(robot: str, domain: int) -> dict[str, dict]:
    """Each rehearsal node's link parameters: the Go2's DDS domain `domain` on lo, or the Go1's UDP ports
    of that domain (`go1_ports`: never the robot's own 8007/8080)."""
    return rehearsal_robot(robot).link(domain)


def shipped_policy_path(robot: str = "go2") -> Path:
    """The shipped policy of `robot`, where the deployment installs it (surrogait_bringup), not the trainer."""
    from surrogait_bringup.policies import shipped_policy

    return shipped_policy(SHIPPED_POLICY.format(robot=robot))


def write_params(name: str, params: Mapping, path: Path, package_params: bool = False) -> Path:
    """A parameters file for node `name`: `params` over its package's parameters file (`package_params`,
    as the launch file and every rehearsal session start it) or over the node's built-in defaults."""
    if package_params:
        data = yaml.safe_load(NODES[name].params_file.read_text())
    else:
        data = {name: {"ros__parameters": {}}}
    data[name]["ros__parameters"].update(params)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
