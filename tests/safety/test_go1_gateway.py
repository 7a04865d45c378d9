"""The Go1 gateway forwards what the monitor allows, as it arrives, over real UDP sockets on 127.0.0.1.

The policy side is the vendor SDK's own UDP client (what the policy node uses); the robot is a plain
socket answering each LowCmd with a LowState, as the Go1 does.
"""

import platform
import socket
import sys
import time

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go1_wire
from surrogait_core.wire.go2_wire import Gamepad, LowStateView
from surrogait_safety.go1_gateway import GatewayAddresses, Go1Gateway

# The SDK's Python binding has a wheel for CPython 3.11 on x86_64 only: it is the oracle where it installs (the
# default `make test`, where it must be there); elsewhere (`make test-jazzy`, Python 3.12) the comparison is skipped.
if (sys.version_info[:2], platform.machine()) != ((3, 11), "x86_64"):
    pytest.skip("unitree_legged_sdk (the oracle) has a cp311 x86_64 wheel only", allow_module_level=True)
from unitree_legged_sdk import robot_interface as ri  # noqa: E402

SPEC = load_robot_spec("go1")
ROBOT, ROBOT_SIDE, POLICY, POLICY_LOCAL, ESTIMATOR, RECORDER = 28307, 28380, 28317, 28381, 28319, 28321
DAMPING = go1_wire.damping_lowcmd(0.8)


def lowstate(tick_ms: int) -> bytes:
    zeros = np.zeros(12)
    view = LowStateView(tick_ms, np.array([1.0, 0, 0, 0]), np.zeros(3), np.array([0, 0, 9.81]),
                        SPEC.default_joint_pos, zeros, zeros, np.zeros(4), Gamepad(frozenset(), 0, 0, 0, 0))
    return go1_wire.encode_lowstate(view)


class FakeGo1:
    """Answers every LowCmd with a LowState (tick = how many it has answered) and keeps what it got."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", ROBOT))
        self.sock.settimeout(0.2)
        self.received: list[bytes] = []

    def answer(self, n: int = 1) -> None:
        for _ in range(n):
            packet, source = self.sock.recvfrom(2048)
            self.received.append(packet)
            self.sock.sendto(lowstate(len(self.received)), source)


@pytest.fixture(scope="module")
def sdk():
    # One SDK client for the module: the SDK's UDP object keeps its port bound after it is destroyed.
    udp = ri.UDP(0xFF, POLICY_LOCAL, "127.0.0.1", POLICY)
    cmd = ri.LowCmd()
    udp.InitCmdData(cmd)
    return udp, cmd


@pytest.fixture
def rig(sdk):
    robot = FakeGo1()
    estimator = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    estimator.bind(("127.0.0.1", ESTIMATOR))
    estimator.settimeout(0.2)
    recorder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    recorder.bind(("127.0.0.1", RECORDER))
    recorder.settimeout(0.2)
    verdicts = {"mode": "pass"}
    seen_states = []

    def judge(packet, _t):
        if verdicts["mode"] == "raise":
            raise RuntimeError("a bug in a rule")
        return {"pass": packet, "damp": DAMPING, "drop": None}[verdicts["mode"]]

    gateway = Go1Gateway(GatewayAddresses("127.0.0.1", ROBOT, ROBOT_SIDE, POLICY, ESTIMATOR, RECORDER), judge,
                         lambda packet, t: seen_states.append(packet), fail_safe_packet=DAMPING)
    gateway.start()
    udp, cmd = sdk
    while udp.Recv() == 0:  # nothing left over from another test
        pass
    yield gateway, robot, estimator, udp, cmd, verdicts, seen_states, recorder
    gateway.stop()
    robot.sock.close()
    estimator.close()
    recorder.close()


def send_stand(udp, cmd) -> bytes:
    for i in range(12):
        m = cmd.motorCmd[i]
        m.mode, m.q, m.dq, m.Kp, m.Kd, m.tau = 0x0A, float(SPEC.default_joint_pos[i]), 0.0, 40.0, 1.0, 0.0
    udp.SetSend(cmd)
    udp.Send()
    return go1_wire.encode_lowcmd(SPEC.default_joint_pos, np.zeros(12), np.full(12, 40.0), np.ones(12), np.zeros(12))


def wait_recv(udp, timeout_s=0.5) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if udp.Recv() == 0:
            return True
        time.sleep(0.001)
    return False


def test_an_allowed_command_reaches_the_robot_unchanged_and_its_state_comes_back(rig):
    gateway, robot, estimator, udp, cmd, _, seen, recorder = rig
    expected = send_stand(udp, cmd)
    robot.answer()
    assert robot.received == [expected], "the SDK's packet, byte for byte"
    assert wait_recv(udp), "the LowState came back to the policy node's SDK socket"
    state = ri.LowState()
    udp.GetRecv(state)
    assert state.tick == 1
    assert go1_wire.decode_lowstate(estimator.recv(2048)).tick_ms == 1, "a copy went to the estimator"
    assert len(seen) == 1 and gateway.counts.lowcmd_forwarded == 1 and gateway.counts.lowstate_forwarded == 1
    copies = [recorder.recv(2048), recorder.recv(2048)]
    assert copies == [expected, lowstate(1)], "the session recorder got both packets, in the order they went"


def test_a_refused_command_is_replaced_by_damping_or_dropped(rig):
    gateway, robot, _, udp, cmd, verdicts, _, recorder = rig
    verdicts["mode"] = "damp"
    send_stand(udp, cmd)
    robot.answer()
    assert robot.received[-1] == DAMPING and go1_wire.decode_lowcmd(robot.received[-1]).motors.is_damping
    assert recorder.recv(2048) == DAMPING, "the recording holds what the robot got, not what the policy sent"
    verdicts["mode"] = "drop"
    send_stand(udp, cmd)
    with pytest.raises(TimeoutError):
        robot.answer()
    assert gateway.counts.lowcmd_replaced == 1 and gateway.counts.lowcmd_refused == 1


def test_a_failing_judgement_sends_damping_and_the_link_goes_on(rig):
    gateway, robot, _, udp, cmd, verdicts, _, _ = rig
    verdicts["mode"] = "raise"
    send_stand(udp, cmd)
    robot.answer()
    assert robot.received[-1] == DAMPING and gateway.errors == ["RuntimeError: a bug in a rule"]
    verdicts["mode"] = "pass"
    expected = send_stand(udp, cmd)
    robot.answer()
    assert robot.received[-1] == expected


def test_the_monitors_own_packets_go_to_the_robot(rig):
    gateway, robot, _, _, _, _, _, recorder = rig
    gateway.send_to_robot(DAMPING)
    robot.answer()
    assert robot.received == [DAMPING] and gateway.counts.own_sent == 1
    assert recorder.recv(2048) == DAMPING, "the monitor's own packets are recorded too"
    assert gateway.last_robot_send_s is not None
