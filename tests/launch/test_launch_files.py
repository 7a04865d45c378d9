"""The installed launch files start real, installed executables with parameters those nodes declare.

ros2_ws is built with colcon (`colcon build --symlink-install`, conftest.py) and every launch file is
taken from the install space, share/surrogait_bringup/launch/, found through the ament index as
`ros2 launch surrogait_bringup <file>` finds it. `launch`/`launch_ros` cannot be installed here, so each
file runs under launch_standin.py (the launch API's few pieces it uses, nothing started): what it would
start is checked against the executables colcon installed (<prefix>/lib/<package>/<executable>, where
launch_ros looks), the nodes' own parameter declarations, and the files of the installed share/ tree.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from colcon_workspace import PACKAGES, REPO
from launch_files import (
    GAZEBO_PACKAGES,
    console_script,
    declared_parameters,
    yaml_parameters,
    yaml_sections,
)
from launch_standin import run_launch_file

from surrogait_bringup.stack import DEFAULT_ROS_DOMAIN_ID, DRY_RUN_PARAMETER, BringupError, policy_node_parameters
from surrogait_core.interfaces import GAZEBO_BRIDGE_UP_LINE

SOURCE = REPO / "ros2_ws" / "src" / "surrogait_bringup"
LAUNCH_NAMES = sorted(p.name for p in (SOURCE / "launch").glob("*.launch.py"))
# (launch file, arguments): every file with its defaults, and the either-robot files for the Go1.
RUNS = [(name, {}) for name in LAUNCH_NAMES] + [("robot.launch.py", {"robot": "go1"}),
                                                ("rehearsal.launch.py", {"robot": "go1"})]


def run_id(run):
    name, args = run
    return name + "".join(f" {k}:={v}" for k, v in args.items())


def launch(workspace, name, **arguments):
    """Everything the launch file starts; the Gazebo one's robot nodes once its bridge reported Gazebo up
    (test_gazebo_launch checks when they start)."""
    path = workspace.share("surrogait_bringup") / "launch" / name
    assert path.is_file(), f"{name} is not installed under share/surrogait_bringup/launch"
    launched = run_launch_file(path, arguments)
    if any(n.name == "gazebo_bridge" for n in launched.nodes):
        launched.output("gazebo_bridge", f"[INFO] [0.0] [gazebo_bridge]: {GAZEBO_BRIDGE_UP_LINE}")
    return launched


def merged_parameters(node) -> dict:
    """What the node ends up with: its parameter files and inline values in order, later ones winning."""
    params = {}
    for entry in node.parameters:
        params.update(yaml_parameters(Path(entry), node.name) if isinstance(entry, str) else entry)
    return params


def nodes_of(launched) -> dict:
    return {n.executable: merged_parameters(n) for n in launched.nodes if n.package not in GAZEBO_PACKAGES}


def robot_of(name: str, args: dict) -> str:
    return args.get("robot") or ("go1" if name.startswith("go1_") else "go2")


def shipped(path: Path) -> bool:
    """A file of the package (bytecode that Python cached beside a launch file it imported is not)."""
    return path.is_file() and "__pycache__" not in path.parts


def test_every_launch_file_its_configuration_and_the_shipped_policies_are_installed(workspace):
    share = workspace.share("surrogait_bringup")
    for folder in ("launch", "config", "policies"):
        source = {p.relative_to(SOURCE) for p in (SOURCE / folder).rglob("*") if shipped(p)}
        installed = {p.relative_to(share) for p in (share / folder).rglob("*") if shipped(p)}
        assert source and source == installed, f"{folder}: not installed {sorted(source - installed)}"
    assert (share / "policies" / "go2_trot.onnx").is_file() and (share / "policies" / "go1_trot.onnx").is_file()


@pytest.mark.parametrize("robot", ["go2", "go1"])
def test_the_robot_and_rehearsal_launch_files_start_what_they_should(ament_index, robot):
    on_robot = {n.executable for n in launch(ament_index, f"{robot}_robot.launch.py").nodes}
    rehearsal = {n.executable for n in launch(ament_index, f"{robot}_rehearsal.launch.py").nodes}
    assert on_robot == {"policy_node", "estimator_node", "safety_monitor", "session_recorder"}
    assert rehearsal == on_robot | {f"{robot}_sim"}, "the rehearsal runs the robot's nodes plus the simulator"
    assert launch(ament_index, "robot.launch.py", robot=robot).nodes == launch(
        ament_index, f"{robot}_robot.launch.py").nodes, "robot.launch.py robot:=X is X_robot.launch.py"
    order = [n.executable for n in launch(ament_index, f"{robot}_robot.launch.py").nodes]
    assert order.index("safety_monitor") < order.index("policy_node"), "the monitor watches before a motor moves"


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_each_node_is_an_executable_of_the_install_space(ament_index, run):
    name, args = run
    for node in launch(ament_index, name, **args).nodes:
        if node.package in GAZEBO_PACKAGES:
            assert node.executable in GAZEBO_PACKAGES[node.package], f"{node.package} has no {node.executable}"
            continue
        executable = ament_index.executable(node.package, node.executable)
        assert executable.is_file() and os.access(executable, os.X_OK), f"{executable} not installed by colcon"
        assert callable(console_script(node.package, node.executable).load())


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_every_file_comes_from_the_installed_share_tree_and_sets_only_declared_parameters(ament_index, run):
    name, args = run
    launched = launch(ament_index, name, **args)
    install = str(ament_index.install)
    for node in launched.nodes:
        if node.package in GAZEBO_PACKAGES:
            unknown = sorted(set(node.inline_params) - GAZEBO_PACKAGES[node.package][node.executable])
            assert not unknown and not node.param_files, f"{node.executable}: {unknown}"
            assert Path(node.inline_params["config_file"]).is_file()
            assert node.inline_params["config_file"].startswith(install)
            continue
        declared = declared_parameters(console_script(node.package, node.executable))
        assert node.param_files, f"{name}: {node.executable} gets no parameters file"
        for path in node.param_files:
            assert str(path).startswith(install), f"{path}: not from the install space's share/ tree"
            assert path.is_file(), f"{name}: parameter file {path} does not exist"
            assert node.name in yaml_sections(path) or "**" in yaml_sections(path), f"{path}: no {node.name}"
            undeclared = sorted(set(yaml_parameters(path, node.name)) - declared)
            assert not undeclared, f"{path} sets {undeclared}, which {node.executable} does not declare"
        undeclared = sorted(set(node.inline_params) - declared)
        assert not undeclared, f"{name} sets {undeclared} inline, which {node.executable} does not declare"
    paths = [a for p in launched.processes for a in p.cmd if a.startswith("/")]
    paths += [merged_parameters(n)["policy_path"] for n in launched.nodes if n.executable == "policy_node"]
    assert all(p.startswith(install) for p in paths), paths


@pytest.mark.parametrize("name", [n for n in LAUNCH_NAMES if n.startswith("go2_")])
def test_all_nodes_of_a_go2_launch_file_share_one_robot_link(ament_index, name):
    """Simulator (or bridge), policy, estimator, safety monitor and session recorder on one DDS domain and
    interface."""
    links = {exe: (p.get("dds_domain"), p.get("network_interface"))
             for exe, p in nodes_of(launch(ament_index, name)).items()}
    for exe, params in nodes_of(launch(ament_index, name)).items():
        if exe in ("go2_sim", "gazebo_bridge"):  # their package files hold the rehearsal's link
            from surrogait_rehearsal.sim.mujoco.config import PARAMETERS
            links[exe] = (params.get("dds_domain", PARAMETERS["dds_domain"][0]),
                          params.get("network_interface", PARAMETERS["network_interface"][0]))
    assert len(set(links.values())) == 1, f"{name}: nodes disagree on (dds_domain, network_interface): {links}"
    domain, interface = next(iter(links.values()))
    if "robot" in name:
        assert domain == 0 and interface != "lo", "on the robot: DDS domain 0 on the robot's Ethernet interface"
    else:
        assert domain == 1 and interface == "lo", "rehearsal: DDS domain 1 on loopback"


@pytest.mark.parametrize("name", ["go1_robot.launch.py", "go1_rehearsal.launch.py"])
def test_the_go1_nodes_meet_at_the_safety_monitors_gateway(ament_index, name):
    """The Go1's UDP link is point to point: the monitor owns the socket to the robot, the policy node
    sends to the monitor, the monitor forwards LowState to the estimator's port."""
    nodes = nodes_of(launch(ament_index, name))
    assert {params.get("robot") for params in nodes.values()} == {"go1"}
    monitor, policy, estimator = nodes["safety_monitor"], nodes["policy_node"], nodes["estimator_node"]
    assert (policy["udp_peer_ip"], policy["udp_peer_port"]) == ("127.0.0.1", monitor["udp_policy_port"])
    assert policy["network_interface"] == "lo"
    assert monitor["udp_estimator_port"] == estimator["udp_lowstate_port"]
    assert monitor["udp_record_port"] == nodes["session_recorder"]["udp_record_port"] != 0, \
        "the recorder listens where the gateway copies the packets"
    ports = [monitor["udp_robot_local_port"], monitor["udp_policy_port"], monitor["udp_estimator_port"],
             monitor["udp_record_port"], policy["udp_local_port"]]
    assert len(set(ports)) == len(ports), f"{name}: two sockets on one port: {ports}"
    if "robot" in name:
        assert (monitor["udp_robot_ip"], monitor["udp_robot_port"]) == ("192.168.123.10", 8007)
        assert monitor["network_interface"] != "lo", "on the robot: the interface wired to it"
    else:
        sim = nodes["go1_sim"]
        assert (monitor["udp_robot_ip"], monitor["udp_robot_port"]) == (sim["udp_host"], sim["udp_port"])
        assert monitor["network_interface"] == "lo"
        assert sim["udp_port"] not in ports


