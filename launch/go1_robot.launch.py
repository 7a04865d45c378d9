"""On the robot: the policy node, the state estimator and the safety monitor on a real Go1.

The Go1's low level is UDP (unitree_legged_sdk), point to point: the safety monitor is the link's
gateway (the only socket to the robot at 192.168.123.10:8007); the policy node sends its LowCmds to
it on 127.0.0.1 and the estimator gets every LowState from it (docs/go1.md). Each node takes its
package's parameters file (ros2_ws/src/<package>/config/, tuned in rehearsal), then
launch/config/go1_robot/link.yaml (set the monitor's network_interface there first), then, for the
policy node, the robot-only choices. Put the Go1 in low-level mode with its remote first.

    ros2 launch launch/go1_robot.launch.py            (from the repository root)

Without `ros2 launch`, each node takes the same files in the same order (see launch/README.md):
    safety_monitor --ros-args --params-file ros2_ws/src/surrogait_safety/config/safety_monitor.yaml \\
        --params-file launch/config/go1_robot/link.yaml \\
        -p policy_path:=training/surrogait_train/pretrained/go1_trot.onnx
"""

import os

from launch import LaunchDescription
from launch_ros.actions import Node

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = os.path.join(REPO, "ros2_ws", "src")
# The policy file, in one place: the policy node runs it, the safety monitor reads its contract
# (control period, soft joint range).
POLICY = os.path.join(REPO, "training", "surrogait_train", "pretrained", "go1_trot.onnx")
LINK = os.path.join(REPO, "launch", "config", "go1_robot", "link.yaml")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # The safety monitor starts first: it owns the link, nothing reaches a motor without it.
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_safety", "config", "safety_monitor.yaml"), LINK,
                         {"policy_path": POLICY}]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_estimator", "config", "estimator.yaml"), LINK]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_policy", "config", "policy_node.yaml"), LINK,
                         os.path.join(REPO, "launch", "config", "go1_robot", "policy_node.yaml"),
                         {"policy_path": POLICY}]),
    ])
