"""On the robot: the policy node, the state estimator and the safety monitor on a real Go2.

Each node takes its package's parameters file (ros2_ws/src/<package>/config/, tuned in
rehearsal), then launch/config/robot/link.yaml — unitree_sdk2 DDS domain 0 on the Ethernet
interface wired to the robot (set its name there first) — then, for the policy node, the
robot-only choices (release the built-in sport controller, real-time control thread).

    ros2 launch launch/go2_robot.launch.py            (from the repository root)

Without `ros2 launch`, each node takes the same files in the same order (see launch/README.md):
    policy_node --ros-args --params-file ros2_ws/src/surrogait_policy/config/policy_node.yaml \\
        --params-file launch/config/robot/link.yaml --params-file launch/config/robot/policy_node.yaml
"""

import os

from launch import LaunchDescription
from launch_ros.actions import Node

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = os.path.join(REPO, "ros2_ws", "src")
# The policy file, in one place: the policy node runs it, the safety monitor reads its contract
# (control period, soft joint range).
POLICY = os.path.join(REPO, "training", "surrogait_train", "pretrained", "go2_trot.onnx")
ROBOT = os.path.join(REPO, "launch", "config", "robot")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # The safety monitor starts first: it must be watching before anything can move a motor.
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_safety", "config", "safety_monitor.yaml"),
                         os.path.join(ROBOT, "link.yaml"), {"policy_path": POLICY}]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_estimator", "config", "estimator.yaml"),
                         os.path.join(ROBOT, "link.yaml")]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_policy", "config", "policy_node.yaml"),
                         os.path.join(ROBOT, "link.yaml"), os.path.join(ROBOT, "policy_node.yaml"),
                         {"policy_path": POLICY}]),
    ])
