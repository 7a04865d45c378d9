"""Gazebo rehearsal: the Go2 in Gazebo Harmonic, bridged onto the Go2's own wire, and the deployment nodes.

    ros2 launch surrogait_bringup go2_gazebo.launch.py     (needs Gazebo Harmonic, ros_gz_sim and
                                                            ros_gz_bridge: README.md, "Gazebo rehearsal")

- `gz sim -s -r` runs the world share/surrogait_description/sdf/worlds/go2_flat.sdf headless. The world
  includes the Go2 model (`model://go2`, found through GZ_SIM_RESOURCE_PATH), so there is no separate
  spawn step (`ros_gz_sim create`).
- ros_gz_bridge's `parameter_bridge` carries the model's topics into ROS (config/gazebo/ros_gz_bridge.yaml):
  joint states, IMU, foot wrenches and odometry out of Gazebo, one force command per joint into it.
- `gazebo_bridge` turns those topics into the Go2's unitree_sdk2 DDS wire (rt/lowstate out, rt/lowcmd in,
  CRC checked) on domain 1 over `lo`, so the three nodes run exactly as against the robot or go2_sim.

Without `ros2 launch`: `python -m surrogait_rehearsal.demo --simulator gazebo` starts the same processes
and drives a scripted session.
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("gazebo", robot="go2")
