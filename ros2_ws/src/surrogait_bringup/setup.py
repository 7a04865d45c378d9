from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "surrogait_bringup"


def share_tree(folder: str) -> list[tuple[str, list[str]]]:
    """data_files entries installing `folder` under share/<package>/ with its layout."""
    entries: dict[str, list[str]] = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            entries.setdefault(f"share/{PACKAGE}/{path.parent.as_posix()}", []).append(path.as_posix())
    return list(entries.items())


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml", "README.md"]),
        (f"share/{PACKAGE}/launch", sorted(glob("launch/*.launch.py"))),
        *share_tree("config"),  # each launch's link and robot-only parameter files
        *share_tree("policies"),  # the shipped policies (ONNX with their contract), their configs and README
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="Launch files, their configuration and the shipped policies: the surrogait stack on a Go2 or Go1, "
                "its MuJoCo rehearsal and the Gazebo rehearsal",
    license="BSD-3-Clause",
)
