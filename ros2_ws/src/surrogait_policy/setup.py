from setuptools import find_packages, setup

PACKAGE = "surrogait_policy"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/config", ["config/policy_node.yaml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="The surrogait policy node (ONNX policy → Go2 or Go1 LowCmd at 50 Hz)",
    license="BSD-3-Clause",
    entry_points={"console_scripts": ["policy_node = surrogait_policy.policy_node:main"]},
)
