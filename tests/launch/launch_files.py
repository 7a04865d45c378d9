"""What the launch tests check a launched node against: the installed executable, the parameters the
node declares, the parameters a YAML file sets. (launch_standin.py runs the launch files themselves.)
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
from pathlib import Path

import yaml

# Gazebo and ros_gz cannot be installed on the machines this project is tested on (no Debian
# package or wheel; launch/README.md, "Gazebo rehearsal"), yet the Gazebo launch file must name
# them. These are the only packages a launch file may name without their being installed here,
# with the executables and parameters their documentation gives (ros_gz_bridge's parameter_bridge:
# `config_file`, a YAML list of topic pairs); the tests check those instead of a console script.
GAZEBO_PACKAGES: dict[str, dict[str, set[str]]] = {
    "ros_gz_bridge": {"parameter_bridge": {"config_file", "expand_gz_topic_names", "use_sim_time"}},
    "ros_gz_sim": {"create": {"world", "file", "name", "x", "y", "z", "R", "P", "Y"}},
}
GAZEBO_COMMANDS = {"gz"}  # ExecuteProcess commands: Gazebo's CLI (`gz sim`)
# Parameters every rclpy node declares itself (rclpy.node.Node.__init__): a launch file may set them on any node.
ROS_BUILTIN_PARAMETERS = {"use_sim_time"}


def console_script(package: str, executable: str) -> importlib.metadata.EntryPoint:
    """The installed console script `executable` of distribution `package` (ament_python installs both)."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise LookupError(f"package {package!r} is not installed (pip install -e ros2_ws/src/{package})") from None
    for ep in dist.entry_points:
        if ep.group == "console_scripts" and ep.name == executable:
            return ep
    scripts = sorted(ep.name for ep in dist.entry_points if ep.group == "console_scripts")
    raise LookupError(f"package {package!r} has no executable {executable!r}; it has: {scripts}")


def declared_parameters(entry_point: importlib.metadata.EntryPoint) -> set[str]:
    """Parameter names the node behind `entry_point` declares.

    Two ways a surrogait node makes them findable, both read here:
      1. a module-level `PARAMETERS` mapping (name → (default, description)) in the node's module,
         which the node loops over to declare them (the project's convention);
      2. `declare_parameter("literal", ...)` calls, and `declare_parameter(PREFIX + name, ...)`
         inside `for name in NAMES:` where PREFIX and NAMES are module-level values.
    """
    module = importlib.import_module(entry_point.module)
    names = set(getattr(module, "PARAMETERS", {}) or {}) | ROS_BUILTIN_PARAMETERS
    tree = ast.parse(inspect.getsource(module))
    loops: dict[ast.AST, ast.For] = {}
    for loop in ast.walk(tree):
        if isinstance(loop, ast.For):
            for inner in ast.walk(loop):
                loops.setdefault(inner, loop)
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "declare_parameter" and call.args):
            continue
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
        elif isinstance(first, ast.BinOp) and isinstance(first.left, ast.Name) and isinstance(first.right, ast.Name):
            loop = loops.get(call)
            if loop and isinstance(loop.target, ast.Name) and loop.target.id == first.right.id \
                    and isinstance(loop.iter, ast.Name):
                prefix, items = getattr(module, first.left.id, None), getattr(module, loop.iter.id, None)
                if isinstance(prefix, str) and items is not None:
                    names.update(prefix + str(item) for item in items)
    return names


def yaml_parameters(path: Path, node_name: str) -> dict[str, object]:
    """The parameters a ROS 2 params file sets for `node_name` (nested keys flattened with '.')."""
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a ROS 2 parameters file (expected `<node>: ros__parameters: ...`)")
    out: dict[str, object] = {}
    for key, section in data.items():
        if key.lstrip("/") not in (node_name, "**"):
            continue
        if not isinstance(section, dict) or "ros__parameters" not in section:
            raise ValueError(f"{path}: section {key!r} has no ros__parameters")
        out.update(_flatten(section["ros__parameters"]))
    return out


def yaml_sections(path: Path) -> list[str]:
    return [str(k).lstrip("/") for k in (yaml.safe_load(path.read_text()) or {})]


def _flatten(params: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
