"""The simulator as a Go1: the robot's end of unitree_legged_sdk's UDP link, no DDS.

First the robot end in-process (Go1UdpRobot on a simulated Go1, plain sockets: fast and exact about
what is dropped, answered and copied), then `go1_sim` as a process with the vendor's SDK as its
client: one session (damping, a stand-up, fault injection, a corrupted packet) that the tests
below judge from the SDK's LowStates, the tap's copies, the recording and /diagnostics.
"""

from __future__ import annotations

import dataclasses
import signal
import socket
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from surrogait_core import interfaces
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.wire import go1_wire, go2_wire
from surrogait_rehearsal.harness.processes import ProcessGroup
from surrogait_rehearsal.sim import motor_driver
from surrogait_rehearsal.sim.motor_driver import LowCmdGate
from surrogait_rehearsal.sim.mujoco.config import PARAMETERS, Go1SimNodeConfig, SimNodeConfig
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig
from surrogait_rehearsal.sim.mujoco.go1_udp_robot import Go1UdpRobot

SPEC = load_robot_spec("go1")
N = go1_wire.NUM_MOTORS
HOST = "127.0.0.1"
READY_LINE = "Go1 simulator:"
PARAMS_FILE = Path(__file__).parents[2] / "ros2_ws/src/surrogait_rehearsal/config/go1_sim.yaml"
ZEROS = np.zeros(N)
STAND = go1_wire.encode_lowcmd(SPEC.default_joint_pos, ZEROS, np.full(N, 40.0), np.full(N, 1.0), ZEROS)
REAL_VERDICT = motor_driver.go1_verdict


def _socket(port: int = 0, timeout_s: float = 0.5) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((HOST, port))
    s.settimeout(timeout_s)
    return s


def _reseal(packet: bytearray) -> bytes:
    struct.pack_into("<I", packet, len(packet) - 4, go1_wire.packet_crc(packet))
    return bytes(packet)


def _drain(sock: socket.socket) -> list[bytes]:
    sock.setblocking(False)
    out = []
    try:
        while True:
            out.append(sock.recv(2048))
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(0.5)
    return out


# ---- parameters ---------------------------------------------------------------------------------

def test_go1_sim_is_a_go1_and_its_parameters_file_sets_only_declared_parameters():
    assert Go1SimNodeConfig.from_params({}).sim.robot == "go1"
    assert SimNodeConfig.from_params({"robot": "go1"}).udp_port == go1_wire.ROBOT_PORT
    params = yaml.safe_load(PARAMS_FILE.read_text())["go1_sim"]["ros__parameters"]
    assert set(params) <= set(PARAMETERS)
    for name, value in params.items():  # same types as the declared defaults, or ROS refuses the file
        assert type(value) is type(PARAMETERS[name][0]), name
    config = Go1SimNodeConfig.from_params(params)
    assert (config.robot, config.udp_host, config.udp_port, config.udp_tap_port) == ("go1", HOST, 8007, 0)
    # The DDS parameters do not apply to a Go1: not checked.
    Go1SimNodeConfig.from_params({"network_interface": "nosuch0", "dds_domain": 999, "lowstate_rate_hz": 1.0})


@pytest.mark.parametrize(("params", "match"), [
    ({"robot": "go3"}, "robot 'go3': expected go2 .* or go1"),
    ({"udp_host": "localhost"}, "udp_host 'localhost' must be an IPv4 address"),
    ({"udp_port": 0}, "udp_port 0 must be in 1..65535"),
    ({"udp_port": 70000}, "udp_port 70000"),
    ({"udp_tap_port": -1}, "udp_tap_port -1 must be in 0..65535"),
    ({"udp_port": 27001, "udp_tap_port": 27001}, "udp_tap_port 27001 is udp_port"),
])
def test_bad_go1_parameters_say_what_is_wrong(params, match):
    with pytest.raises(ParamError, match=match):
        Go1SimNodeConfig.from_params(params)


# ---- the robot's end of the link, in-process --------------------------------------------------

ROBOT_PORT, ROBOT_TAP_PORT = 27217, 27219


@pytest.fixture(scope="module")
def lying_go1() -> Go2Sim:
    return Go2Sim(SimConfig(robot="go1", imu_gyro_noise_std=0.0, imu_acc_noise_std=0.0))


@pytest.fixture
def robot_end(lying_go1):
    """(robot, gate, client socket, tap socket): the robot end bound at ROBOT_PORT, its tap listened to."""
    tap = _socket(ROBOT_TAP_PORT)
    gate = LowCmdGate()
    robot = Go1UdpRobot(gate, HOST, ROBOT_PORT, ROBOT_TAP_PORT)
    client = _socket()
    yield robot, gate, client, tap
    robot.close()
    client.close()
    tap.close()


