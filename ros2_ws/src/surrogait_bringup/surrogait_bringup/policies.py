"""Where the shipped policies are: share/surrogait_bringup/policies/ of the installed package.

The launch files find them through the ament index only (`stack.share_directory`). Tools that run from a
source checkout with the packages installed editable (the rehearsal harness, the demo, benches, tests; no
AMENT_PREFIX_PATH there) fall back to the package's own source folder, `ros2_ws/src/surrogait_bringup/policies`.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = "surrogait_bringup"
SOURCE_POLICIES = Path(__file__).resolve().parents[1] / "policies"  # an editable install's source folder


def policies_dir() -> Path:
    """The folder of the shipped policies: the installed share/ tree when the ament index has this package,
    else this package's source folder."""
    if os.environ.get("AMENT_PREFIX_PATH"):
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            return Path(get_package_share_directory(PACKAGE)) / "policies"
        except PackageNotFoundError:
            pass
    if SOURCE_POLICIES.is_dir():
        return SOURCE_POLICIES
    raise LookupError(f"the shipped policies are not installed: {PACKAGE} is not in the ament index "
                      "(AMENT_PREFIX_PATH) and its source folder is not beside this module; build the workspace "
                      "(colcon build) and source install/setup.bash")


def shipped_policy(file_name: str) -> Path:
    """A shipped policy file by name (e.g. go2_trot.onnx); it may not exist (a robot without such a policy)."""
    return policies_dir() / file_name
