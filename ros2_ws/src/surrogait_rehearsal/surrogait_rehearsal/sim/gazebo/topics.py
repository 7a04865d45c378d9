"""The ROS topics between Gazebo (through `ros_gz_bridge`) and the Go2 bridge, in one place.

The Gazebo model (ros2_ws/src/surrogait_description/sdf/) publishes its sensors on these topics and
takes one force command per joint, and surrogait_bringup's config/gazebo/ros_gz_bridge.yaml brings them into
ROS. The bridge node (`gazebo_bridge`) and its MuJoCo stand-in (`gz_standin`) declare the same five
topic parameters with these defaults, so the two ends and the ros_gz_bridge file can be checked
against each other (tests/launch, tests/rehearsal_sim/test_gazebo_bridge_core.py).

Two of the names are patterns: `{leg}` is a leg in SDK order (FR, FL, RR, RL) and `{joint}` a joint
of the MJCF by its full name (e.g. FR_hip_joint), as gz-sim-apply-joint-force-system names its topic
`/model/<model>/joint/<joint>/cmd_force`.
"""

from __future__ import annotations

import dataclasses
import re

from surrogait_core.robot_spec import SDK_LEG_ORDER

# name -> (default, what travels on it)
TOPIC_PARAMETERS: dict[str, tuple[str, str]] = {
    "joint_states_topic": ("/model/go2/joint_states", "sensor_msgs/JointState from Gazebo (MJCF joint names, any "
                                                      "order; position, velocity)"),
    "imu_topic": ("/model/go2/imu", "sensor_msgs/Imu from Gazebo's base IMU (body frame; orientation, angular "
                                    "velocity, specific force)"),
    "foot_force_topic": ("/model/go2/foot_force/{leg}", "geometry_msgs/WrenchStamped per leg ({leg}: FR, FL, RR, "
                                                        "RL) from a force_torque sensor on the fixed foot joint, "
                                                        "in the foot's frame"),
    "odometry_topic": ("/model/go2/odometry", "nav_msgs/Odometry from gz-sim-odometry-publisher-system "
                                              "(dimensions 3): world pose, body-frame twist; ground truth"),
    "joint_force_topic": ("/model/go2/joint/{joint}/cmd_force",
                          "std_msgs/Float64 per joint ({joint}: e.g. FR_hip_joint), N m, to "
                          "gz-sim-apply-joint-force-system"),
}
PATTERNS = {"foot_force_topic": "{leg}", "joint_force_topic": "{joint}"}
_NAME = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)+$")


class TopicError(ValueError):
    """A topic parameter that cannot name a ROS topic; the message names the parameter."""


@dataclasses.dataclass(frozen=True)
class GazeboTopics:
    joint_states: str
    imu: str
    foot_force: str  # pattern with {leg}
    odometry: str
    joint_force: str  # pattern with {joint}

    @classmethod
    def from_params(cls, params: object) -> GazeboTopics:
        """From a parameter table that has the five `*_topic` fields; TopicError if one is malformed."""
        topics = cls(**{name.removesuffix("_topic"): getattr(params, name) for name in TOPIC_PARAMETERS})
        topics.validate()
        return topics

    def validate(self) -> None:
        for name in TOPIC_PARAMETERS:
            value = getattr(self, name.removesuffix("_topic"))
            placeholder = PATTERNS.get(name)
            if placeholder is not None and value.count(placeholder) != 1:
                raise TopicError(f"{name} {value!r} must contain {placeholder} exactly once")
            concrete = value.replace(placeholder, "X") if placeholder else value
            if not _NAME.match(concrete):
                raise TopicError(f"{name} {value!r} is not an absolute ROS topic name (/a/b_c, letters, digits, _)")

    def foot_force_topic(self, leg: str) -> str:
        return self.foot_force.replace("{leg}", leg)

    def joint_force_topic(self, joint: str) -> str:
        return self.joint_force.replace("{joint}", joint)

    def all_foot_force_topics(self) -> list[str]:
        return [self.foot_force_topic(leg) for leg in SDK_LEG_ORDER]


def gazebo_joint_name(sdk_joint: str) -> str:
    """The MJCF's (and so the SDF's) name of an SDK joint: FR_hip -> FR_hip_joint."""
    return f"{sdk_joint}_joint"