def _exchange(robot: Go1UdpRobot, sim: Go2Sim, enabled: bool = True, remote: bytes = bytes(40)) -> int:
    time.sleep(0.005)  # loopback delivers at once; a margin for a loaded machine
    return robot.exchange(sim, enabled, remote)


def test_an_accepted_lowcmd_is_answered_with_one_lowstate_at_its_source(robot_end, lying_go1):
    robot, gate, client, tap = robot_end
    assert robot.address == (HOST, ROBOT_PORT)
    remote = bytes(go2_wire.encode_gamepad(go2_wire.Gamepad(go2_wire.STAND_UP_KEYS, 0.5, 0.0, 0.0, 0.0)))
    client.sendto(STAND, (HOST, ROBOT_PORT))
    assert _exchange(robot, lying_go1, remote=remote) == 1
    reply, source = client.recvfrom(2048)
    assert source == (HOST, ROBOT_PORT), "the answer leaves from the robot's socket (the SDK's is connect()ed)"
    assert go1_wire.lowstate_drop_reason(reply) is None
    state = go1_wire.decode_lowstate(reply)
    assert state.tick_ms == round(lying_go1.time_s * 1000)
    np.testing.assert_array_equal(state.joint_pos, lying_go1.joint_pos().astype(np.float32))
    assert state.gamepad.keys == go2_wire.STAND_UP_KEYS
    assert 0.5 * SPEC.total_mass_kg * 9.81 > state.foot_force.sum()  # lying: the belly carries the weight
    seq, motors = gate.latest_numbered()
    assert seq == 1
    np.testing.assert_array_equal(motors.q, SPEC.default_joint_pos.astype(np.float32))
    assert np.all(motors.kp == 40.0) and np.all(motors.mode == go2_wire.MODE_SERVO)
    assert _drain(tap) == [STAND, reply]


@pytest.mark.parametrize(("mangle", "reason"), [
    (lambda p: p[:-1], "length"),
    (lambda p: p + b"\0", "length"),
    (lambda p: p[:100] + bytes([p[100] ^ 1]) + p[101:], "crc"),
    (lambda p: _reseal(bytearray(b"\xfe\xee" + p[2:])), "head"),
    (lambda p: _reseal(bytearray(p[:2] + b"\xee" + p[3:])), "level_flag"),
    (lambda p: go1_wire.encode_lowcmd(np.r_[np.nan, ZEROS[1:]], ZEROS, ZEROS, ZEROS, ZEROS, check=False),
     "nonfinite"),
])
def test_a_bad_lowcmd_is_dropped_counted_and_not_answered(robot_end, lying_go1, mangle, reason):
    robot, gate, client, tap = robot_end
    client.sendto(mangle(STAND), (HOST, ROBOT_PORT))
    assert _exchange(robot, lying_go1) == 0
    stats = gate.snapshot()
    assert stats.accepted == 0 and stats.dropped[reason] == 1 and stats.dropped_total == 1
    assert gate.latest() is None
    assert _drain(client) == [] and _drain(tap) == []


def test_repeated_bytes_are_judged_once_and_each_copy_is_a_new_command(robot_end, lying_go1, monkeypatch):
    robot, gate, client, tap = robot_end
    judged = []
    monkeypatch.setattr(motor_driver, "go1_verdict", lambda p: judged.append(p) or REAL_VERDICT(p))
    for _ in range(3):
        client.sendto(STAND, (HOST, ROBOT_PORT))
        assert _exchange(robot, lying_go1) == 1
    assert len(judged) == 1
    assert gate.latest_numbered()[0] == 3  # on_command recomputes its torque for each copy
    assert len(_drain(client)) == 3


def test_with_lowstate_stopped_commands_still_act_but_get_no_answer(robot_end, lying_go1):
    robot, gate, client, tap = robot_end
    client.sendto(STAND, (HOST, ROBOT_PORT))
    assert _exchange(robot, lying_go1, enabled=False) == 0
    assert gate.snapshot().accepted == 1
    assert _drain(client) == []
    assert _drain(tap) == [STAND]


def test_every_sender_in_one_step_gets_its_own_answer(robot_end, lying_go1):
    robot, gate, client, tap = robot_end
    with _socket() as other:
        client.sendto(STAND, (HOST, ROBOT_PORT))
        other.sendto(go1_wire.damping_lowcmd(1.0), (HOST, ROBOT_PORT))
        assert _exchange(robot, lying_go1) == 2
        first, second = client.recv(2048), other.recv(2048)
    assert first == second  # one readout per step
    assert gate.latest().is_damping  # the later datagram is the latest command
    assert [len(p) for p in _drain(tap)] == [614, 807, 614, 807]


