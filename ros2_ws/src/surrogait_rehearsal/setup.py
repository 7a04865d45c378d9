from setuptools import find_packages, setup

PACKAGE = "surrogait_rehearsal"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", ["config/go2_sim.yaml", "config/go1_sim.yaml",
                                  "config/gazebo_bridge.yaml", "config/gz_standin.yaml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="MuJoCo Go2/Go1 rehearsal simulator speaking the robots' low-level wire (unitree_sdk2 DDS, "
                "unitree_legged_sdk UDP), the Gazebo-to-Go2-wire bridge and its MuJoCo stand-in for Gazebo, "
                "the rehearsal harness and the demo",
    license="BSD-3-Clause",
    entry_points={"console_scripts": [
        "go2_sim = surrogait_rehearsal.sim.mujoco.node:main",
        "go1_sim = surrogait_rehearsal.sim.mujoco.go1_node:main",
        "gazebo_bridge = surrogait_rehearsal.sim.gazebo.bridge_node:main",
        "gz_standin = surrogait_rehearsal.sim.gazebo.standin_node:main",
        "safety_fault_injector = surrogait_rehearsal.harness.fault_injection:main",
    ]},
)
