from glob import glob
from pathlib import Path

from setuptools import setup

PACKAGE = "surrogait_description"


def share_tree(folder: str) -> list[tuple[str, list[str]]]:
    """data_files entries installing `folder` under share/<package>/ with its layout (gz sim finds
    models by directory: sdf/models/<robot>/model.config beside model.sdf)."""
    entries: dict[str, list[str]] = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            entries.setdefault(f"share/{PACKAGE}/{path.parent.as_posix()}", []).append(path.as_posix())
    return list(entries.items())


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
        *share_tree("sdf"),  # Gazebo models and worlds: put share/<package>/sdf/models on GZ_SIM_RESOURCE_PATH
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    description="Unitree Go2/Go1 robot descriptions",
    license="BSD-3-Clause",
)
