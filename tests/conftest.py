"""Shared test setup: keep ROS 2 discovery on this machine."""

import os
import sys
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
# MJX's step functions compiled by XLA at its lowest backend optimisation level: on a machine without the compile
# cache (~/.cache/surrogait/jax), as on a fresh clone's CI, a float64 step on height fields took 96 s to compile at
# the default level and 43 s at this one, and the tests step a few times each (a step runs ~2.5x slower).
# The same programs, the same float arithmetic (no fast-math at either level); training keeps XLA's default.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0")

# The nodes and the simulator are console scripts of this environment: find them even when
# pytest runs as .venv/bin/python without an activated environment (as `make test` does).
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
