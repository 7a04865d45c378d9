"""Rehearsal: the MuJoCo Go1 simulator and the deployment nodes, all on this machine.

The simulator plays the Go1's end of its low-level UDP link (unitree_legged_sdk packets, CRC and
level checked) on 127.0.0.1:8007, so the policy node, the state estimator and the safety monitor
(the link's gateway) run exactly as on the robot (launch/go1_robot.launch.py). Each node takes its
package's own parameters file, then launch/config/go1_rehearsal/link.yaml.

    ros2 launch launch/go1_rehearsal.launch.py        (from the repository root)
"""

import os

from launch import LaunchDescription
from launch.actions import SetEnvironmentVariable
from launch_ros.actions import Node

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = os.path.join(REPO, "ros2_ws", "src")
# The policy file, in one place: the policy node runs it, the safety monitor reads its contract.
POLICY = os.path.join(REPO, "training", "surrogait_train", "pretrained", "go1_trot.onnx")
LINK = os.path.join(REPO, "launch", "config", "go1_rehearsal", "link.yaml")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # ROS traffic stays on this machine and off the robot's domain.
        SetEnvironmentVariable("ROS_DOMAIN_ID", "1"),
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
        Node(package="surrogait_rehearsal", executable="go1_sim", name="go1_sim", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_rehearsal", "config", "go1_sim.yaml"), LINK]),
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_safety", "config", "safety_monitor.yaml"), LINK,
                         {"policy_path": POLICY}]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_estimator", "config", "estimator.yaml"), LINK]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_policy", "config", "policy_node.yaml"), LINK,
                         {"policy_path": POLICY}]),
    ])
