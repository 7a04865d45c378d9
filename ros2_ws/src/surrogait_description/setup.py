from glob import glob

from setuptools import setup

PACKAGE = "surrogait_description"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[PACKAGE],
    package_data={PACKAGE: ["mjcf/*.xml", "urdf/*.urdf"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/mjcf", glob(f"{PACKAGE}/mjcf/*.xml")),
        (f"share/{PACKAGE}/urdf", glob(f"{PACKAGE}/urdf/*.urdf")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    description="Unitree Go2/Go1 robot descriptions",
    license="BSD-3-Clause",
)
