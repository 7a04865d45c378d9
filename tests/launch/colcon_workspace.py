"""ros2_ws built with colcon (from pip: colcon-core, colcon-ros), as a user on a ROS machine builds it.

`build_workspace` runs `colcon build --symlink-install` of ros2_ws/src into a folder of its own (build/,
install/, log/ there; the source tree is not written to) with this interpreter, and returns the install
space: `install/setup.bash` to source, or the environment colcon's hooks set (AMENT_PREFIX_PATH,
PYTHONPATH) for a process started from here.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "ros2_ws" / "src"
PACKAGES = sorted(p.parent.name for p in SOURCE.glob("*/package.xml"))


@dataclasses.dataclass(frozen=True)
class Workspace:
    base: Path

    @property
    def install(self) -> Path:
        return self.base / "install"

    def prefix(self, package: str) -> Path:
        return self.install / package  # colcon's default isolated layout: one prefix per package

    def share(self, package: str) -> Path:
        return self.prefix(package) / "share" / package

    def executable(self, package: str, name: str) -> Path:
        """Where `ros2 run`/launch_ros find a node: <prefix>/lib/<package>/<executable>."""
        return self.prefix(package) / "lib" / package / name

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (this process's environment) with what sourcing install/setup.bash sets, read from bash."""
        base = dict(os.environ if base is None else base)
        script = f"source {self.install / 'setup.bash'} >/dev/null && env -0"
        out = subprocess.run(["bash", "-c", script], env=base, check=True, capture_output=True).stdout
        return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def build_workspace(base: Path, python: str = sys.executable, timeout_s: float = 300.0) -> Workspace:
    """colcon build --symlink-install of every package in ros2_ws/src into `base`; raises with colcon's output."""
    base.mkdir(parents=True, exist_ok=True)
    cmd = [python, "-m", "colcon", "--log-base", str(base / "log"), "build", "--symlink-install",
           "--base-paths", str(SOURCE), "--build-base", str(base / "build"), "--install-base", str(base / "install")]
    env = dict(os.environ)
    env.pop("AMENT_PREFIX_PATH", None)  # an unrelated workspace must not leak in
    env.pop("COLCON_PREFIX_PATH", None)
    result = subprocess.run(cmd, cwd=base, env=env, capture_output=True, text=True, timeout=timeout_s)
    if result.returncode != 0:
        raise RuntimeError(f"colcon build failed ({result.returncode}):\n{result.stdout[-4000:]}\n"
                           f"{result.stderr[-4000:]}")
    return Workspace(base)
