"""On the robot, either robot: `robot:=go2` (default) is go2_robot.launch.py, `robot:=go1` go1_robot.launch.py.

    ros2 launch surrogait_bringup robot.launch.py robot:=go1 network_interface:=enp3s0
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("robot")
