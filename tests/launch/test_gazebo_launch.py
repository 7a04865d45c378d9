"""go2_gazebo.launch.py (installed by surrogait_bringup), checked without Gazebo: what it starts and when, the
files it names, Gazebo's clock for every node, and that the three ends of the Gazebo bridge agree — the Go2
model's SDF (the gz topics it publishes and subscribes), ros_gz_bridge's topic list
(config/gazebo/ros_gz_bridge.yaml) and the `gazebo_bridge` node's topic parameters.

Gazebo, ros_gz and `ros2 launch` cannot be installed here, so nothing is started (the launch file runs
under launch_standin.py against the colcon-built workspace): a wrong gz topic or message type would
otherwise surface only as silence on a machine that has Gazebo.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from launch_files import GAZEBO_COMMANDS, yaml_parameters
from launch_standin import run_launch_file

from surrogait_core.interfaces import GAZEBO_BRIDGE_UP_LINE
from surrogait_core.robot_spec import SDK_LEG_ORDER, load_robot_spec
from surrogait_rehearsal.harness import gazebo as gazebo_rehearsal
from surrogait_rehearsal.sim.gazebo.bridge_config import PARAMETERS as BRIDGE_PARAMETERS
from surrogait_rehearsal.sim.gazebo.topics import GazeboTopics, gazebo_joint_name

OWN_TARGET = "make test-gazebo: the Gazebo path's rehearsals, a target of their own (scripts/run_tests.py)"

REPO = Path(__file__).resolve().parents[2]
# ros_gz_bridge's pairings for the types the bridge uses (ros_gz_bridge README, "supported message types").
ROS_GZ_TYPES = {
    "sensor_msgs/msg/JointState": "gz.msgs.Model",
    "sensor_msgs/msg/Imu": "gz.msgs.IMU",
    "geometry_msgs/msg/WrenchStamped": "gz.msgs.Wrench",
    "nav_msgs/msg/Odometry": "gz.msgs.Odometry",
    "std_msgs/msg/Float64": "gz.msgs.Double",
    "rosgraph_msgs/msg/Clock": "gz.msgs.Clock",
}
# What the Gazebo bridge writes (through rclpy's logger) once Gazebo's state flows.
BRIDGE_UP = f"[INFO] [1767225600.000000000] [gazebo_bridge]: {GAZEBO_BRIDGE_UP_LINE}: motor PD running, " \
            "rt/lowstate published"
ROBOT_NODES = ["estimator_node", "safety_monitor", "policy_node"]


@pytest.fixture
def started(ament_index):
    """What the launch file starts at once (Gazebo's side, the recorder)."""
    return run_launch_file(ament_index.share("surrogait_bringup") / "launch" / "go2_gazebo.launch.py")


@pytest.fixture
def launched(started):
    """Everything, once the Gazebo bridge has reported Gazebo's state flowing."""
    started.output("gazebo_bridge", BRIDGE_UP)
    return started


def nodes_by_executable(launched) -> dict:
    return {n.executable: n for n in launched.nodes}


def bridge_node_topics(launched) -> tuple[GazeboTopics, dict]:
    """The gazebo_bridge node's topics and parameters as launched: defaults, then its parameters in order."""
    node = nodes_by_executable(launched)["gazebo_bridge"]
    params = {name: default for name, (default, _) in BRIDGE_PARAMETERS.items()}
    for entry in node.parameters:
        params.update(yaml_parameters(Path(entry), node.name) if isinstance(entry, str) else entry)
    return GazeboTopics(**{name.removesuffix("_topic"): params[name] for name in BRIDGE_PARAMETERS
                           if name.endswith("_topic")}), params


def ros_gz_bridge_entries(launched) -> list[dict]:
    config = Path(nodes_by_executable(launched)["parameter_bridge"].inline_params["config_file"])
    entries = yaml.safe_load(config.read_text())
    assert isinstance(entries, list) and entries, f"{config}: expected a YAML list of topic pairs"
    return entries


def model_sdf(launched) -> Path:
    """The model the world includes (`model://go2`), resolved through the launch file's GZ_SIM_RESOURCE_PATH."""
    env = launched.environment
    world = ET.parse(gazebo_rehearsal.WORLD).getroot()
    uris = [e.text.strip() for e in world.iter("uri")]
    assert "model://go2" in uris, f"{gazebo_rehearsal.WORLD} does not include model://go2: {uris}"
    for folder in env["GZ_SIM_RESOURCE_PATH"].split(":"):
        path = Path(folder) / "go2" / "model.sdf"
        if path.is_file():
            return path
    raise AssertionError(f"model://go2 is not in GZ_SIM_RESOURCE_PATH {env['GZ_SIM_RESOURCE_PATH']}")


def test_it_starts_gz_sim_both_bridges_and_the_three_nodes(launched):
    nodes = nodes_by_executable(launched)
    assert set(nodes) == {"session_recorder", "parameter_bridge", "gazebo_bridge", "estimator_node", "safety_monitor",
                          "policy_node"}
    assert nodes["parameter_bridge"].package == "ros_gz_bridge"
    (gz,) = launched.processes
    assert gz.cmd[0] in GAZEBO_COMMANDS and gz.cmd[1] == "sim", gz.cmd
    assert "-s" in gz.cmd and "-r" in gz.cmd, "headless and running, as the demo starts it"
    files = [Path(a) for a in gz.cmd if a.startswith("/")]
    assert [f.resolve() for f in files] == [gazebo_rehearsal.WORLD.resolve()] and files[0].is_file(), files
    # The world includes the model, so the launch file spawns nothing (no ros_gz_sim create).
    assert model_sdf(launched).is_file()
    assert "ros_gz_sim" not in {n.package for n in nodes.values()}


def test_the_robots_nodes_start_once_the_bridge_reports_gazebo_up_and_only_then(started):
    """As the rehearsal harness starts them on the simulator's first ground truth: gz sim takes seconds to load,
    and a policy node or safety monitor started before would face a robot that does not answer."""
    assert [n.executable for n in started.nodes] == ["session_recorder", "parameter_bridge", "gazebo_bridge"]
    assert [p.cmd[1] for p in started.processes] == ["sim"]
    assert started.output("gazebo_bridge", "[INFO] [1.0] [gazebo_bridge]: Gazebo bridge: DDS domain 1 on lo") == []
    assert started.output("ros_gz_bridge", BRIDGE_UP) == [], "the Gazebo bridge's line, not another node's"
    assert [n.executable for n in started.output("gazebo_bridge", BRIDGE_UP, stream="stderr")] == ROBOT_NODES, \
        "the safety monitor before the policy node"
    assert started.output("gazebo_bridge", BRIDGE_UP) == [], "once: a later lapse and recovery starts nothing"


def test_the_gate_opens_on_either_stream(started):
    """rclpy's logger writes to stderr unless RCUTILS_LOGGING_USE_STDOUT=1."""
    assert [n.executable for n in started.output("gazebo_bridge", BRIDGE_UP, stream="stdout")] == ROBOT_NODES


def test_every_node_runs_on_gazebos_clock_which_is_bridged(launched):
    for node in launched.nodes:
        assert node.inline_params.get("use_sim_time") is True, f"{node.executable} is not on Gazebo's clock"
    clock = [e for e in ros_gz_bridge_entries(launched) if e["ros_topic_name"] == "/clock"]
    assert clock == [{"ros_topic_name": "/clock", "gz_topic_name": "/clock", "ros_type_name": "rosgraph_msgs/msg/Clock",
                      "gz_type_name": "gz.msgs.Clock", "direction": "GZ_TO_ROS"}]


def test_the_launch_file_and_the_demo_start_the_same_gazebo(launched):
    """The same files (the launch file's from the install space, symlinks into the source tree that the demo
    reads with --symlink-install)."""
    nodes = nodes_by_executable(launched)
    config = Path(nodes["parameter_bridge"].inline_params["config_file"])
    assert config.resolve() == gazebo_rehearsal.ROS_GZ_BRIDGE_CONFIG.resolve()
    model = Path("go2", "model.sdf")
    assert (Path(launched.environment["GZ_SIM_RESOURCE_PATH"]) / model).resolve() == gazebo_rehearsal.MODELS / model
    package_file = REPO / "ros2_ws" / "src" / "surrogait_rehearsal" / "config" / "gazebo_bridge.yaml"
    assert [p.resolve() for p in nodes["gazebo_bridge"].param_files] == [package_file], \
        "the package's file, as the demo starts it"


def test_ros_gz_bridge_carries_exactly_the_topics_the_bridge_node_uses(launched):
    topics, _ = bridge_node_topics(launched)
    joints = [gazebo_joint_name(n) for n in load_robot_spec("go2").joint_names]
    expected = {(topics.joint_states, "sensor_msgs/msg/JointState", "GZ_TO_ROS"),
                (topics.imu, "sensor_msgs/msg/Imu", "GZ_TO_ROS"),
                (topics.odometry, "nav_msgs/msg/Odometry", "GZ_TO_ROS")}
    wrench = "geometry_msgs/msg/WrenchStamped"
    expected |= {(topics.foot_force_topic(leg), wrench, "GZ_TO_ROS") for leg in SDK_LEG_ORDER}
    expected |= {(topics.joint_force_topic(j), "std_msgs/msg/Float64", "ROS_TO_GZ") for j in joints}
    expected.add(("/clock", "rosgraph_msgs/msg/Clock", "GZ_TO_ROS"))  # gz sim's clock, for use_sim_time
    entries = ros_gz_bridge_entries(launched)
    actual = [(e["ros_topic_name"], e["ros_type_name"], e["direction"]) for e in entries]
    assert len(actual) == len(set(actual)), "a topic bridged twice"
    assert set(actual) == expected, (f"missing {sorted(expected - set(actual))}; "
                                     f"not used by the bridge node {sorted(set(actual) - expected)}")
    for e in entries:
        assert e["gz_type_name"] == ROS_GZ_TYPES[e["ros_type_name"]], e


def test_the_gz_topics_are_the_ones_the_go2_model_publishes_and_subscribes(launched):
    root = ET.parse(model_sdf(launched)).getroot()
    model = root.find("model")
    name = model.get("name")
    published = {s.findtext("topic").strip() for s in model.iter("sensor") if s.findtext("topic")}
    plugins = {p.get("name", ""): p for p in model.iter("plugin")}
    joint_states = next(p for n, p in plugins.items() if n.endswith("JointStatePublisher"))
    odometry = next(p for n, p in plugins.items() if n.endswith("OdometryPublisher"))
    published |= {joint_states.findtext("topic").strip(), odometry.findtext("odom_topic").strip()}
    # gz-sim-apply-joint-force-system subscribes to /model/<model>/joint/<joint>/cmd_force.
    subscribed = {f"/model/{name}/joint/{p.findtext('joint_name').strip()}/cmd_force"
                  for p in model.iter("plugin") if p.get("name", "").endswith("ApplyJointForce")}
    entries = ros_gz_bridge_entries(launched)
    # /clock is the world's (gz sim publishes it for every world), not the model's
    out_of_gazebo = {e["gz_topic_name"] for e in entries if e["direction"] == "GZ_TO_ROS"} - {"/clock"}
    into_gazebo = {e["gz_topic_name"] for e in entries if e["direction"] == "ROS_TO_GZ"}
    assert out_of_gazebo <= published, \
        f"no publisher in {model_sdf(launched).name} for {sorted(out_of_gazebo - published)}"
    assert into_gazebo == subscribed, f"bridged {sorted(into_gazebo ^ subscribed)} without the model's counterpart"
    # What the bridge node assumes of the model: level-ground foot force direction, 3-D odometry (in 2-D
    # mode gz-sim leaves z at 0, so a fall would go unseen), every joint in the joint states.
    _, params = bridge_node_topics(launched)
    directions = {s.findtext("force_torque/measure_direction", "child_to_parent").strip()
                  for s in model.iter("sensor") if s.get("type") == "force_torque"}
    assert directions == {params["foot_force_measure_direction"]}
    assert odometry.findtext("dimensions").strip() == "3"
    listed = {j.text.strip() for j in joint_states.iter("joint_name")}
    assert not listed or listed >= {gazebo_joint_name(n) for n in load_robot_spec("go2").joint_names}


def test_the_demo_refuses_the_gazebo_rehearsal_naming_what_to_install(monkeypatch):
    """Where Gazebo and ros_gz_bridge are missing (as here), the demo names both and the way out."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(gazebo_rehearsal.GazeboUnavailable) as refused:
        gazebo_rehearsal.gazebo_commands()
    message = str(refused.value)
    assert all(hint in message for hint in gazebo_rehearsal.INSTALL_HINT.values()), message
    assert "--simulator gazebo-standin" in message
