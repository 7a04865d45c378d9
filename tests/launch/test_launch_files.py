"""The launch files start real, installed executables with parameters those nodes declare.

`ros2 launch` cannot be installed here, so the files are parsed (launch_files.py) and every
node they name is checked against the installed console scripts and the node's own parameter
declarations. A package a launch file names but that is not installed fails the test, except the
few Gazebo packages of `launch_files.GAZEBO_PACKAGES` (not installable here), whose executables
and parameters are checked against that documented list instead.
"""

from pathlib import Path

import pytest
from launch_files import (
    GAZEBO_PACKAGES,
    console_script,
    declared_parameters,
    parse_launch_file,
    yaml_parameters,
    yaml_sections,
)

REPO = Path(__file__).resolve().parents[2]
LAUNCH_DIR = REPO / "launch"
LAUNCH_FILES = sorted(LAUNCH_DIR.glob("*.launch.py"))


def launched(path):
    return [(path.name, node) for node in parse_launch_file(path)]


ALL_NODES = [item for path in LAUNCH_FILES for item in launched(path)]


def node_id(item):
    return f"{item[0]}:{item[1].executable}"


GO2_FILES = [p for p in LAUNCH_FILES if p.name.startswith("go2_")]
GO1_FILES = [p for p in LAUNCH_FILES if p.name.startswith("go1_")]


@pytest.mark.parametrize("robot", ["go2", "go1"])
def test_the_robot_and_rehearsal_launch_files_exist_and_start_what_they_should(robot):
    assert {p.name for p in LAUNCH_FILES} >= {f"{robot}_robot.launch.py", f"{robot}_rehearsal.launch.py"}
    on_robot = {n.executable for n in parse_launch_file(LAUNCH_DIR / f"{robot}_robot.launch.py")}
    rehearsal = {n.executable for n in parse_launch_file(LAUNCH_DIR / f"{robot}_rehearsal.launch.py")}
    assert on_robot == {"policy_node", "estimator_node", "safety_monitor"}
    assert rehearsal == on_robot | {f"{robot}_sim"}, "the rehearsal runs the robot's nodes plus the simulator"


SURROGAIT_NODES = [item for item in ALL_NODES if item[1].package not in GAZEBO_PACKAGES]
GAZEBO_NODES = [item for item in ALL_NODES if item[1].package in GAZEBO_PACKAGES]


@pytest.mark.parametrize("item", SURROGAIT_NODES, ids=node_id)
def test_each_node_is_an_installed_executable(item):
    _, node = item
    entry_point = console_script(node.package, node.executable)
    assert callable(entry_point.load())


@pytest.mark.parametrize("item", GAZEBO_NODES, ids=node_id)
def test_each_gazebo_node_is_a_documented_executable_with_documented_parameters(item):
    launch_file, node = item
    executables = GAZEBO_PACKAGES[node.package]
    assert node.executable in executables, f"{launch_file}: {node.package} has no executable {node.executable!r}"
    unknown = sorted(set(node.inline_params) - executables[node.executable])
    assert not unknown, f"{launch_file}: {node.executable} does not take {unknown}"
    assert not node.param_files, "Gazebo nodes get their few parameters inline"
    for name, value in node.inline_params.items():
        if name.endswith("_file") or name == "file":
            assert Path(value).is_file(), f"{launch_file}: {node.executable} {name} {value} does not exist"


@pytest.mark.parametrize("item", SURROGAIT_NODES, ids=node_id)
def test_each_parameter_file_exists_and_sets_only_declared_parameters(item):
    launch_file, node = item
    assert node.param_files or node.inline_params, f"{launch_file}: {node.executable} gets no parameters"
    declared = declared_parameters(console_script(node.package, node.executable))
    assert declared, f"found no parameter declarations for {node.package}/{node.executable}"
    for path in node.param_files:
        assert path.is_file(), f"{launch_file}: parameter file {path} does not exist"
        assert node.name in yaml_sections(path) or "**" in yaml_sections(path), \
            f"{path}: no section for node {node.name!r} (sections: {yaml_sections(path)})"
        params = yaml_parameters(path, node.name)
        assert params, f"{path}: sets no parameters for {node.name}"
        undeclared = sorted(set(params) - declared)
        assert not undeclared, f"{path} sets {undeclared}, which {node.executable} does not declare"
    undeclared = sorted(set(node.inline_params) - declared)
    assert not undeclared, f"{launch_file} sets {undeclared} inline, which {node.executable} does not declare"


def merged_parameters(node) -> dict:
    """What the node ends up with: its parameter files in order (later files win), then inline values."""
    params = {}
    for file in node.param_files:
        params.update(yaml_parameters(file, node.name))
    params.update(node.inline_params)
    return params