def test_the_robot_releases_the_sport_controller_and_runs_the_rehearsed_policy(ament_index):
    def policy_params(name):
        return nodes_of(launch(ament_index, name))["policy_node"]

    robot, rehearsal = policy_params("go2_robot.launch.py"), policy_params("go2_rehearsal.launch.py")
    assert robot["release_sport_mode"] is True and rehearsal["release_sport_mode"] is False
    assert robot["policy_path"] == rehearsal["policy_path"], "the robot runs the policy that was rehearsed"
    # The Go1 leaves its sport mode with its remote: the node refuses release_sport_mode there.
    go1_robot, go1_rehearsal = policy_params("go1_robot.launch.py"), policy_params("go1_rehearsal.launch.py")
    assert not go1_robot.get("release_sport_mode") and not go1_rehearsal.get("release_sport_mode")
    assert go1_robot["policy_path"] == go1_rehearsal["policy_path"]


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_the_safety_monitor_reads_the_contract_of_the_shipped_policy_that_runs(ament_index, run):
    from surrogait_core.policy.contract import read_contract

    name, args = run
    nodes = nodes_of(launch(ament_index, name, **args))
    robot = robot_of(name, args)
    policy = nodes["policy_node"]["policy_path"]
    assert nodes["safety_monitor"]["policy_path"] == policy
    assert policy == str(ament_index.share("surrogait_bringup") / "policies" / f"{robot}_trot.onnx")
    assert read_contract(policy, robot=robot).robot == robot


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_our_ros_traffic_has_a_domain_of_its_own(ament_index, run):
    name, args = run
    launched = launch(ament_index, name, **args)
    assert launched.environment["ROS_DOMAIN_ID"] == str(DEFAULT_ROS_DOMAIN_ID) != "0", \
        "not the robot's own DDS domain 0"
    local = launched.environment.get("ROS_AUTOMATIC_DISCOVERY_RANGE")
    assert local == (None if "robot" in name else "LOCALHOST"), "rehearsals stay on this machine; the robot is seen"
    assert launch(ament_index, name, **args, ros_domain_id="42").environment["ROS_DOMAIN_ID"] == "42"


