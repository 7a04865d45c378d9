"""The Go1 wire codec (go1_wire) against the vendor's SDK (unitree_legged_sdk 3.8) over real UDP on 127.0.0.1.

A plain socket plays the robot at the address the SDK targets: it captures what `udp.Send()` puts on
the wire (LowCmd) and sends LowStates from the one address the SDK's connect()ed socket accepts.
"""

from __future__ import annotations

import dataclasses
import platform
import socket
import struct
import sys
import time

import numpy as np
import pytest

from surrogait_core.wire import go1_wire
from surrogait_core.wire.go1_wire import Go1WireError
from surrogait_core.wire.go2_wire import Gamepad, LowStateView

# The SDK's Python binding has a wheel for CPython 3.11 on x86_64 only: it is the oracle where it installs (the
# default `make test`, where it must be there); elsewhere (`make test-jazzy`, Python 3.12) the comparison is skipped.
if (sys.version_info[:2], platform.machine()) != ((3, 11), "x86_64"):
    pytest.skip("unitree_legged_sdk (the oracle) has a cp311 x86_64 wheel only", allow_module_level=True)
from unitree_legged_sdk import robot_interface as ri  # noqa: E402

HOST = "127.0.0.1"
ROBOT_PORT = 27107  # the robot's end, where the SDK sends
SDK_PORT = 27180  # the SDK's local port
STRANGER_PORT = 27108  # a third party on the same host
LOW_LEVEL = 0xFF
N = go1_wire.NUM_MOTORS


class Link:
    """The SDK's UDP client and a plain socket at the address it targets."""

    def __init__(self) -> None:
        self.robot = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.robot.bind((HOST, ROBOT_PORT))
        self.robot.settimeout(1.0)
        self.udp = ri.UDP(LOW_LEVEL, SDK_PORT, HOST, ROBOT_PORT)

    def sdk_lowcmd(self, q, dq, kp, kd, tau, wireless_remote: bytes | None = None) -> bytes:
        """The packet the SDK sends for these values (the 8 unused slots as InitCmdData leaves them)."""
        cmd = ri.LowCmd()
        self.udp.InitCmdData(cmd)
        for i in range(N):
            m = cmd.motorCmd[i]
            m.q, m.dq, m.Kp, m.Kd, m.tau = float(q[i]), float(dq[i]), float(kp[i]), float(kd[i]), float(tau[i])
        if wireless_remote is not None:
            cmd.wirelessRemote = list(wireless_remote)
        self.udp.SetSend(cmd)
        self.udp.Send()
        packet, _ = self.robot.recvfrom(2048)
        return packet

    def deliver(self, packet: bytes, wait_s: float = 0.1) -> tuple[int, object]:
        """Send `packet` to the SDK from the robot's address: (udp.Recv()'s result, the SDK's LowState).
        Recv is non-blocking (-1: nothing taken); it is polled until it takes something or `wait_s`."""
        self.robot.sendto(packet, (HOST, SDK_PORT))
        deadline = time.monotonic() + wait_s
        while (result := self.udp.Recv()) == -1 and time.monotonic() < deadline:
            time.sleep(0.001)
        state = ri.LowState()
        self.udp.GetRecv(state)
        return result, state


@pytest.fixture(scope="module")
def link():
    link = Link()
    yield link
    link.robot.close()


def random_command(seed: int):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2.5, 2.5, N), rng.uniform(-20.0, 20.0, N), rng.uniform(0.0, 120.0, N),
            rng.uniform(0.0, 8.0, N), rng.uniform(-40.0, 40.0, N))


def random_state(seed: int, tick_ms: int = 123_456) -> LowStateView:
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=4)
    return LowStateView(
        tick_ms=tick_ms, quat_wxyz=quat / np.linalg.norm(quat), gyro_b=rng.normal(0, 2, 3),
        accel_b=rng.normal(0, 10, 3), joint_pos=rng.uniform(-2.5, 2.5, N), joint_vel=rng.uniform(-20, 20, N),
        joint_tau_est=rng.uniform(-40, 40, N), foot_force=rng.integers(0, 400, 4).astype(np.float64),
        gamepad=Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0))