def test_a_taken_port_is_an_error_at_start():
    with _socket(ROBOT_PORT), pytest.raises(OSError):
        Go1UdpRobot(LowCmdGate(), HOST, ROBOT_PORT)


# ---- go1_sim as a process, the vendor's SDK as its client -------------------------------------

DOMAIN = 57  # ROS domain of this module's session (other test folders use 11-43)
SIM_PORT, TAP_PORT, SDK_PORT, PLAIN_PORT = 27207, 27209, 27280, 27281
DAMPING_EXCHANGES = 250  # 0.5 s at one exchange per physics step
STAND_S = 2.0  # 1 s ramp from where the joints are to the standing pose, then 1 s holding it
OFF_COMMANDS = 10  # sent while LowState replies are stopped (fault injection)
REPLY_TIMEOUT_S = 1.0  # only a simulator stalled this long misses (a late client still finds its answer)
TAP_BUFFER_BYTES = 8 << 20  # ~2,400 datagrams in the session: room for this thread to fall behind


@dataclasses.dataclass
class Session:
    sent: dict[str, int]  # LowCmds sent through the SDK per phase
    missed: int  # of those, how many got no LowState
    ticks: dict[str, np.ndarray]  # per phase, the tick of each SDK-decoded LowState
    joint_pos: dict[str, np.ndarray]  # per phase, (n, 12)
    foot_force: dict[str, np.ndarray]  # per phase, (n, 4)
    replies_while_off: list[bytes]
    reply_to_bad_crc: list[bytes]
    reply_to_good: bytes | None
    bad_packet: bytes
    tap: list[bytes]
    diagnostics: dict[str, str]
    log: dict[str, np.ndarray]
    sim_log: str
    exit_code: int
    wall_s: float


class TapListener(threading.Thread):
    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.sock = _socket(port, timeout_s=0.05)
        for option in (getattr(socket, "SO_RCVBUFFORCE", None), socket.SO_RCVBUF):  # FORCE: root only
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, option, TAP_BUFFER_BYTES)
                break
            except (OSError, TypeError):
                continue
        self.packets: list[bytes] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.packets.append(self.sock.recv(2048))
            except TimeoutError:
                pass
        self.sock.close()


def _sdk_exchange(udp, cmd, state, phase: str, rows: dict) -> bool:
    """Send one LowCmd through the SDK and wait for the LowState it answers with (decoded by the SDK)."""
    udp.SetSend(cmd)
    udp.Send()
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    while udp.Recv() != 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.0002)
    udp.GetRecv(state)
    rows.setdefault(phase, []).append((state.tick, [state.motorState[i].q for i in range(N)], list(state.footForce)))
    return True


