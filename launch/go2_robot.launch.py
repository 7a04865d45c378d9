"""On the robot: the policy node, the state estimator and the safety monitor on a real Go2.

unitree_sdk2 DDS on domain 0 over the Ethernet interface wired to the robot (192.168.123.x);
set `network_interface` in launch/config/robot/*.yaml to that interface's name first. The
policy node releases the built-in sport controller before it takes low-level control.

    ros2 launch launch/go2_robot.launch.py            (from the repository root)

Without `ros2 launch`, each node starts the same way:
    policy_node --ros-args --params-file launch/config/robot/policy_node.yaml  (and so on)
"""

import os

from launch import LaunchDescription
from launch_ros.actions import Node

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config", "robot")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # The safety monitor starts first: it must be watching before anything can move a motor.
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(CONFIG, "safety_monitor.yaml")]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(CONFIG, "estimator.yaml")]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(CONFIG, "policy_node.yaml")]),
    ])
