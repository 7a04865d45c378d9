"""On the robot: the safety monitor (the link's gateway), the state estimator and the policy node on a real Go1.

    ros2 launch surrogait_bringup go1_robot.launch.py network_interface:=enp3s0 policy:=/path/x.onnx

The Go1's low level is UDP, point to point: the safety monitor owns the only socket to the robot at
192.168.123.10:8007 (from `network_interface`); the policy node sends its LowCmds to it on 127.0.0.1
and the estimator gets every LowState from it (docs/go1.md; config/go1_robot/link.yaml). Put the Go1 in
low-level mode with its remote first (L2+A, L2+B, L1+L2+start).
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("robot", robot="go1")
