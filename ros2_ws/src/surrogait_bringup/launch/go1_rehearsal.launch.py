"""Rehearsal: the MuJoCo Go1 simulator and the deployment nodes, all on this machine.

    ros2 launch surrogait_bringup go1_rehearsal.launch.py [policy:=/path/x.onnx]

The simulator plays the Go1's end of its low-level UDP link (CRC and level checked) on 127.0.0.1:8007,
so the policy node, the state estimator and the safety monitor (the link's gateway) run exactly as on
the robot (config/go1_rehearsal/link.yaml: the robot's layout on loopback).
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("rehearsal", robot="go1")
