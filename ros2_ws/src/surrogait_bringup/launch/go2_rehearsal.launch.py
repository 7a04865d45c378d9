"""Rehearsal: the MuJoCo Go2 simulator and the deployment nodes, all on this machine.

    ros2 launch surrogait_bringup go2_rehearsal.launch.py [policy:=/path/x.onnx]

The simulator speaks the robot's unitree_sdk2 DDS protocol on domain 1 over `lo`, so the policy node,
the state estimator and the safety monitor run exactly as on the robot. Each node takes its package's
own parameters file (share/<package>/config/), whose defaults are the rehearsal's.
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("rehearsal", robot="go2")