def test_every_launch_file_declares_the_documented_arguments(ament_index):
    common = {"robot", "policy", "dds_domain", "ros_domain_id", DRY_RUN_PARAMETER, "record", "record_path"}
    for name in LAUNCH_NAMES:
        declared = set(launch(ament_index, name).arguments)
        expected = common | ({"network_interface"} if "robot" in name else set())
        assert declared == expected, f"{name}: {sorted(declared ^ expected)}"


def test_the_arguments_reach_every_node_of_the_go2(ament_index, tmp_path):
    policy = tmp_path / "x.onnx"
    shutil.copy(ament_index.share("surrogait_bringup") / "policies" / "go2_trot.onnx", policy)
    nodes = nodes_of(launch(ament_index, "go2_robot.launch.py", network_interface="enp3s0", dds_domain="3",
                            policy=str(policy)))
    assert {(p["network_interface"], p["dds_domain"]) for p in nodes.values()} == {("enp3s0", 3)}
    assert nodes["policy_node"]["policy_path"] == nodes["safety_monitor"]["policy_path"] == str(policy)
    rehearsal = nodes_of(launch(ament_index, "go2_rehearsal.launch.py", dds_domain="5"))
    assert {p["dds_domain"] for p in rehearsal.values()} == {5}


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_every_session_is_recorded_unless_asked_not_to(ament_index, run, tmp_path):
    name, args = run
    nodes = nodes_of(launch(ament_index, name, **args))
    recorder = nodes["session_recorder"]
    assert recorder.get("robot", "go2") == robot_of(name, args), "its parameter's default is the Go2"
    assert recorder["policy_path"] == nodes["policy_node"]["policy_path"], "the file says which policy ran"
    assert recorder["output_path"].endswith(".mcap") and "{stamp}" in recorder["output_path"]
    path = str(tmp_path / "walk.mcap")
    assert nodes_of(launch(ament_index, name, **args, record_path=path))["session_recorder"]["output_path"] == path
    assert "session_recorder" not in nodes_of(launch(ament_index, name, **args, record="false"))
    with pytest.raises(BringupError, match="ending in .mcap"):
        launch(ament_index, name, **args, record_path=str(tmp_path / "walk.bag"))


