"""The policy node's Go1 link (unitree_legged_sdk 3.8's UDP packets through the project's codec, no SDK binary,
on real loopback sockets) and the node with `robot: go1` as a process against a stand-in Go1: packets, newest
state, the reply timeout, the SDK's power protection, the parameters refused for a Go1, and the LowCmd stream of
a stand-up. (The codec and the power protection are compared with the SDK itself in tests/core.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fake_go1 import FakeGo1, go1_state
from policy_files import write_test_policy

from surrogait_core import interfaces
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_controller import MotorTargets, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.wire import go1_wire
from surrogait_policy.go1_link import Go1Link, open_go1_link
from surrogait_policy.params import from_values
from surrogait_policy.robot_link import LinkError, damp_on_protection

# Ports of this file only (robot side, node side), away from the stack's defaults (8017/8081/8019).
ROBOT_PORT, LOCAL_PORT = 18417, 18481
NODE_ROBOT_PORT, NODE_LOCAL_PORT = 18427, 18491
DOMAIN = 57
# This interpreter's console script, else the one on PATH (make test-jazzy: the script colcon installed).
POLICY_NODE = shutil.which("policy_node", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
LINK_UP = f"unitree_legged_sdk UDP link to 127.0.0.1:{NODE_ROBOT_PORT} up (local port {NODE_LOCAL_PORT})"


@pytest.fixture
def robot():
    r = FakeGo1(ROBOT_PORT)
    yield r
    r.close()


@pytest.fixture
def link():
    made = []

    def make(power_protect_level: int = 0) -> Go1Link:
        made.append(Go1Link("127.0.0.1", ROBOT_PORT, LOCAL_PORT, power_protect_level))
        return made[-1]

    yield make
    for one in made:
        one.close()


def targets(k: float = 0.0) -> MotorTargets:
    # Values the fixed point carries exactly (kp in 1/32, kd in 1/16, tau in 1/256 N·m).
    return MotorTargets(q=np.linspace(-0.5, 0.5, 12) + k, dq=np.full(12, 0.25), kp=np.full(12, 20.0),
                        kd=np.full(12, 0.5), tau=np.round(np.linspace(-1.0, 1.0, 12) * 256) / 256)


def wait_taken(link: Go1Link, timeout_s: float = 2.0):
    deadline = time.monotonic() + timeout_s
    while (sample := link.take()) is None:
        assert time.monotonic() < deadline, "no LowState taken"
        time.sleep(0.002)
    return sample


# ---- the link ---------------------------------------------------------------------------------------
def test_a_written_lowcmd_decodes_to_the_targets_and_is_re_sent_unchanged(robot, link):
    go1 = link()
    t = targets()
    go1.write(t)
    packet, sender = robot.receive()
    assert sender[1] == LOCAL_PORT
    assert go1_wire.lowcmd_drop_reason(packet) is None, "sealed as the robot expects (length, CRC, head, level)"
    cmd = go1_wire.decode_lowcmd(packet)
    assert cmd.raw_mode.tolist() == [go1_wire.GO1_MODE_SERVO] * 12
    for name in ("q", "dq", "kp", "kd", "tau"):
        np.testing.assert_allclose(getattr(cmd.motors, name), getattr(t, name), atol=1e-6, err_msg=name)
    go1.write(t)  # the same targets: the same packet again
    assert robot.receive()[0] == packet
    go1.write(targets(0.1))  # new targets: a new packet
    np.testing.assert_allclose(go1_wire.decode_lowcmd(robot.receive()[0]).motors.q, targets(0.1).q, atol=1e-6)


def test_targets_the_packet_cannot_carry_raise_before_anything_is_sent(robot, link):
    go1 = link()
    too_stiff = MotorTargets.position(np.zeros(12), kp=np.full(12, 3000.0), kd=np.full(12, 1.0))
    with pytest.raises(go1_wire.Go1WireError, match="kp"):
        go1.write(too_stiff)
    assert robot.receive(timeout_s=0.1) is None, "nothing was sent"
    go1.write(MotorTargets.damping(1.0))  # what the control loop sends instead
    assert go1_wire.decode_lowcmd(robot.receive()[0]).motors.is_damping


def test_take_returns_the_newest_state_once_and_refuses_a_bad_crc(robot, link):
    go1 = link()
    go1.write(MotorTargets.damping(1.0))
    _, sender = robot.receive()
    assert go1.take() is None
    for tick in (10, 12, 14):
        robot.send(sender, go1_state(tick, joint_pos=np.linspace(-1, 1, 12) + tick, joint_vel=np.full(12, tick),
                                     tau_est=np.full(12, 0.5)))
    time.sleep(0.05)
    before = time.time()
    sample = go1.take()
    assert sample is not None and sample.state.tick_ms == 14
    np.testing.assert_allclose(sample.state.joint_pos, np.linspace(-1, 1, 12) + 14, atol=1e-5)
    np.testing.assert_allclose(sample.state.joint_vel, 14.0)
    np.testing.assert_allclose(sample.state.joint_tau_est, 0.5)
    np.testing.assert_allclose(sample.state.quat_wxyz, [1, 0, 0, 0])
    np.testing.assert_allclose(sample.state.accel_b, [0, 0, 9.81], atol=1e-5)
    assert abs(sample.source_time_s - before) < 0.5, "stamped with this host's clock at receipt"
    assert go1.take() is None, "a state is handed out once"
    bad = bytearray(go1_wire.encode_lowstate(go1_state(16)))
    bad[100] ^= 0xFF
    robot.send(sender, bytes(bad))
    time.sleep(0.05)
    assert go1.take() is None and go1.refused == 1


def test_no_reply_within_the_timeout_names_the_peer_and_what_to_check(robot, link):
    go1 = link()
    start = time.monotonic()
    with pytest.raises(LinkError) as refused:
        go1.wait_until_up(MotorTargets.damping(1.0), timeout_s=0.3, period_s=0.002)
    assert 0.3 <= time.monotonic() - start < 2.0
    message = str(refused.value)
    for what in (f"127.0.0.1:{ROBOT_PORT}", f"local port {LOCAL_PORT}", "safety monitor", "low-level mode",
                 "L2+A, L2+B, then L1+L2+start", "cable"):
        assert what in message, message
    streamed = []
    while (got := robot.receive(timeout_s=0.05)) is not None:
        streamed.append(go1_wire.decode_lowcmd(got[0]).motors)
    # Damping every 2 ms meanwhile (a loaded machine sleeps longer: at least a third of them).
    assert len(streamed) >= 50 and all(m.is_damping for m in streamed), len(streamed)


def test_the_link_comes_up_on_the_first_state_logs_it_and_hands_that_state_over(robot):
    def answer_first() -> None:
        packet, sender = robot.receive(timeout_s=5.0)
        robot.send(sender, go1_state(42))

    answering = threading.Thread(target=answer_first)
    answering.start()
    params = from_values({"robot": "go1", "policy_path": "p.onnx", "udp_peer_port": ROBOT_PORT,
                          "udp_local_port": LOCAL_PORT})
    lines = []
    go1 = open_go1_link(params, MotorTargets.damping(1.0), 0.002, lines.append)
    try:
        answering.join()
        assert lines == [f"unitree_legged_sdk UDP link to 127.0.0.1:{ROBOT_PORT} up (local port {LOCAL_PORT})"]
        sample = go1.take()
        assert sample is not None and sample.state.tick_ms == 42
    finally:
        go1.close()


def test_a_local_port_in_use_is_refused_with_a_message(robot, link):
    link()  # holds LOCAL_PORT
    with pytest.raises(LinkError, match=f"udp_local_port {LOCAL_PORT} is already in use"):
        Go1Link("127.0.0.1", ROBOT_PORT, LOCAL_PORT)


@pytest.fixture(scope="module")
def go1_controller_factory(tmp_path_factory):
    path = write_test_policy(tmp_path_factory.mktemp("go1") / "go1.onnx", robot="go1")
    return lambda: PolicyController(PolicyRunner(OnnxPolicy(path, robot="go1")))


@pytest.mark.parametrize("level, power_w, trips", [(1, 400.0, True), (1, 50.0, False), (0, 400.0, False)],
                         ids=["over-the-limit", "under-the-limit", "off"])
def test_the_sdks_power_protection_asks_the_controller_to_damp(robot, link, go1_controller_factory, level,
                                                              power_w, trips):
    controller = go1_controller_factory()
    go1 = link(power_protect_level=level)
    causes = []
    for step in range(15):  # policy steps, each with a fresh state: one motor at `power_w`
        go1.write(MotorTargets.damping(1.0))
        _, sender = robot.receive()
        robot.send(sender, go1_state(2 * step, joint_vel=np.r_[20.0, np.zeros(11)],
                                     tau_est=np.r_[power_w / 20.0, np.zeros(11)]))
        sample = wait_taken(go1)
        now = time.monotonic()
        controller.on_lowstate(sample.state, now)
        causes.append(damp_on_protection(go1, controller, now))
        controller.cycle(now)
    if trips:
        assert controller.state is PolicyState.DAMP
        assert "unitree_legged_sdk power protection (PowerProtect level 1" in controller.fsm.damp_cause
        tripped = [i for i, c in enumerate(causes) if c]
        # The SDK counts steps over the limit and trips from the sixth on; DAMP latches, asked once.
        assert tripped and tripped[0] <= 6, causes
        assert sum("power protection" in what for _, what in controller.events) == 2  # the request, DAMP
    else:
        assert controller.state is PolicyState.PASSIVE and not any(causes)


# ---- parameters -------------------------------------------------------------------------------------
@pytest.mark.parametrize("values, message", [
    ({"release_sport_mode": True}, "release_sport_mode is for the Go2 only: the Go1 leaves sport mode with its "
                                   "remote"),
    ({"udp_peer_ip": "192.168.123.10"}, "network interface 'lo' has address 127.0.0.1, not one in 192.168.123.x "
                                        "where the robot (192.168.123.10) is"),
    ({"network_interface": "nosuch0"}, "network_interface 'nosuch0' does not exist"),
    ({"udp_peer_ip": "monitor"}, "udp_peer_ip 'monitor' is not an IPv4 address"),
    ({"udp_local_port": 70000}, "udp_local_port 70000 is outside 1..65535"),
    ({"udp_local_port": 8017}, "udp_local_port and udp_peer_port are both 8017"),
    ({"robot_reply_timeout_s": 0.0}, "robot_reply_timeout_s must be positive"),
    ({"power_protect_level": 11}, "power_protect_level must be in 0..10"),
])
def test_go1_parameters_that_cannot_work_are_refused(values, message):
    with pytest.raises(ParamError) as refused:
        from_values({"robot": "go1", "policy_path": "p.onnx", **values})
    assert message in str(refused.value)


def test_go1_defaults_talk_to_the_safety_monitor_on_loopback():
    params = from_values({"robot": "go1", "policy_path": "p.onnx"})
    assert (params.udp_peer_ip, params.udp_peer_port, params.udp_local_port) == (
        "127.0.0.1", go1_wire.MONITOR_POLICY_PORT, go1_wire.POLICY_LOCAL_PORT)
    assert (params.robot_reply_timeout_s, params.power_protect_level, params.network_interface) == (2.0, 0, "lo")


def test_go2_parameters_ignore_the_go1_link():
    from_values({"policy_path": "p.onnx", "release_sport_mode": True, "udp_peer_ip": "not an address"})


# ---- the node as a process --------------------------------------------------------------------------
def run_policy_node(tmp_path: Path, params: dict) -> subprocess.CompletedProcess:
    import yaml

    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"policy_node": {"ros__parameters": params}}))
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN + 1), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return subprocess.run([POLICY_NODE, "--ros-args", "--params-file", str(path)], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_node_exits_with_a_clear_error_when_nothing_answers(tmp_path):
    policy = write_test_policy(tmp_path / "go1.onnx", robot="go1")
    result = run_policy_node(tmp_path, {"robot": "go1", "policy_path": str(policy), "robot_reply_timeout_s": 0.5,
                                        "udp_peer_port": NODE_ROBOT_PORT, "udp_local_port": NODE_LOCAL_PORT})
    assert result.returncode == 2, result.stderr
    assert f"policy_node: error: no LowState from 127.0.0.1:{NODE_ROBOT_PORT} within 0.5 s" in result.stderr
    assert "low-level mode" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("policy_robot, params, message", [
    ("go2", {}, "trained for the 'go2', but the robot here is a 'go1'"),
    ("go1", {"release_sport_mode": True}, "release_sport_mode is for the Go2 only"),
], ids=["go2-policy", "release-sport-mode"])
def test_the_node_refuses_what_cannot_drive_a_go1(tmp_path, policy_robot, params, message):
    policy = write_test_policy(tmp_path / f"{policy_robot}.onnx", robot=policy_robot)
    result = run_policy_node(tmp_path, {"robot": "go1", "policy_path": str(policy), **params})
    assert result.returncode == 2, result.stderr
    assert "policy_node: error:" in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.rehearsal
def test_the_node_drives_a_go1_stand_up_over_udp(tmp_path):
    from surrogait_rehearsal.harness.operator import Operator
    from surrogait_rehearsal.harness.processes import ProcessGroup

    policy = write_test_policy(tmp_path / "go1.onnx", robot="go1")
    group = ProcessGroup(tmp_path, DOMAIN)
    summary, robot_seconds = tmp_path / "robot.json", 16.0
    robot = group.start("fake_go1", [sys.executable, str(Path(__file__).parent / "fake_go1.py"),
                                     str(NODE_ROBOT_PORT), str(robot_seconds), str(summary)])
    # The stand-in robot is plain Python on a shared machine: a pause longer than the node's 60 ms
    # stale-state limit is not what this test is about (test_policy_controller covers it).
    node = group.start_node("policy_node", {"robot": "go1", "policy_path": str(policy), "foot_force_units": "newtons",
                                            "udp_peer_port": NODE_ROBOT_PORT, "udp_local_port": NODE_LOCAL_PORT,
                                            "robot_reply_timeout_s": 10.0, "stand_up_duration_s": 1.0,
                                            "state_timeout_s": 1.0})
    op = Operator(DOMAIN, name="go1_test_operator")
    try:
        node.wait_for_log(LINK_UP, timeout_s=30.0)
        op.wait_for("PASSIVE", lambda: op.policy_state == "PASSIVE", 30.0)
        deadline = time.monotonic() + 20.0  # until the node has a fresh LowState
        while not (result := op.call(interfaces.SRV_STAND_UP, 30.0))[0] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert result[0], result[1]
        t_stand = time.monotonic()
        op.wait_for("READY", lambda: op.policy_state == "READY", 30.0)
        time.sleep(max(0.0, t_stand + 2.0 - time.monotonic()))
    finally:
        op.close()
        node.stop(timeout_s=15.0)  # SIGINT; SIGKILL after 15 s
        robot.stop(signal.SIGINT, timeout_s=30.0)  # it writes its summary and exits
    assert node.process.returncode == 0, node.tail()
    assert "unitree_sdk2 DDS" not in node.log

    report = json.loads(summary.read_text())
    commands = report["commands"]
    assert report["refused"] == 0, "every LowCmd is sealed as the robot expects"
    stiff = [i for i, c in enumerate(commands) if c["stiff"]]
    assert stiff, "the stand-up commanded stiff motors"
    assert all(c["damping"] for c in commands[: stiff[0]]), "damping until the stand-up"
    assert all(c["damping"] for c in commands[stiff[-1] + 1:]) and len(commands) > stiff[-1] + 10, \
        "damping on shutdown"
    stand = commands[stiff[0]: stiff[-1] + 1]
    spec = load_robot_spec("go1")
    assert all(c["stiff"] and min(c["kp"]) > 0 for c in stand)
    np.testing.assert_allclose(stand[-1]["q"], spec.default_joint_pos, atol=1e-6)
    t = np.array([c["t"] for c in stand])
    assert np.median(np.diff(t)) == pytest.approx(0.002, abs=0.0005), "the stream runs at 500 Hz"
    assert len(stand) > 0.5 * (t[-1] - t[0]) / 0.002, "few LowCmds went missing"
