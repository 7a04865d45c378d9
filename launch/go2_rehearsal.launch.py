"""Rehearsal: the MuJoCo Go2 simulator and the deployment nodes, all on this machine.

The simulator speaks the robot's unitree_sdk2 DDS protocol on domain 1 over `lo`, so the
policy node, the state estimator and the safety monitor run exactly as on the robot.

    ros2 launch launch/go2_rehearsal.launch.py        (from the repository root)

Without `ros2 launch` (not installable on every machine), each node starts the same way:
    go2_sim --ros-args --params-file launch/config/rehearsal/go2_sim.yaml  (and so on)
"""

import os

from launch import LaunchDescription
from launch.actions import SetEnvironmentVariable
from launch_ros.actions import Node

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config", "rehearsal")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # ROS traffic stays on this machine and off the robot's domain.
        SetEnvironmentVariable("ROS_DOMAIN_ID", "1"),
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
        Node(package="surrogait_rehearsal", executable="go2_sim", name="go2_sim", output="screen",
             parameters=[os.path.join(CONFIG, "go2_sim.yaml")]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(CONFIG, "estimator.yaml")]),
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(CONFIG, "safety_monitor.yaml")]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(CONFIG, "policy_node.yaml")]),
    ])