def reseal(packet: bytearray) -> bytes:
    struct.pack_into("<I", packet, len(packet) - 4, go1_wire.packet_crc(packet))
    return bytes(packet)


# ---- LowCmd: what the policy side sends -------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_lowcmd_is_the_sdks_packet_byte_for_byte(link, seed):
    q, dq, kp, kd, tau = random_command(seed)
    remote = bytes(np.random.default_rng(100 + seed).integers(0, 256, 40, dtype=np.uint8))
    sdk = link.sdk_lowcmd(q, dq, kp, kd, tau, remote)
    ours = go1_wire.encode_lowcmd(q, dq, kp, kd, tau, wireless_remote=remote)
    assert len(sdk) == go1_wire.LOWCMD_LENGTH
    assert ours == sdk, f"first difference at byte {next(i for i in range(len(sdk)) if ours[i] != sdk[i])}"
    # And the decoder reads back what the SDK was given: q/dq as float32, gains and torque to one count.
    decoded = go1_wire.decode_lowcmd(sdk)
    assert decoded.crc_ok and decoded.head == go1_wire.HEAD and decoded.level_flag == go1_wire.LEVEL_LOW
    np.testing.assert_array_equal(decoded.motors.q, q.astype(np.float32))
    np.testing.assert_array_equal(decoded.motors.dq, dq.astype(np.float32))
    np.testing.assert_allclose(decoded.motors.kp, kp, atol=1 / go1_wire.KP_SCALE)
    np.testing.assert_allclose(decoded.motors.kd, kd, atol=1 / go1_wire.KD_SCALE)
    np.testing.assert_allclose(decoded.motors.tau, tau, atol=1 / go1_wire.TAU_SCALE)
    assert np.all(decoded.raw_mode == go1_wire.GO1_MODE_SERVO) and decoded.wireless_remote == remote


@pytest.mark.parametrize("kd", [0.5, 1.0, 3.0])
def test_damping_is_the_sdks_packet_with_kp_0_and_no_targets(link, kd):
    zeros = np.zeros(N)
    assert go1_wire.damping_lowcmd(kd) == link.sdk_lowcmd(zeros, zeros, zeros, np.full(N, kd), zeros)
    motors = go1_wire.decode_lowcmd(go1_wire.damping_lowcmd(kd)).motors
    assert motors.is_damping and not motors.is_stiff


def test_gains_and_torques_just_below_the_wrap_limits_survive_as_the_sdk_sends_them(link):
    kp = np.array([go1_wire.KP_MAX, 2047.9, 1024.0, 0.0] * 3)
    kd = np.array([go1_wire.KD_MAX, 4095.9, 0.0, 1.0] * 3)
    tau = np.array([go1_wire.TAU_MAX_NM, -go1_wire.TAU_MAX_NM, 127.99, -127.99] * 3)
    q = dq = np.zeros(N)
    sdk = link.sdk_lowcmd(q, dq, kp, kd, tau)
    assert go1_wire.encode_lowcmd(q, dq, kp, kd, tau) == sdk
    motors = go1_wire.decode_lowcmd(sdk).motors
    np.testing.assert_allclose(motors.kp, kp, atol=1 / go1_wire.KP_SCALE)
    np.testing.assert_allclose(motors.kd, kd, atol=1 / go1_wire.KD_SCALE)
    np.testing.assert_allclose(motors.tau, tau, atol=1 / go1_wire.TAU_SCALE)


