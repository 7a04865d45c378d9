"""The bridge's direct CDR codec (ros_cdr) agrees with rclpy's own serialization both ways.

What ros_cdr encodes, rclpy decodes to the same message; what rclpy encodes, ros_cdr decodes to the
same values. (Not byte for byte: Fast DDS leaves its padding bytes uninitialised.) Frame ids of
every length 0-8 put the fields after them at every alignment, so a padding mistake cannot hide;
values are random.
"""

from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64

from surrogait_rehearsal.sim.gazebo import ros_cdr

OWN_TARGET = "make test-gazebo: the Gazebo path's rehearsals, a target of their own (scripts/run_tests.py)"

RNG = np.random.default_rng(7)
FRAMES = ["", "a", "ab", "abc", "go2/", "base_", "FR_foot", "go2/base", "world/x"]
STAMPS = [0.0, 1.5, 12.345678901, 1796148018.590150083]


def stamp(msg, t: float) -> None:
    msg.header.stamp.sec = int(t // 1)
    msg.header.stamp.nanosec = min(int(round((t - int(t // 1)) * 1e9)), 999_999_999)


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize("t", STAMPS)
def test_joint_state(frame, t):
    names = tuple(f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf"))
    pos, vel, eff = RNG.normal(size=(3, 12))
    msg = JointState(name=list(names), position=pos.tolist(), velocity=vel.tolist(), effort=eff.tolist())
    msg.header.frame_id = frame
    stamp(msg, t)
    back = deserialize_message(ros_cdr.encode_joint_state(t, frame, names, pos, vel, eff), JointState)
    assert back == msg
    got_t, got_names, got_pos, got_vel = ros_cdr.decode_joint_state(serialize_message(msg))
    assert got_t == pytest.approx(t, abs=1e-9) and tuple(got_names) == names
    np.testing.assert_array_equal(got_pos, pos)
    np.testing.assert_array_equal(got_vel, vel)


def test_joint_state_without_velocities_decodes_empty():
    msg = JointState(name=["a"], position=[1.0])
    _, names, pos, vel = ros_cdr.decode_joint_state(serialize_message(msg))
    assert names == ["a"] and pos.tolist() == [1.0] and vel.size == 0


@pytest.mark.parametrize("frame", FRAMES)
def test_imu(frame):
    q = RNG.normal(size=4)
    gyro, acc = RNG.normal(size=(2, 3))
    msg = Imu()
    msg.header.frame_id = frame
    stamp(msg, 3.25)
    msg.orientation.w, msg.orientation.x, msg.orientation.y, msg.orientation.z = q.tolist()
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = gyro.tolist()
    msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = acc.tolist()
    assert deserialize_message(ros_cdr.encode_imu(3.25, frame, q, gyro, acc), Imu) == msg
    got_q, got_gyro, got_acc = ros_cdr.decode_imu(serialize_message(msg))
    np.testing.assert_array_equal(got_q, q)
    np.testing.assert_array_equal(got_gyro, gyro)
    np.testing.assert_array_equal(got_acc, acc)


@pytest.mark.parametrize("frame", FRAMES)
def test_wrench_stamped(frame):
    force, torque = RNG.normal(size=(2, 3))
    msg = WrenchStamped()
    msg.header.frame_id = frame
    stamp(msg, 7.0)
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = force.tolist()
    msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = torque.tolist()
    assert deserialize_message(ros_cdr.encode_wrench_stamped(7.0, frame, force, torque), WrenchStamped) == msg
    np.testing.assert_array_equal(ros_cdr.decode_wrench_force(serialize_message(msg)), force)


def test_float64_both_ways_and_a_foreign_encoding_is_refused():
    for v in (0.0, -1.5, 23.7, 1e-300):
        assert ros_cdr.encode_float64(v) == serialize_message(Float64(data=v))  # no padding in a Float64
        assert ros_cdr.decode_float64(serialize_message(Float64(data=v))) == v
        assert deserialize_message(ros_cdr.encode_float64(v), Float64).data == v
    big_endian = b"\x00\x00\x00\x00" + bytes(8)
    with pytest.raises(ros_cdr.CdrError):
        ros_cdr.decode_float64(big_endian)
    with pytest.raises(ros_cdr.CdrError):
        ros_cdr.decode_imu(big_endian + bytes(300))
