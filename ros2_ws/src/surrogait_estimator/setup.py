from setuptools import find_packages, setup

PACKAGE = "surrogait_estimator"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", ["config/estimator.yaml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="IMU + leg-kinematics Kalman filter node publishing nav_msgs/Odometry",
    license="BSD-3-Clause",
    entry_points={"console_scripts": [
        "estimator_node = surrogait_estimator.estimator_node:main",
    ]},
)
