"""Gazebo rehearsal: the Go2 in Gazebo Harmonic, bridged onto the Go2's own wire, and the deployment nodes.

    ros2 launch launch/go2_gazebo.launch.py        (from the repository root; needs Gazebo Harmonic,
                                                    ros_gz_sim and ros_gz_bridge: launch/README.md)

- `gz sim -s -r` runs the world ros2_ws/src/surrogait_description/sdf/worlds/go2_flat.sdf headless. The
  world includes the Go2 model (`model://go2`, found through GZ_SIM_RESOURCE_PATH), so there is no
  separate spawn step (`ros_gz_sim create`).
- ros_gz_bridge's `parameter_bridge` carries the model's topics into ROS (launch/config/gazebo/ros_gz_bridge.yaml):
  joint states, IMU, foot wrenches and odometry out of Gazebo, one force command per joint into it.
- `gazebo_bridge` turns those topics into the Go2's unitree_sdk2 DDS wire (rt/lowstate out, rt/lowcmd in,
  CRC checked) on domain 1 over `lo`, so the policy node, the state estimator and the safety monitor run
  exactly as against the robot (launch/go2_robot.launch.py) or go2_sim (launch/go2_rehearsal.launch.py).

Without `ros2 launch`: `python -m surrogait_rehearsal.demo --simulator gazebo` starts the same processes
and drives a scripted session.
"""

import os

from launch import LaunchDescription
from launch.actions import ExecuteProcess, SetEnvironmentVariable
from launch_ros.actions import Node

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = os.path.join(REPO, "ros2_ws", "src")
SDF = os.path.join(PACKAGES, "surrogait_description", "sdf")
WORLD = os.path.join(SDF, "worlds", "go2_flat.sdf")
MODELS = os.path.join(SDF, "models")
ROS_GZ_BRIDGE_CONFIG = os.path.join(REPO, "launch", "config", "gazebo", "ros_gz_bridge.yaml")
# The policy file, in one place: the policy node runs it, the safety monitor reads its contract.
POLICY = os.path.join(REPO, "training", "surrogait_train", "pretrained", "go2_trot.onnx")


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        # ROS traffic stays on this machine and off the robot's domain; so does Gazebo transport.
        SetEnvironmentVariable("ROS_DOMAIN_ID", "1"),
        SetEnvironmentVariable("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
        SetEnvironmentVariable("GZ_IP", "127.0.0.1"),
        SetEnvironmentVariable("GZ_SIM_RESOURCE_PATH", MODELS),
        ExecuteProcess(cmd=["gz", "sim", "-s", "-r", "-v", "2", WORLD], name="gz_sim", output="screen"),
        Node(package="ros_gz_bridge", executable="parameter_bridge", name="ros_gz_bridge", output="screen",
             parameters=[{"config_file": ROS_GZ_BRIDGE_CONFIG}]),
        Node(package="surrogait_rehearsal", executable="gazebo_bridge", name="gazebo_bridge", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_rehearsal", "config", "gazebo_bridge.yaml")]),
        Node(package="surrogait_estimator", executable="estimator_node", name="estimator_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_estimator", "config", "estimator.yaml")]),
        Node(package="surrogait_safety", executable="safety_monitor", name="safety_monitor", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_safety", "config", "safety_monitor.yaml"),
                         {"policy_path": POLICY}]),
        Node(package="surrogait_policy", executable="policy_node", name="policy_node", output="screen",
             parameters=[os.path.join(PACKAGES, "surrogait_policy", "config", "policy_node.yaml"),
                         {"policy_path": POLICY}]),
    ])