@pytest.mark.parametrize(("field", "value"), [
    ("kp", 2048.0), ("kp", 5000.0), ("kp", -1.0), ("kp", float("nan")),
    ("kd", 4096.0), ("kd", float("inf")),
    ("tau", 128.0), ("tau", -128.0), ("tau", -200.0), ("tau", float("nan")),
    ("q", float("nan")), ("dq", float("inf")),
])
def test_values_the_packet_would_wrap_are_refused(field, value):
    values = dict(zip(("q", "dq", "kp", "kd", "tau"), (np.zeros(N) for _ in range(5)), strict=True))
    values[field][3] = value
    with pytest.raises(Go1WireError, match=field):
        go1_wire.encode_lowcmd(**values)


@pytest.mark.parametrize(("field", "value", "sent"), [
    ("kp", 2048.0, 0.0),  # 65536 counts: the low 16 bits are 0
    ("kd", 4096.0, 0.0),
    ("tau", 128.0, -128.0),  # 32768 counts read back as int16
    ("tau", -128.5, 127.5),
])
def test_what_the_sdk_would_send_instead_of_a_refused_value(link, field, value, sent):
    """Why encode_lowcmd refuses: the SDK wraps silently, so the robot would get another command."""
    values = dict(zip(("q", "dq", "kp", "kd", "tau"), (np.zeros(N) for _ in range(5)), strict=True))
    values[field][0] = value
    sdk = link.sdk_lowcmd(**values)
    assert go1_wire.encode_lowcmd(**values, check=False) == sdk
    assert getattr(go1_wire.decode_lowcmd(sdk).motors, field)[0] == sent


def test_lowcmd_drop_reasons_are_length_crc_head_and_level_flag(link):
    zeros = np.zeros(N)
    good = link.sdk_lowcmd(zeros, zeros, np.full(N, 20.0), np.full(N, 0.5), zeros)
    assert go1_wire.lowcmd_drop_reason(good) is None
    assert go1_wire.lowcmd_drop_reason(good[:-1]) == "length"
    assert go1_wire.lowcmd_drop_reason(good + b"\0") == "length"
    assert go1_wire.lowcmd_drop_reason(b"") == "length"
    flipped = bytearray(good)
    flipped[22 + 1] ^= 0x40  # motor 0's q
    assert go1_wire.lowcmd_drop_reason(bytes(flipped)) == "crc"
    assert not go1_wire.decode_lowcmd(bytes(flipped)).crc_ok
    head = bytearray(good)
    head[1] = 0xEE
    assert go1_wire.lowcmd_drop_reason(reseal(head)) == "head"
    high_level = bytearray(good)
    high_level[2] = 0xEE  # the SDK's HIGHLEVEL flag
    assert go1_wire.lowcmd_drop_reason(reseal(high_level)) == "level_flag"
    with pytest.raises(Go1WireError, match="614"):
        go1_wire.decode_lowcmd(good[:-1])


# ---- LowState: what the robot sends back -------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_lowstate_is_accepted_and_decoded_by_the_sdk(link, seed):
    view = random_state(seed, tick_ms=1000 * seed + 7)
    rpy = np.random.default_rng(seed).uniform(-3, 3, 3)
    remote = bytes(np.random.default_rng(200 + seed).integers(0, 256, 40, dtype=np.uint8))
    packet = go1_wire.encode_lowstate(view, rpy, wireless_remote=remote)
    assert len(packet) == go1_wire.LOWSTATE_LENGTH and go1_wire.lowstate_drop_reason(packet) is None

    result, state = link.deliver(packet)
    assert result == 0
    f32 = np.float32
    motors = [state.motorState[i] for i in range(N)]
    np.testing.assert_array_equal([m.q for m in motors], view.joint_pos.astype(f32))
    np.testing.assert_array_equal([m.dq for m in motors], view.joint_vel.astype(f32))
    np.testing.assert_allclose([m.tauEst for m in motors], view.joint_tau_est, atol=1 / go1_wire.TAU_SCALE)
    assert all(m.mode == go1_wire.GO1_MODE_SERVO for m in motors)
    np.testing.assert_array_equal(state.imu.quaternion, view.quat_wxyz.astype(f32))
    np.testing.assert_array_equal(state.imu.gyroscope, view.gyro_b.astype(f32))
    np.testing.assert_array_equal(state.imu.accelerometer, view.accel_b.astype(f32))
    np.testing.assert_array_equal(state.imu.rpy, rpy.astype(f32))
    assert list(state.footForce) == list(view.foot_force) == list(state.footForceEst)
    assert state.tick == view.tick_ms
    assert bytes(state.wirelessRemote) == remote
    # go1_wire's own decoder reads the packet as the SDK does.
    ours = go1_wire.decode_lowstate(packet)
    np.testing.assert_array_equal(ours.joint_pos, [m.q for m in motors])
    np.testing.assert_array_equal(ours.joint_tau_est, [m.tauEst for m in motors])
    np.testing.assert_array_equal(ours.quat_wxyz, state.imu.quaternion)
    assert ours.tick_ms == state.tick and list(ours.foot_force) == list(state.footForce)


