"""Shared test setup: keep ROS 2 discovery on this machine."""

import os
import sys
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")

# The nodes and the simulator are console scripts of this environment: find them even when
# pytest runs as .venv/bin/python without an activated environment (as `make test` does).
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
