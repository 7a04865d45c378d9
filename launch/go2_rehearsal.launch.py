"""Rehearsal: the MuJoCo Go2 simulator and the deployment nodes, all on this machine.

The simulator speaks the robot's unitree_sdk2 DDS protocol on domain 1 over `lo`, so the
policy node, the state estimator and the safety monitor run exactly as on the robot. Each node
takes its package's own parameters file (ros2_ws/src/<package>/config/), whose defaults are the
rehearsal's.

    ros2 launch launch/go2_rehearsal.launch.py        (from the repository root)

Without `ros2 launch`, each node starts the same way (see launch/README.md):
    go2_sim --ros-args --params-file ros2_ws/src/surrogait_rehearsal/config/go2_sim.yaml  (and so on)
"""

import os

from launch import LaunchDescription
from launch.actions import SetEnvironmentVariable
from launch_ros.actions import Node

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = os.path.join(REPO, "ros2_ws", "src")
# The policy file, in one place: the policy node runs it, the safety monitor reads its contract
# (control period, soft joint range).
POLICY = os.path.join(REPO, "training", "surrogait_train", "pretrained", "go2_trot.onnx")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # ROS traffic stays on this machine and off the robot's domain.
        SetEnvironmentVariable("ROS_DOMAIN_ID", "1"),
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
        Node(package="surrogait_rehearsal", executable="go2_sim", name="go2_sim", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_rehearsal", "config", "go2_sim.yaml")]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_estimator", "config", "estimator.yaml")]),
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_safety", "config", "safety_monitor.yaml"),
                         {"policy_path": POLICY}]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_policy", "config", "policy_node.yaml"),
                         {"policy_path": POLICY}]),
    ])
