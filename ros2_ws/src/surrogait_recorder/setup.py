from glob import glob

from setuptools import find_packages, setup

PACKAGE = "surrogait_recorder"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="Session recorder: every robot or rehearsal session as an MCAP file (ROS 2 topics and the robot's "
                "wire) that Foxglove Studio and PlotJuggler open as they open a rosbag2 recording",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "session_recorder = surrogait_recorder.session_recorder_node:main",
            "session_info = surrogait_recorder.info:main",
        ]
    },
)
