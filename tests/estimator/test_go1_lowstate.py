"""The estimator on a Go1: LowState packets (go1_wire) on a loopback UDP port, where the safety monitor forwards
them, instead of the Go2's DDS. The stream refuses and counts what the SDK would refuse; the node as a process
publishes odometry from them."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from estimator.synthetic_robot import SyntheticRobot
from surrogait_core.estimator import ProprioSample
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go1_wire
from surrogait_core.wire.go2_wire import Gamepad, LowStateView
from surrogait_estimator.go1_lowstate_stream import Go1LowStateStream

STREAM_PORT, NODE_PORT = 18519, 18529  # this file's ports, away from the stack's default (8019)
DT = 0.002
HEIGHT_M = 0.27


def go1_packet(sample: ProprioSample, tick_ms: int) -> bytes:
    """A synthetic sample as the Go1 sends it (foot force in sensor counts, here the newtons rounded)."""
    view = LowStateView(tick_ms=tick_ms, quat_wxyz=sample.quat_wxyz, gyro_b=sample.gyro_b, accel_b=sample.accel_b,
                        joint_pos=sample.joint_pos, joint_vel=sample.joint_vel, joint_tau_est=np.zeros(12),
                        foot_force=np.maximum(0.0, sample.foot_force),
                        gamepad=Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0))
    return go1_wire.encode_lowstate(view)


def corrupted(packet: bytes) -> bytes:
    bad = bytearray(packet)
    bad[200] ^= 0xFF
    return bytes(bad)


@pytest.fixture(scope="module")
def robot():
    return SyntheticRobot(load_robot_spec("go1"), height_m=HEIGHT_M, seed=3)


def test_the_stream_hands_over_good_packets_in_order_and_counts_the_refused(robot):
    stream = Go1LowStateStream(STREAM_PORT)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        assert not stream.wait(0.01)
        good = [go1_packet(robot.sample(k * DT), 2 * k) for k in range(3)]
        for packet in (good[0], corrupted(good[1]), good[1], good[2][:-1], good[2] + b"\0", good[2]):
            sender.sendto(packet, ("127.0.0.1", STREAM_PORT))
        assert stream.wait(1.0)
        time.sleep(0.05)
        before = time.time()
        batch = stream.take_all()
        assert [raw.data for raw in batch] == good
        assert [go1_wire.decode_lowstate(raw.data).tick_ms for raw in batch] == [0, 2, 4]
        assert all(abs(raw.source_time_s - before) < 0.5 for raw in batch), "stamped with this host's clock"
        assert stream.refused == {"length": 2, "crc": 1} and stream.refused_total == 3
        assert stream.last_refusal == "length"
        assert stream.take_all() == [] and not stream.wait(0.01)
    finally:
        sender.close()
        stream.close()


def test_the_port_is_taken_by_one_stream_only():
    stream = Go1LowStateStream(STREAM_PORT)
    try:
        with pytest.raises(OSError):
            Go1LowStateStream(STREAM_PORT)
    finally:
        stream.close()


def wait_for_status(probe, node, predicate, timeout_s: float = 30.0):
    from surrogait_core import interfaces

    deadline = time.monotonic() + timeout_s
    while True:
        status = probe.estimator_status()
        if status is not None and predicate(status) and probe.node.count_publishers(interfaces.ODOM) >= 1:
            return status
        assert time.monotonic() < deadline and node.process.poll() is None, node.log
        time.sleep(0.05)


@pytest.mark.rehearsal
def test_the_node_publishes_odometry_from_go1_lowstate_on_its_udp_port(start_node, probe, robot):
    node = start_node("estimator_node", {"robot": "go1", "udp_lowstate_port": NODE_PORT})
    node.wait_for_log(f"state estimator for go1: Go1 LowState on UDP 127.0.0.1:{NODE_PORT}")
    level, message, _ = wait_for_status(probe, node, lambda s: True)
    assert level == 2 and f"no LowState yet on UDP 127.0.0.1:{NODE_PORT}" in message

    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    seconds, start = 3.0, time.monotonic()
    sent = 0
    for k in range(int(seconds / DT)):
        packet = go1_packet(robot.sample(k * DT), 2 * k)
        if k == 1000:  # a damaged packet and a truncated one, as a bad cable or a stray sender gives
            sender.sendto(corrupted(packet), ("127.0.0.1", NODE_PORT))
            sender.sendto(packet[:100], ("127.0.0.1", NODE_PORT))
        sender.sendto(packet, ("127.0.0.1", NODE_PORT))
        sent += 1
        time.sleep(max(0.0, start + (k + 1) * DT - time.monotonic()))
    sender.close()
    time.sleep(0.3)

    odom = [m for _, m in probe.odom]
    level, message, values = probe.estimator_status()
    assert len(odom) > 0.25 * sent / 5, (len(odom), values)  # every 5th accepted sample (100 Hz)
    m = odom[-1]
    assert (m.header.frame_id, m.child_frame_id) == ("odom", "base_link")
    assert abs(m.pose.pose.position.z - HEIGHT_M) < 0.01
    v = np.array([[o.twist.twist.linear.x, o.twist.twist.linear.y, o.twist.twist.linear.z] for o in odom[-100:]])
    assert np.abs(v.mean(axis=0)).max() < 0.02
    assert abs(m.pose.pose.orientation.w - 1.0) < 1e-3
    assert list(probe.contacts[-1][1].data) == [1, 1, 1, 1]
    # The refused packets are counted by reason with the estimator's own refusals; every good one is accounted for.
    assert (int(values["rejected_packet_crc"]), int(values["rejected_packet_length"])) == (1, 1), values
    assert int(values["rejected_total"]) == 2 and values["last_rejection"] == "packet_length", values
    accounted = sum(int(values[k]) for k in ("accepted", "skipped_samples", "dropped_samples"))
    assert sent - 20 <= accounted <= sent, values
    assert int(values["received"]) == int(values["accepted"]) + int(values["skipped_samples"]) + 2, values
    assert "error" not in node.log.lower(), node.log
    assert node.stop(timeout_s=20.0) == 0
    assert "2 rejected" in node.log, node.log
