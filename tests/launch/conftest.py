"""The launch tests run against ros2_ws built with colcon (once per session, ~15 s), as on a ROS machine."""

import os
from pathlib import Path

import pytest
from colcon_workspace import PACKAGES, Workspace, build_workspace


@pytest.fixture(scope="session")
def workspace(tmp_path_factory) -> Workspace:
    """A fresh colcon build; or, under `make test-jazzy`, the one it built and runs from."""
    if given := os.environ.get("SURROGAIT_COLCON_WORKSPACE"):
        return Workspace(Path(given))
    return build_workspace(tmp_path_factory.mktemp("colcon_ws"))


@pytest.fixture
def ament_index(workspace, monkeypatch) -> Workspace:
    """The ament index of the built workspace only, as after `source install/setup.bash` on a machine whose
    ROS underlay has no surrogait package."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", ":".join(str(workspace.prefix(p)) for p in PACKAGES))
    return workspace
