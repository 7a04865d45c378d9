"""What each launch file starts, with which parameters and environment: plain Python, no `launch` import.

The launch files (`launch/*.launch.py`, installed under share/surrogait_bringup/launch) are thin shells:
they declare `launch_arguments(...)` and hand the values `ros2 launch` resolved to `build_stack`, whose
answer (`Stack`) they turn into `SetEnvironmentVariable`, `ExecuteProcess` and `Node` actions
(`surrogait_bringup.launch_description`). Every path comes from the installed share/ tree through the
ament index (`share_directory`), never from this file's location, so an installed workspace runs what
it installed.

Sessions:
- `robot`: the safety monitor, the state estimator and the policy node on a real Go2 (unitree_sdk2 DDS on
  the interface wired to it) or Go1 (UDP, the monitor as the link's gateway).
- `rehearsal`: the same three nodes and the robot's MuJoCo simulator on this machine.
- `gazebo`: the Go2 in Gazebo Harmonic through ros_gz_bridge and the Gazebo bridge node, and the three nodes.

Every session also starts the session recorder (surrogait_recorder, its own process at normal priority): one
MCAP file with the stack's topics and the robot's wire (launch arguments `record`, `record_path`).

In Gazebo the nodes run on Gazebo's clock (`use_sim_time`, with /clock bridged from Gazebo), and the robot's
three nodes start once the Gazebo bridge reports Gazebo's state flowing (`Stack.gate`), as the rehearsal
harness starts them on the simulator's first ground truth.

Our ROS traffic gets a ROS domain of its own (`ros_domain_id`, default `DEFAULT_ROS_DOMAIN_ID`) in every
session: on a Go2 the robot's own DDS participants live in domain 0, and ROS topics share DDS's topic
space there.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping

from surrogait_core.interfaces import GAZEBO_BRIDGE_UP_LINE

PACKAGE = "surrogait_bringup"
ROBOTS = ("go2", "go1")
SESSIONS = ("robot", "rehearsal", "gazebo")
DEFAULT_ROS_DOMAIN_ID = 1  # not 0: the Go2's own DDS (unitree_sdk2, its onboard ROS 2) is in domain 0
ROBOT_DDS_DOMAIN = 0  # the Go2's rt/lowstate and rt/lowcmd
REHEARSAL_DDS_DOMAIN = 1  # the simulators' wire, on lo
# ROS 2 maps a domain id to UDP ports; on Linux ids 0-101 and 215-232 are safe from the ephemeral port range.
VALID_ROS_DOMAIN_IDS = (*range(0, 102), *range(215, 233))
DRY_RUN_PARAMETER = "dry_run_gain_fraction"  # the policy node's suspended dry run (issue 35)


class BringupError(ValueError):
    """A launch argument that cannot work; the message says which, why, and what to pass instead."""


@dataclasses.dataclass(frozen=True)
class LaunchArgument:
    name: str
    default: str
    description: str
    choices: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class NodeLaunch:
    """One node: its package's console script, ROS name, parameter files (in order) then inline values."""

    package: str
    executable: str
    name: str
    parameters: tuple[str | dict, ...]


@dataclasses.dataclass(frozen=True)
class ProcessLaunch:
    """A process that is not a ROS node of ours (Gazebo's `gz sim`)."""

    cmd: tuple[str, ...]
    name: str


@dataclasses.dataclass(frozen=True)
class StartGate:
    """Nodes started only once process `after` has written a line containing `line` (stdout or stderr)."""

    after: str  # the ROS name of a node of Stack.nodes
    line: str
    nodes: tuple[NodeLaunch, ...]


@dataclasses.dataclass(frozen=True)
class Stack:
    environment: dict[str, str]
    processes: tuple[ProcessLaunch, ...]
    nodes: tuple[NodeLaunch, ...]  # started at once, in order
    gate: StartGate | None = None  # started later, in order


