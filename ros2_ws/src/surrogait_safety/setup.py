from glob import glob

from setuptools import find_packages, setup

PACKAGE = "surrogait_safety"

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
    description="Safety monitor for the Go2: watches the DDS wire, latches damping, logs faults",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "safety_monitor = surrogait_safety.safety_monitor_node:main",
        ]
    },
)
