"""Rehearsal, either robot: `robot:=go2` (default) is go2_rehearsal.launch.py, `robot:=go1` go1_rehearsal.launch.py.

    ros2 launch surrogait_bringup rehearsal.launch.py robot:=go1
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("rehearsal")