def test_the_go1s_interface_is_the_gateways(ament_index):
    nodes = nodes_of(launch(ament_index, "go1_robot.launch.py", network_interface="enp3s0"))
    assert nodes["safety_monitor"]["network_interface"] == "enp3s0"
    assert nodes["policy_node"]["network_interface"] == "lo", "the policy node's peer is the monitor, here"


@pytest.mark.parametrize(("name", "args", "message"), [
    ("go2_robot.launch.py", {"robot": "go1"}, 'Argument "robot" provided value "go1" is not valid'),
    ("go2_robot.launch.py", {"policy": "/no/such/policy.onnx"}, "policy /no/such/policy.onnx: no such file"),
    ("go2_robot.launch.py", {"ros_domain_id": "150"}, "ROS 2 on Linux takes 0-101 or 215-232"),
    ("go2_robot.launch.py", {"ros_domain_id": "one"}, "ros_domain_id 'one': expected an integer"),
    ("go2_robot.launch.py", {"dds_domain": "-1"}, "dds_domain -1: expected an integer in [0, 232]"),
    ("go1_robot.launch.py", {"dds_domain": "0"}, "dds_domain applies to the Go2 only"),
    ("go2_robot.launch.py", {DRY_RUN_PARAMETER: "1.5"}, "expected a number in [0, 1)"),
    ("go2_gazebo.launch.py", {"robot": "go1"}, 'Argument "robot" provided value "go1" is not valid'),
])
def test_an_argument_that_cannot_work_is_refused_naming_it(ament_index, name, args, message):
    with pytest.raises((BringupError, RuntimeError)) as refused:
        launch(ament_index, name, **args)
    assert message in str(refused.value)


def test_a_dry_run_reaches_the_policy_node_or_is_refused(ament_index):
    """`dry_run_gain_fraction` goes to the policy node only when it has that parameter: a node without a
    dry-run mode would drive the motors with the policy's full gains, so the launch refuses instead."""
    assert DRY_RUN_PARAMETER not in nodes_of(launch(ament_index, "go2_robot.launch.py"))["policy_node"]
    if DRY_RUN_PARAMETER in policy_node_parameters():
        nodes = nodes_of(launch(ament_index, "go2_robot.launch.py", **{DRY_RUN_PARAMETER: "0.2"}))
        assert nodes["policy_node"][DRY_RUN_PARAMETER] == pytest.approx(0.2)
    else:
        with pytest.raises(BringupError, match="this policy node has no dry-run mode"):
            launch(ament_index, "go2_robot.launch.py", **{DRY_RUN_PARAMETER: "0.2"})


def test_the_launch_files_need_the_installed_workspace(workspace, monkeypatch):
    """Nothing falls back to the source tree: without the ament index, the launch says how to get it."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(workspace.prefix("surrogait_core")))
    with pytest.raises(BringupError, match="source its install/setup.bash"):
        launch(workspace, "go2_robot.launch.py")


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.rehearsal
def test_a_node_starts_from_the_install_space(workspace, tmp_path):
    """The estimator as colcon installed it (<prefix>/lib/surrogait_estimator/estimator_node), in the environment
    `source install/setup.bash` gives, with the installed parameters file: it comes up and stops cleanly."""
    env = workspace.environment()
    env.update(ROS_DOMAIN_ID="95", ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    assert set(env["AMENT_PREFIX_PATH"].split(":")) == {str(workspace.prefix(p)) for p in PACKAGES}
    where = subprocess.run([shutil.which("python3", path=env["PATH"]) or "python3", "-c",
                            "import surrogait_estimator; print(surrogait_estimator.__file__)"],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(workspace.base / "build")), f"imported from {where}, not the install space"
    executable = workspace.executable("surrogait_estimator", "estimator_node")
    params = workspace.share("surrogait_estimator") / "config" / "estimator.yaml"
    log = tmp_path / "estimator.log"
    with log.open("w") as out:
        node = subprocess.Popen([str(executable), "--ros-args", "--params-file", str(params), "-p", "robot:=go1",
                                 "-p", f"udp_lowstate_port:={free_udp_port()}", "-p", "realtime_priority:=0"],
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60.0
        while "state estimator for go1" not in log.read_text():
            assert node.poll() is None, f"exited {node.returncode}:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"not up within 60 s:\n{log.read_text()}"
            time.sleep(0.2)
        node.send_signal(signal.SIGINT)
        assert node.wait(timeout=30) == 0, log.read_text()
    finally:
        if node.poll() is None:
            node.kill()
            node.wait()