def _set_motors(cmd, q, kp: float, kd: float) -> None:
    for i in range(N):
        m = cmd.motorCmd[i]
        m.q, m.dq, m.Kp, m.Kd, m.tau = float(q[i]), 0.0, kp, kd, 0.0


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Session:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import SetBool
    from unitree_legged_sdk import robot_interface as ri

    folder = tmp_path_factory.mktemp("go1_sim")
    log_path = folder / "sim_log.npz"
    tap = TapListener(TAP_PORT)
    tap.start()
    group = ProcessGroup(folder, DOMAIN)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=DOMAIN)
    executor = SingleThreadedExecutor(context=ctx)
    spin = threading.Thread(target=executor.spin, daemon=True)
    plain = _socket(PLAIN_PORT)
    try:
        node = rclpy.create_node("go1_sim_test", context=ctx)
        executor.add_node(node)
        diags: list = []
        node.create_subscription(DiagnosticArray, interfaces.DIAGNOSTICS, diags.append, 10)
        lowstate_enabled = node.create_client(SetBool, interfaces.SIM_LOWSTATE_ENABLED)
        spin.start()

        def set_lowstate(value: bool) -> None:
            future = lowstate_enabled.call_async(SetBool.Request(data=value))
            deadline = time.monotonic() + 10.0
            while not future.done() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert future.done() and future.result().success

        sim = group.start_node("go1_sim", {
            "udp_port": SIM_PORT, "udp_tap_port": TAP_PORT, "duration_s": 20.0, "log_path": str(log_path),
            "realtime_priority": 30})
        sim.wait_for_log(READY_LINE, 30.0)
        assert lowstate_enabled.wait_for_service(timeout_sec=10.0)
        t0 = time.monotonic()

        udp = ri.UDP(0xFF, SDK_PORT, HOST, SIM_PORT)
        cmd, state = ri.LowCmd(), ri.LowState()
        udp.InitCmdData(cmd)
        rows: dict = {}
        sent = {"damping": 0, "stand": 0}
        missed = 0
        _set_motors(cmd, ZEROS, 0.0, 1.0)  # damping: Kp 0, Kd 1, no targets
        for _ in range(DAMPING_EXCHANGES):
            sent["damping"] += 1
            missed += not _sdk_exchange(udp, cmd, state, "damping", rows)
        q_start, tick0 = np.array(rows["damping"][-1][1]), rows["damping"][-1][0]
        tick = tick0
        while tick - tick0 < 1000.0 * STAND_S:
            alpha = min(1.0, (tick - tick0) / 1000.0)
            _set_motors(cmd, (1.0 - alpha) * q_start + alpha * SPEC.default_joint_pos, 40.0, 1.0)
            sent["stand"] += 1
            if _sdk_exchange(udp, cmd, state, "stand", rows):
                tick = rows["stand"][-1][0]
            else:
                missed += 1

        # Fault injection: the robot keeps taking commands but stops answering.
        set_lowstate(False)
        for _ in range(OFF_COMMANDS):
            plain.sendto(STAND, (HOST, SIM_PORT))
            time.sleep(0.005)
        time.sleep(0.1)
        replies_while_off = _drain(plain)
        set_lowstate(True)

        bad = bytearray(STAND)
        bad[22 + 1] ^= 0x01  # motor 0's q: the CRC no longer matches
        plain.sendto(bytes(bad), (HOST, SIM_PORT))
        time.sleep(0.2)
        reply_to_bad = _drain(plain)
        plain.sendto(STAND, (HOST, SIM_PORT))
        try:
            reply_to_good = plain.recv(2048)
        except TimeoutError:
            reply_to_good = None

        # Diagnostics (published once a second) that have seen the whole session.
        accepted = sum(sent.values()) + OFF_COMMANDS + 1

        def final_diagnostics() -> dict[str, str] | None:
            for array in reversed(diags):
                for status in array.status:
                    values = {kv.key: kv.value for kv in status.values}
                    if status.name == "go1_sim" and values.get("lowcmd_accepted") == str(accepted):
                        return {"hardware_id": status.hardware_id, **values}
            return None

        # The simulator counts a LowCmd accepted before it sends its answer, and its diagnostics timer may read
        # the two counters between those: wait for a status that has both (published once a second).
        answered = sum(sent.values()) + 1

        def settled() -> bool:
            final = final_diagnostics()
            return final is not None and final.get("lowstates_published") == str(answered)

        deadline = time.monotonic() + 5.0
        while not settled() and time.monotonic() < deadline:
            time.sleep(0.05)
        wall_s = time.monotonic() - t0
        exit_code = sim.stop(signal.SIGINT, 30.0)
        time.sleep(0.1)  # the tap's last datagrams
    finally:
        tap.stop.set()
        tap.join(timeout=2.0)
        plain.close()
        group.kill_all()
        executor.shutdown(timeout_sec=2.0)
        rclpy.shutdown(context=ctx)

    return Session(
        sent=sent, missed=missed,
        ticks={p: np.array([r[0] for r in v]) for p, v in rows.items()},
        joint_pos={p: np.array([r[1] for r in v]) for p, v in rows.items()},
        foot_force={p: np.array([r[2] for r in v], dtype=np.float64) for p, v in rows.items()},
        replies_while_off=replies_while_off, reply_to_bad_crc=reply_to_bad, reply_to_good=reply_to_good,
        bad_packet=bytes(bad), tap=list(tap.packets), diagnostics=final_diagnostics() or {},
        log=dict(np.load(log_path)) if log_path.exists() else {}, sim_log=sim.log, exit_code=exit_code,
        wall_s=wall_s)


@pytest.mark.rehearsal
def test_a_robot_port_already_taken_is_a_clear_error_and_exit_code_2(tmp_path):
    with _socket(SIM_PORT):
        group = ProcessGroup(tmp_path, DOMAIN)
        try:
            sim = group.start_node("go1_sim", {"udp_port": SIM_PORT, "duration_s": 1.0})
            assert sim.process.wait(timeout=30) == 2
        finally:
            group.kill_all()
    assert f"go1_sim: error: cannot bind the robot's UDP socket at 127.0.0.1:{SIM_PORT}" in sim.log, sim.log