@pytest.mark.parametrize("path", GO2_FILES, ids=lambda p: p.name)
def test_all_nodes_of_a_go2_launch_file_share_one_robot_link(path):
    """Simulator, policy, estimator and safety monitor must talk on the same DDS domain and interface."""
    links = {}
    for node in parse_launch_file(path):
        if node.package in GAZEBO_PACKAGES:
            continue  # ROS <-> Gazebo transport only: not on the robot's wire
        params = merged_parameters(node)
        links[node.executable] = (params.get("dds_domain"), params.get("network_interface"))
    assert len(set(links.values())) == 1, f"{path.name}: nodes disagree on (dds_domain, network_interface): {links}"
    domain, interface = next(iter(links.values()))
    if "robot" in path.name:
        assert domain == 0 and interface != "lo", "on the robot: DDS domain 0 on the robot's Ethernet interface"
    else:
        assert domain == 1 and interface == "lo", "rehearsal: DDS domain 1 on loopback"


@pytest.mark.parametrize("path", GO1_FILES, ids=lambda p: p.name)
def test_the_go1_nodes_meet_at_the_safety_monitors_gateway(path):
    """The Go1's UDP link is point to point: the monitor owns the socket to the robot, the policy node
    sends to the monitor, the monitor forwards LowState to the estimator's port."""
    nodes = {n.executable: merged_parameters(n) for n in parse_launch_file(path)}
    assert {params.get("robot") for params in nodes.values()} == {"go1"}
    monitor, policy, estimator = nodes["safety_monitor"], nodes["policy_node"], nodes["estimator_node"]
    assert (policy["udp_peer_ip"], policy["udp_peer_port"]) == ("127.0.0.1", monitor["udp_policy_port"])
    assert policy["network_interface"] == "lo"
    assert monitor["udp_estimator_port"] == estimator["udp_lowstate_port"]
    ports = [monitor["udp_robot_local_port"], monitor["udp_policy_port"], monitor["udp_estimator_port"],
             policy["udp_local_port"]]
    assert len(set(ports)) == len(ports), f"{path.name}: two sockets on one port: {ports}"
    if "robot" in path.name:
        assert (monitor["udp_robot_ip"], monitor["udp_robot_port"]) == ("192.168.123.10", 8007)
        assert monitor["network_interface"] != "lo", "on the robot: the interface wired to it"
    else:
        sim = nodes["go1_sim"]
        assert (monitor["udp_robot_ip"], monitor["udp_robot_port"]) == (sim["udp_host"], sim["udp_port"])
        assert monitor["network_interface"] == "lo"
        assert sim["udp_port"] not in ports


def test_the_robot_releases_the_sport_controller_and_the_rehearsal_does_not():
    def policy_params(launch_file):
        (node,) = [n for n in parse_launch_file(LAUNCH_DIR / launch_file) if n.executable == "policy_node"]
        return merged_parameters(node)

    robot, rehearsal = policy_params("go2_robot.launch.py"), policy_params("go2_rehearsal.launch.py")
    assert robot["release_sport_mode"] is True and rehearsal["release_sport_mode"] is False
    assert robot["policy_path"] == rehearsal["policy_path"], "the robot runs the policy that was rehearsed"
    # The Go1 leaves its sport mode with its remote: the node refuses release_sport_mode there.
    go1_robot, go1_rehearsal = policy_params("go1_robot.launch.py"), policy_params("go1_rehearsal.launch.py")
    assert not go1_robot.get("release_sport_mode") and not go1_rehearsal.get("release_sport_mode")
    assert go1_robot["policy_path"] == go1_rehearsal["policy_path"]


def test_parser_catches_an_undeclared_parameter(tmp_path):
    """The checker itself can fail: a typo'd parameter name is reported."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "p.yaml").write_text("policy_node:\n  ros__parameters:\n    polcy_path: x.onnx\n")
    launch = tmp_path / "bad.launch.py"
    launch.write_text(
        "import os\nfrom launch_ros.actions import Node\n"
        "CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'config')\n"
        "def generate_launch_description():\n"
        "    return [Node(package='surrogait_policy', executable='policy_node', name='policy_node',\n"
        "                 parameters=[os.path.join(CONFIG, 'p.yaml'), {'robot': 'go2'}])]\n"
    )
    (node,) = parse_launch_file(launch)
    assert node.param_files == [config / "p.yaml"] and node.inline_params == {"robot": "go2"}
    declared = declared_parameters(console_script(node.package, node.executable))
    assert "policy_path" in declared and "polcy_path" not in declared
    assert set(yaml_parameters(node.param_files[0], "policy_node")) - declared == {"polcy_path"}
    with pytest.raises(LookupError, match="not installed"):
        console_script("surrogait_no_such_package", "x")
    with pytest.raises(LookupError, match="no executable"):
        console_script("surrogait_policy", "no_such_node")


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_the_safety_monitor_reads_the_contract_of_the_policy_that_runs(path):
    nodes = {n.executable: merged_parameters(n) for n in parse_launch_file(path)}
    assert nodes["safety_monitor"]["policy_path"] == nodes["policy_node"]["policy_path"]


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_the_policy_file_exists_and_is_for_the_launched_robot(path):
    from surrogait_core.policy.contract import read_contract

    nodes = {n.executable: merged_parameters(n) for n in parse_launch_file(path)}
    policy = nodes["policy_node"]
    robot = policy.get("robot", "go2")
    assert read_contract(policy["policy_path"], robot=robot).robot == robot