def test_the_gamepad_reaches_the_sdk_in_wireless_remote(link):
    from surrogait_core.wire import go2_wire

    pad = Gamepad(go2_wire.STAND_UP_KEYS, lx=0.5, ly=-0.25, rx=0.0, ry=1.0)
    view = dataclasses.replace(random_state(7), gamepad=pad)
    result, state = link.deliver(go1_wire.encode_lowstate(view))
    assert result == 0
    assert go2_wire.decode_gamepad(list(state.wirelessRemote)) == pad


@pytest.mark.parametrize("at", [
    0,  # head: the SDK ignores the datagram altogether (Recv -1)
    2,  # levelFlag
    100,  # a motor's q
    700,  # footForce
    790,  # wirelessRemote
    go1_wire.LOWSTATE_LENGTH - 4,  # the crc itself
])
def test_a_lowstate_with_one_flipped_byte_is_refused(link, at):
    assert link.deliver(go1_wire.encode_lowstate(random_state(1, tick_ms=555)))[0] == 0
    packet = bytearray(go1_wire.encode_lowstate(random_state(2, tick_ms=777)))
    packet[at] ^= 0x01
    result, state = link.deliver(bytes(packet))
    assert result != 0
    assert state.tick == 555, "the SDK's state must not take the refused packet"
    assert go1_wire.lowstate_drop_reason(bytes(packet)) == "crc"


def test_the_crc_does_not_cover_the_bytes_between_the_last_whole_word_and_the_crc(link):
    """A protocol quirk both sides share: an 807-byte LowState has 200 whole words before its crc
    (bytes 0-799); bytes 800-802 are outside the CRC, so a change there passes both checks."""
    packet = bytearray(go1_wire.encode_lowstate(random_state(3, tick_ms=888)))
    packet[801] ^= 0x01
    assert go1_wire.lowstate_drop_reason(bytes(packet)) is None
    assert link.deliver(bytes(packet))[0] == 0


def test_lowstate_drop_reason_refuses_a_wrong_length(link):
    packet = go1_wire.encode_lowstate(random_state(4))
    assert go1_wire.lowstate_drop_reason(packet[:-1]) == "length"
    assert go1_wire.lowstate_drop_reason(go1_wire.damping_lowcmd(1.0)) == "length"
    assert link.deliver(packet[:-1])[0] != 0  # the SDK refuses it too
    with pytest.raises(Go1WireError, match="807"):
        go1_wire.decode_lowstate(packet[:-1])


def test_the_sdk_only_takes_lowstates_from_the_address_it_targets(link):
    """Its socket is connect()ed to the robot's ip:port: whoever answers must answer from there."""
    assert link.deliver(go1_wire.encode_lowstate(random_state(5, tick_ms=1001)))[0] == 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
        stranger.bind((HOST, STRANGER_PORT))
        stranger.sendto(go1_wire.encode_lowstate(random_state(6, tick_ms=2002)), (HOST, SDK_PORT))
    time.sleep(0.01)
    assert link.udp.Recv() == -1
    state = ri.LowState()
    link.udp.GetRecv(state)
    assert state.tick == 1001