def share_directory(package: str) -> str:
    """The installed share/<package> directory, from the ament index (AMENT_PREFIX_PATH, which sourcing a
    workspace's install/setup.bash or /opt/ros/<distro>/setup.bash sets)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        return get_package_share_directory(package)
    except (PackageNotFoundError, OSError) as e:
        raise BringupError(f"package {package!r} is not installed where the ament index looks ({e}); build the "
                           "workspace (colcon build) and source its install/setup.bash") from e


def launch_arguments(session: str, robot: str | None = None) -> list[LaunchArgument]:
    """The arguments a launch file of `session` declares; `robot` fixed by a per-robot file (go2_robot.launch.py),
    None where the file takes either robot (robot.launch.py)."""
    _check_choice("session", session, SESSIONS)
    robots = ("go2",) if session == "gazebo" else ROBOTS if robot is None else (robot,)
    args = [
        LaunchArgument("robot", robots[0], "the robot: go2 (unitree_sdk2 DDS) or go1 (UDP through the safety "
                       "monitor)", robots),
        LaunchArgument("policy", "", "the exported ONNX policy (its contract travels in the file); relative paths "
                       "from the working directory; empty: the robot's shipped policy, "
                       "share/surrogait_bringup/policies/<robot>_trot.onnx"),
    ]
    if session == "robot":
        args.append(LaunchArgument("network_interface", "", "the interface wired to the robot, with an address in "
                                   "192.168.123.x (`ip -br addr`); empty: config/<robot>_robot/link.yaml's"))
    args += [
        LaunchArgument("dds_domain", "", "go2: unitree_sdk2's DDS domain of rt/lowstate and rt/lowcmd; empty: "
                       f"{ROBOT_DDS_DOMAIN} on the robot, {REHEARSAL_DDS_DOMAIN} in rehearsal (the Go1's link is UDP)"),
        LaunchArgument("ros_domain_id", str(DEFAULT_ROS_DOMAIN_ID), "ROS_DOMAIN_ID of the nodes' ROS traffic "
                       "(services, cmd_vel, odometry): not the robot's own DDS domain 0"),
        LaunchArgument(DRY_RUN_PARAMETER, "0", "a dry run with the motors' gains at this fraction of the "
                       "policy's, in [0, 1); 0 = off (needs a policy node with that parameter)"),
        LaunchArgument("record", "true", "record the session (its topics and the robot's wire) to an MCAP file, "
                       "with the session recorder", ("true", "false")),
        LaunchArgument("record_path", "", "the MCAP file ({stamp}: the start time); empty: "
                       "runs/sessions/session_{stamp}.mcap from the working directory"),
    ]
    return args


def build_stack(session: str, values: Mapping[str, str],
                share: Callable[[str], str] = share_directory) -> Stack:
    """What `session` starts for the resolved launch argument `values` (strings, as `ros2 launch` gives them;
    missing ones take their defaults). `share(package)` finds an installed package's share directory."""
    _check_choice("session", session, SESSIONS)
    defaults = {a.name: a.default for a in launch_arguments(session)}
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise BringupError(f"{session} launch: unknown argument(s) {', '.join(unknown)}; it takes "
                           f"{', '.join(defaults)}")
    args = {**defaults, **{k: str(v) for k, v in values.items()}}
    robot = args["robot"]
    _check_choice("robot", robot, ROBOTS if session != "gazebo" else ("go2",))
    bringup = share(PACKAGE)
    policy = _policy_path(args["policy"], robot, bringup)
    ros_domain_id = _ros_domain_id(args["ros_domain_id"])
    dry_run = _dry_run_fraction(args[DRY_RUN_PARAMETER])
    if robot == "go1" and args["dds_domain"]:
        raise BringupError("dds_domain applies to the Go2 only: the Go1's low-level link is UDP (leave it out)")

    def package_params(package: str, file: str) -> str:
        return os.path.join(share(package), "config", file)

    recorder_params = package_params("surrogait_recorder", "session_recorder.yaml")
    recorder_inline = {"policy_path": policy, **({"output_path": args["record_path"]} if args["record_path"] else {})}
    if args["record_path"] and not args["record_path"].endswith(".mcap"):
        raise BringupError(f"record_path {args['record_path']!r}: give a file name ending in .mcap")
    estimator = package_params("surrogait_estimator", "estimator.yaml")
    monitor = package_params("surrogait_safety", "safety_monitor.yaml")
    policy_node = package_params("surrogait_policy", "policy_node.yaml")
    policy_inline = {"policy_path": policy, **({DRY_RUN_PARAMETER: dry_run} if dry_run else {})}
    environment = {"ROS_DOMAIN_ID": str(ros_domain_id)}
    processes: tuple[ProcessLaunch, ...] = ()

    if session == "robot":
        link_dir = os.path.join(bringup, "config", f"{robot}_robot")
        link = os.path.join(link_dir, "link.yaml")
        link_inline = _robot_link_overrides(robot, args["network_interface"], args["dds_domain"])
        monitor_link = link_inline.get("safety_monitor", {})
        recorder = NodeLaunch("surrogait_recorder", "session_recorder", "session_recorder",
                              (recorder_params, link, {**link_inline.get("session_recorder", {}), **recorder_inline}))
        nodes = (
            *((recorder,) if args["record"] == "true" else ()),  # passive: it may start first, and sees everything
            # The safety monitor starts before the policy node: it must be watching (on the Go1: own the link)
            # before anything can move a motor.
            NodeLaunch("surrogait_safety", "safety_monitor", "safety_monitor",
                       (monitor, link, {**monitor_link, "policy_path": policy})),
            NodeLaunch("surrogait_estimator", "estimator_node", "estimator_node",
                       (estimator, link, *_dict_or_none(link_inline.get("estimator_node")))),
            NodeLaunch("surrogait_policy", "policy_node", "policy_node",
                       (policy_node, link, os.path.join(link_dir, "policy_node.yaml"),
                        {**link_inline.get("policy_node", {}), **policy_inline})),
        )
        return Stack(environment, processes, nodes)

    # Rehearsals: everything on this machine, ROS discovery kept on it too.
    environment["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    wire = {} if robot == "go1" else {"dds_domain": int(args["dds_domain"] or REHEARSAL_DDS_DOMAIN)}
    if robot == "go1":
        link = os.path.join(bringup, "config", "go1_rehearsal", "link.yaml")
        sim = NodeLaunch("surrogait_rehearsal", "go1_sim", "go1_sim",
                         (package_params("surrogait_rehearsal", "go1_sim.yaml"), link))
        linked = (link,)
    else:
        sim = NodeLaunch("surrogait_rehearsal", "go2_sim", "go2_sim",
                         (package_params("surrogait_rehearsal", "go2_sim.yaml"), wire))
        linked = ()
    recorder = NodeLaunch("surrogait_recorder", "session_recorder", "session_recorder",
                          (recorder_params, *linked, {**wire, **recorder_inline}))
    recording = (recorder,) if args["record"] == "true" else ()
    if session == "gazebo":
        sdf = os.path.join(share("surrogait_description"), "sdf")
        # Gazebo transport stays on this machine; gz sim finds model://go2 on the resource path.
        environment.update(GZ_IP="127.0.0.1", GZ_SIM_RESOURCE_PATH=os.path.join(sdf, "models"))
        processes = (ProcessLaunch(("gz", "sim", "-s", "-r", "-v", "2", os.path.join(sdf, "worlds", "go2_flat.sdf")),
                                   "gz_sim"),)
        simulator: tuple[NodeLaunch, ...] = (
            NodeLaunch("ros_gz_bridge", "parameter_bridge", "ros_gz_bridge",
                       ({"config_file": os.path.join(bringup, "config", "gazebo", "ros_gz_bridge.yaml")},)),
            NodeLaunch("surrogait_rehearsal", "gazebo_bridge", "gazebo_bridge",
                       (package_params("surrogait_rehearsal", "gazebo_bridge.yaml"), wire)),
        )
    else:
        simulator = (sim,)
    robot_nodes = (
        NodeLaunch("surrogait_estimator", "estimator_node", "estimator_node", (estimator, *linked, wire)),
        NodeLaunch("surrogait_safety", "safety_monitor", "safety_monitor",
                   (monitor, *linked, {**wire, "policy_path": policy})),
        NodeLaunch("surrogait_policy", "policy_node", "policy_node", (policy_node, *linked, {**wire, **policy_inline})),
    )
    if session == "gazebo":
        # Gazebo's clock for every node (bridged on /clock), and the robot's nodes only once Gazebo's state flows
        # through the bridge: gz sim takes seconds to load the world, a policy node started before would see no
        # robot and a safety monitor a silent one.
        on_sim_time = [dataclasses.replace(n, parameters=(*n.parameters, {"use_sim_time": True}))
                       for n in (*recording, *simulator, *robot_nodes)]
        first = len(recording) + len(simulator)
        return Stack(environment, processes, tuple(on_sim_time[:first]),
                     StartGate("gazebo_bridge", GAZEBO_BRIDGE_UP_LINE, tuple(on_sim_time[first:])))
    return Stack(environment, processes, (*recording, *simulator, *robot_nodes))


def _robot_link_overrides(robot: str, network_interface: str, dds_domain: str) -> dict[str, dict]:
    """Each node's values that the launch arguments put over config/<robot>_robot/link.yaml."""
    if robot == "go1":
        # Only the safety monitor, the link's gateway, has a socket on the robot's interface.
        return {"safety_monitor": {"network_interface": network_interface}} if network_interface else {}
    link: dict[str, object] = {}
    if network_interface:
        link["network_interface"] = network_interface
    if dds_domain:
        link["dds_domain"] = _int("dds_domain", dds_domain, 0, 232)
    names = ("session_recorder", "safety_monitor", "estimator_node", "policy_node")
    return {name: dict(link) for name in names} if link else {}


def _dict_or_none(value: dict | None) -> tuple[dict, ...]:
    return (value,) if value else ()


def _policy_path(given: str, robot: str, bringup_share: str) -> str:
    path = os.path.abspath(given) if given else os.path.join(bringup_share, "policies", f"{robot}_trot.onnx")
    if not os.path.isfile(path):
        raise BringupError(f"policy {path}: no such file; pass policy:=/path/to/policy.onnx (an exported ONNX "
                           "policy; `surrogait-train export` writes one)")
    return path


def _ros_domain_id(value: str) -> int:
    domain = _int("ros_domain_id", value, 0, 232)
    if domain not in VALID_ROS_DOMAIN_IDS:
        raise BringupError(f"ros_domain_id {domain}: ROS 2 on Linux takes 0-101 or 215-232 (others collide with "
                           "the ephemeral port range)")
    return domain


def _dry_run_fraction(value: str) -> float:
    try:
        fraction = float(value)
    except ValueError:
        raise BringupError(f"{DRY_RUN_PARAMETER} {value!r}: expected a number in [0, 1)") from None
    if not (math.isfinite(fraction) and 0.0 <= fraction < 1.0):
        raise BringupError(f"{DRY_RUN_PARAMETER} {value!r}: expected a number in [0, 1) (0 = no dry run)")
    if fraction and DRY_RUN_PARAMETER not in policy_node_parameters():
        raise BringupError(f"{DRY_RUN_PARAMETER}:={value}: this policy node has no dry-run mode (it does not "
                           f"declare {DRY_RUN_PARAMETER}); the motors would get the policy's full gains. Update "
                           "surrogait_policy, or leave the argument out")
    return fraction


def policy_node_parameters() -> set[str]:
    """The parameters the installed policy node declares (its parameter table)."""
    from surrogait_policy.params import PARAMETERS

    return set(PARAMETERS)


def _int(name: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise BringupError(f"{name} {value!r}: expected an integer in [{low}, {high}]") from None
    if not low <= number <= high:
        raise BringupError(f"{name} {number}: expected an integer in [{low}, {high}]")
    return number


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise BringupError(f"{name} {value!r}: expected one of {', '.join(choices)}")