def _accepted(s: Session) -> int:
    return sum(s.sent.values()) + OFF_COMMANDS + 1


def _answered(s: Session) -> int:
    return sum(s.sent.values()) + 1


@pytest.mark.rehearsal
def test_the_sdk_gets_one_lowstate_for_each_lowcmd_it_sends(session):
    assert READY_LINE in session.sim_log and "UDP 127.0.0.1:27207" in session.sim_log
    assert session.missed == 0, f"{session.missed} of {sum(session.sent.values())} LowCmds got no LowState"
    ticks = np.concatenate([session.ticks["damping"], session.ticks["stand"]])
    assert len(ticks) == sum(session.sent.values())
    # Answers carry the simulated time of the step that took their command, in whole 2 ms steps, never
    # going back. Two commands may share a step: a client that gave up waiting on a late answer (the
    # simulator descheduled a moment) sends its next command, and both arrive before the next step.
    assert np.all(np.diff(ticks) >= 0) and np.all(ticks % 2 == 0) and ticks[-1] > ticks[0]
    assert session.exit_code == 0, session.sim_log[-2000:]


@pytest.mark.rehearsal
def test_a_damping_stream_leaves_the_lying_robot_lying(session):
    q = session.joint_pos["damping"]
    assert np.abs(q - q[0]).max() < 0.05
    t_end_s = session.ticks["damping"][-1] / 1000.0
    z = session.log["base_pos_w"][session.log["time_s"] <= t_end_s, 2]
    assert len(z) > 5 and z.max() < 0.1


@pytest.mark.rehearsal
def test_a_stiff_stand_command_stands_the_robot_up(session):
    error = np.abs(session.joint_pos["stand"] - SPEC.default_joint_pos).max(axis=1)
    assert error[0] > 1.0  # folded
    assert error[-1] < 0.2, f"joints {error[-1]:.2f} rad from the standing pose"
    # Standing on its feet: they carry the weight (LowState foot force, N as the Go2's counts).
    assert session.foot_force["stand"][-1].sum() == pytest.approx(SPEC.total_mass_kg * 9.81, rel=0.2)
    # Ground truth from the simulator's recording: the base rose to the standing height.
    t_end_s = session.ticks["stand"][-1] / 1000.0
    z = session.log["base_pos_w"][session.log["time_s"] <= t_end_s, 2]
    assert z[0] < 0.1 and z[-1] == pytest.approx(SPEC.standing_base_height_m, abs=0.03)


@pytest.mark.rehearsal
def test_with_lowstate_stopped_commands_are_taken_but_not_answered(session):
    assert session.replies_while_off == []
    assert session.reply_to_good is not None, "answers resumed once re-enabled"


@pytest.mark.rehearsal
def test_a_lowcmd_with_a_bad_crc_gets_no_answer_and_is_counted_dropped(session):
    assert session.reply_to_bad_crc == []
    # The same socket's next, good LowCmd is answered there: the silence was the CRC's doing.
    assert session.reply_to_good is not None and go1_wire.lowstate_drop_reason(session.reply_to_good) is None
    assert session.log["lowcmd_dropped"][-1] == 1
    assert session.log["lowcmd_accepted"][-1] == _accepted(session)
    assert "'crc': 1" in session.sim_log and f"LowCmds accepted {_accepted(session)}," in session.sim_log


@pytest.mark.rehearsal
def test_the_tap_gets_a_copy_of_every_accepted_lowcmd_and_every_lowstate_sent(session):
    lowcmds = [p for p in session.tap if len(p) == go1_wire.LOWCMD_LENGTH]
    lowstates = [p for p in session.tap if len(p) == go1_wire.LOWSTATE_LENGTH]
    assert len(lowcmds) + len(lowstates) == len(session.tap)
    assert len(lowcmds) == _accepted(session) and len(lowstates) == _answered(session)
    assert session.bad_packet not in lowcmds
    assert all(go1_wire.lowcmd_drop_reason(p) is None for p in lowcmds)
    assert lowcmds[-1] == STAND and lowstates[-1] == session.reply_to_good
    assert go1_wire.decode_lowcmd(lowcmds[0]).motors.is_damping


@pytest.mark.rehearsal
def test_diagnostics_count_lowcmds_and_lowstates(session):
    d = session.diagnostics
    assert d, "no go1_sim diagnostics with the whole session's counts"
    assert d["hardware_id"] == "mujoco_go1"
    assert d["lowcmd_accepted"] == str(_accepted(session)) and d["lowcmd_dropped"] == "1"
    assert d["lowstates_published"] == str(_answered(session))
    assert d["udp_send_errors"] == "0"
