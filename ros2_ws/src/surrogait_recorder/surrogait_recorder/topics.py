"""What a session recording holds: the ROS 2 topics of the stack, the robot's wire, in one table.

ROS topics are recorded as their publishers serialized them (raw CDR, no conversion in Python); the Go2's wire
as its DDS samples (unitree_go/msg/LowState and LowCmd, message_definitions); the Go1's wire, which is not CDR
but the vendor SDK's packed structs over UDP, as decoded fields in standard messages (GO1_WIRE_TOPICS).
"""

from __future__ import annotations

import dataclasses

from surrogait_core import interfaces
from surrogait_core.wire import go2_wire


@dataclasses.dataclass(frozen=True)
class RecordedTopic:
    name: str  # as the stack names it (a relative name is in the root namespace: "/" + name)
    type_name: str  # ROS 2 type, "<package>/msg/<Type>"
    latched: bool = False  # its publishers are transient local (read with a transient-local reader: what they
    # published before the recorder matched them arrives too; a volatile publisher would not match such a reader)

    @property
    def resolved(self) -> str:
        return self.name if self.name.startswith("/") else "/" + self.name


ROS_TOPICS: tuple[RecordedTopic, ...] = (
    # the commands
    RecordedTopic(interfaces.CMD_VEL, "geometry_msgs/msg/Twist"),
    RecordedTopic(interfaces.ESTOP_TOPIC, "std_msgs/msg/Bool"),
    # the policy node: its state, gait, the joint states and IMU it reads, its loop's diagnostics
    RecordedTopic(interfaces.POLICY_STATE, "std_msgs/msg/String", latched=True),
    RecordedTopic(interfaces.POLICY_GAIT, "std_msgs/msg/String", latched=True),
    RecordedTopic(interfaces.JOINT_STATES, "sensor_msgs/msg/JointState"),
    RecordedTopic(interfaces.IMU, "sensor_msgs/msg/Imu"),
    # the state estimator
    RecordedTopic(interfaces.ODOM, "nav_msgs/msg/Odometry"),
    RecordedTopic(interfaces.CONTACTS, "std_msgs/msg/UInt8MultiArray"),
    # the safety monitor's verdicts (its fault log is attached when the file ends, where it is given)
    RecordedTopic(interfaces.SAFETY_STATE, "std_msgs/msg/String", latched=True),
    # every node's diagnostics and log lines (faults and refusals as the nodes logged them)
    RecordedTopic(interfaces.DIAGNOSTICS, "diagnostic_msgs/msg/DiagnosticArray"),
    RecordedTopic("/rosout", "rcl_interfaces/msg/Log", latched=True),  # rcl's rosout keeps 1000 lines (10 s)
    # rehearsal only (nothing publishes them on a robot): the simulator's ground truth, the operator's gamepad
    # and pushes
    RecordedTopic(interfaces.SIM_GROUND_TRUTH, "nav_msgs/msg/Odometry"),
    RecordedTopic(interfaces.SIM_GAMEPAD, "sensor_msgs/msg/Joy"),
    RecordedTopic(interfaces.SIM_PUSH, "geometry_msgs/msg/Twist"),
)

# The Go2's wire: DDS samples, as they are on the wire.
GO2_LOWSTATE = RecordedTopic(go2_wire.LOWSTATE_TOPIC, "unitree_go/msg/LowState")
GO2_LOWCMD = RecordedTopic(go2_wire.LOWCMD_TOPIC, "unitree_go/msg/LowCmd")

# The Go1's wire, decoded (motors in SDK order, named as the joints are):
#   udp/lowstate/joints  sensor_msgs/JointState: position q, velocity dq, effort tau_est
#   udp/lowstate/imu     sensor_msgs/Imu: orientation, angular velocity, linear acceleration (body frame)
#   udp/lowcmd/targets   sensor_msgs/JointState: position q, velocity dq, effort tau (feed-forward)
#   udp/lowcmd/gains     sensor_msgs/JointState: position = kp (N m/rad), velocity = kd (N m s/rad)
GO1_LOWSTATE_JOINTS = RecordedTopic("udp/lowstate/joints", "sensor_msgs/msg/JointState")
GO1_LOWSTATE_IMU = RecordedTopic("udp/lowstate/imu", "sensor_msgs/msg/Imu")
GO1_LOWCMD_TARGETS = RecordedTopic("udp/lowcmd/targets", "sensor_msgs/msg/JointState")
GO1_LOWCMD_GAINS = RecordedTopic("udp/lowcmd/gains", "sensor_msgs/msg/JointState")
GO1_WIRE_TOPICS = (GO1_LOWSTATE_JOINTS, GO1_LOWSTATE_IMU, GO1_LOWCMD_TARGETS, GO1_LOWCMD_GAINS)
