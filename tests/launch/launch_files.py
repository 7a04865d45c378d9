"""Reading `ros2 launch` files without `launch`/`launch_ros` (not installable here): AST only.

A launch file is parsed, never run. Module-level constants built from string literals,
`__file__` and `os.path.join/dirname/abspath` are evaluated; every `Node(...)` call gives the
package, executable, name and parameters (YAML paths or inline dicts) it starts, every
`ExecuteProcess(cmd=[...])` the command line it runs, and every `SetEnvironmentVariable(name, value)`
the environment it sets.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.metadata
import inspect
import os
from pathlib import Path

import yaml


@dataclasses.dataclass
class LaunchedNode:
    package: str
    executable: str
    name: str | None
    param_files: list[Path]
    inline_params: dict


class _Evaluator:
    """Evaluates the small expression language launch files use for paths."""

    FUNCS = {"join": os.path.join, "dirname": os.path.dirname, "abspath": os.path.abspath,
             "realpath": os.path.realpath, "str": str}

    def __init__(self, path: Path):
        self.env = {"__file__": str(path)}

    def __call__(self, node: ast.AST):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise ValueError(f"name {node.id!r} is not a module-level constant")
            return self.env[node.id]
        if isinstance(node, ast.List | ast.Tuple):
            return [self(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            return {self(k): self(v) for k, v in zip(node.keys, node.values, strict=True)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self(node.left) + self(node.right)
        if isinstance(node, ast.Call):
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if func in self.FUNCS:
                return self.FUNCS[func](*[self(a) for a in node.args])
        raise ValueError(f"cannot evaluate {ast.unparse(node)!r} statically")

    def define(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    self.env[stmt.targets[0].id] = self(stmt.value)
                except ValueError:
                    pass  # not a constant: only an error if a Node(...) uses it


@dataclasses.dataclass
class LaunchedProcess:
    cmd: list[str]
    name: str | None


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


def _calls(tree: ast.Module, name: str):
    for call in ast.walk(tree):
        if isinstance(call, ast.Call):
            func = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
            if func == name:
                yield call


def _parsed(path: Path) -> tuple[ast.Module, _Evaluator]:
    tree = ast.parse(path.read_text(), filename=str(path))
    evaluate = _Evaluator(path)
    evaluate.define(tree)
    return tree, evaluate


def parse_processes(path: Path) -> list[LaunchedProcess]:
    """Every `ExecuteProcess(cmd=[...], name=...)` of a launch file."""
    tree, evaluate = _parsed(path)
    out = []
    for call in _calls(tree, "ExecuteProcess"):
        kwargs = {kw.arg: kw.value for kw in call.keywords}
        out.append(LaunchedProcess(cmd=[str(a) for a in evaluate(kwargs["cmd"])],
                                   name=evaluate(kwargs["name"]) if "name" in kwargs else None))
    return out


def parse_environment(path: Path) -> dict[str, str]:
    """Every `SetEnvironmentVariable(name, value)` of a launch file."""
    tree, evaluate = _parsed(path)
    return {str(evaluate(c.args[0])): str(evaluate(c.args[1])) for c in _calls(tree, "SetEnvironmentVariable")}


def parse_launch_file(path: Path) -> list[LaunchedNode]:
    tree, evaluate = _parsed(path)
    nodes = []
    for call in _calls(tree, "Node"):
        kwargs = {kw.arg: kw.value for kw in call.keywords}
        params = evaluate(kwargs["parameters"]) if "parameters" in kwargs else []
        nodes.append(LaunchedNode(
            package=evaluate(kwargs["package"]),
            executable=evaluate(kwargs["executable"]),
            name=evaluate(kwargs["name"]) if "name" in kwargs else None,
            param_files=[Path(p) for p in params if isinstance(p, str)],
            inline_params={k: v for p in params if isinstance(p, dict) for k, v in p.items()},
        ))
    return nodes


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
    names = set(getattr(module, "PARAMETERS", {}) or {})
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
