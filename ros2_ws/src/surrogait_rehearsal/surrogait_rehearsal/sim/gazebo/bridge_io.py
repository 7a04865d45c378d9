"""The bridge's ROS side towards Gazebo: sensor topics taken into a `GazeboState`, joint forces sent out.

Both are driven by the bridge's control loop (polled subscriptions, see polled_topics): the inputs
are read at the start of a cycle, the forces written at its end.
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
from rclpy.serialization import deserialize_message

from surrogait_core.robot_spec import SDK_LEG_ORDER
from surrogait_rehearsal.sim.gazebo import ros_cdr
from surrogait_rehearsal.sim.gazebo.bridge_core import GazeboInputError, GazeboState
from surrogait_rehearsal.sim.gazebo.polled_topics import PolledSubscription, command_qos
from surrogait_rehearsal.sim.gazebo.topics import GazeboTopics


def stamp_s(msg) -> float:
    """A message's header stamp in seconds (Gazebo's simulation time through ros_gz_bridge)."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


# Each input as raw CDR (ros_cdr: a fraction of rclpy's conversion cost), with rclpy's deserializer for
# anything that is not plain little-endian CDR.
def read_joint_state(data: bytes, msg_type: type) -> tuple[float, list[str], np.ndarray, np.ndarray]:
    try:
        return ros_cdr.decode_joint_state(data)
    except ros_cdr.CdrError:
        m = deserialize_message(data, msg_type)
        return stamp_s(m), list(m.name), np.asarray(m.position), np.asarray(m.velocity)


def read_imu(data: bytes, msg_type: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        return ros_cdr.decode_imu(data)
    except ros_cdr.CdrError:
        m = deserialize_message(data, msg_type)
        o, w, a = m.orientation, m.angular_velocity, m.linear_acceleration
        return np.array([o.w, o.x, o.y, o.z]), np.array([w.x, w.y, w.z]), np.array([a.x, a.y, a.z])


def read_wrench_force(data: bytes, msg_type: type) -> np.ndarray:
    try:
        return ros_cdr.decode_wrench_force(data)
    except ros_cdr.CdrError:
        f = deserialize_message(data, msg_type).wrench.force
        return np.array([f.x, f.y, f.z])


@dataclasses.dataclass
class PollResult:
    new_joint_state: bool = False
    odometry: object | None = None  # the newest nav_msgs/Odometry since the last poll
    errors: list[str] = dataclasses.field(default_factory=list)  # messages refused, why


class GazeboInputs:
    """Polled subscriptions to Gazebo's joint states, IMU, four foot wrenches and odometry, on `node`
    (a node no executor spins)."""

    def __init__(self, node, topics: GazeboTopics) -> None:
        from geometry_msgs.msg import WrenchStamped
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import Imu, JointState

        self.joint_states = PolledSubscription(node, JointState, topics.joint_states, raw=True)
        self.imu = PolledSubscription(node, Imu, topics.imu, raw=True)
        self.feet = [PolledSubscription(node, WrenchStamped, topics.foot_force_topic(leg), raw=True)
                     for leg in SDK_LEG_ORDER]
        self.odometry = PolledSubscription(node, Odometry, topics.odometry)  # 100 Hz, republished whole

    def poll_joint_state(self, state: GazeboState, now_s: float) -> PollResult:
        """Take the newest joint state into `state` (arrival time `now_s`), and the newest odometry."""
        out = PollResult()
        data = self.joint_states.take_latest()
        if data is not None:
            try:
                stamp, names, pos, vel = read_joint_state(data, self.joint_states.msg_type)
                state.set_joints(names, pos, vel, stamp, now_s)
                out.new_joint_state = True
            except (GazeboInputError, ValueError, struct.error) as e:
                out.errors.append(f"joint state: {e}")
        out.odometry = self.odometry.take_latest()
        return out

    def poll_sensors(self, state: GazeboState, now_s: float, out: PollResult) -> None:
        """Take the newest IMU sample and foot wrenches into `state` (what a LowState needs beyond the joints)."""
        data = self.imu.take_latest()
        if data is not None:
            try:
                state.set_imu(*read_imu(data, self.imu.msg_type), now_s)
            except (GazeboInputError, ValueError, struct.error) as e:
                out.errors.append(f"IMU: {e}")
        for leg, sub in enumerate(self.feet):
            data = sub.take_latest()
            if data is not None:
                try:
                    state.set_foot_force(leg, read_wrench_force(data, sub.msg_type))
                except (ValueError, struct.error) as e:
                    out.errors.append(f"{SDK_LEG_ORDER[leg]} foot wrench: {e}")

    def counts(self) -> dict[str, int]:
        """Messages taken per input so far."""
        return {"joint_states": self.joint_states.taken, "imu": self.imu.taken,
                "foot_force": sum(s.taken for s in self.feet), "odometry": self.odometry.taken}


class JointForceOutputs:
    """One std_msgs/Float64 publisher per joint (gz-sim-apply-joint-force-system holds each value until the next),
    each value published as its CDR bytes (ros_cdr: ~13 µs a message here against ~34 µs for a Float64 object)."""

    def __init__(self, node, topics: GazeboTopics, joint_names: tuple[str, ...]) -> None:
        from std_msgs.msg import Float64

        self.topics = [topics.joint_force_topic(j) for j in joint_names]
        self._pubs = [node.create_publisher(Float64, t, command_qos()) for t in self.topics]

    def publish(self, tau: np.ndarray) -> None:
        """Joint forces (N·m) in the order of `joint_names` (SDK order)."""
        for pub, value in zip(self._pubs, tau.tolist(), strict=True):
            pub.publish(ros_cdr.encode_float64(value))
