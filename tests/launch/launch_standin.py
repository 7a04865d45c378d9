"""Running a `ros2 launch` file without `launch`/`launch_ros` (not installable here: ENVIRONMENT.md).

This is a stand-in for the few pieces of the launch API that surrogait_bringup's launch files use, with
the real API's signatures and semantics (ros2/launch, launch_ros): `LaunchDescription`,
`DeclareLaunchArgument(name, *, default_value, description, choices)` (a missing value takes the default,
a value outside `choices` raises), `OpaqueFunction(*, function, args, kwargs)` (called with the context,
the actions it returns are visited in order), `LaunchConfiguration(name).perform(context)`,
`SetEnvironmentVariable(name, value)`, `ExecuteProcess(cmd=..., name=...)`,
`launch_ros.actions.Node(package=..., executable=..., name=..., parameters=[...])`, and
`RegisterEventHandler(OnProcessIO(target_action=..., on_stdout=..., on_stderr=...))` (the handler's callable
gets a ProcessIO event, `.text` the bytes written, `.action` the process; the actions it returns are
launched). Nothing is started: `run_launch_file` loads a launch file as `ros2 launch` does (a Python module
whose `generate_launch_description()` is called), visits it with the given `name:=value` arguments and returns
the environment it sets and the processes and nodes it would start; `Launched.output(name, text)` plays a line
a started process writes, and returns what that starts. Where the real `launch` exists (a ROS
machine), `ros2 launch ... -s` and a real launch are the check; this is the one possible here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import sys
import types
from pathlib import Path


@dataclasses.dataclass
class Context:
    launch_configurations: dict[str, str]
    environment: dict[str, str]


class LaunchDescription:
    def __init__(self, initial_entities=None):
        self.entities = list(initial_entities or [])


class DeclareLaunchArgument:
    def __init__(self, name, *, default_value=None, description=None, choices=None, **kwargs):
        if choices is not None and len(choices) == 0:
            raise RuntimeError("Provided choices arg is empty. Use None to ignore the choice list.")
        if choices is not None and default_value is not None and default_value not in choices:
            raise RuntimeError(f'Provided default_value "{default_value}" is not in provided choices "{choices}".')
        self.name, self.default_value, self.description, self.choices = name, default_value, description, choices

    def execute(self, context: Context):
        if self.name not in context.launch_configurations:
            if self.default_value is None:
                raise RuntimeError(f'Required launch argument "{self.name}" was not provided.')
            context.launch_configurations[self.name] = self.default_value
        value = context.launch_configurations[self.name]
        if self.choices is not None and value not in self.choices:
            raise RuntimeError(f'Argument "{self.name}" provided value "{value}" is not valid. '
                               f"Valid options are: {self.choices}")


class OpaqueFunction:
    def __init__(self, *, function, args=None, kwargs=None):
        if not callable(function):
            raise TypeError(f"OpaqueFunction expected a callable for 'function', got '{type(function)}'")
        self.function, self.args, self.kwargs = function, list(args or []), dict(kwargs or {})

    def execute(self, context: Context):
        return self.function(context, *self.args, **self.kwargs)


class LaunchConfiguration:
    def __init__(self, variable_name, *, default=None):
        self.variable_name, self.default = variable_name, default

    def perform(self, context: Context) -> str:
        if self.variable_name in context.launch_configurations:
            return context.launch_configurations[self.variable_name]
        if self.default is None:
            raise RuntimeError(f"launch configuration '{self.variable_name}' does not exist")
        return self.default


class SetEnvironmentVariable:
    def __init__(self, name, value, **kwargs):
        self.name, self.value = name, value

    def execute(self, context: Context):
        context.environment[self.name] = self.value


class ExecuteProcess:
    def __init__(self, *, cmd, name=None, output="log", **kwargs):
        self.cmd, self.name, self.output = list(cmd), name, output


class Node:
    def __init__(self, *, executable, package=None, name=None, namespace=None, parameters=None, output="log",
                 **kwargs):
        self.package, self.executable, self.name = package, executable, name
        self.parameters, self.output = list(parameters or []), output


class OnProcessIO:
    def __init__(self, *, target_action=None, on_stdin=None, on_stdout=None, on_stderr=None, **kwargs):
        self.target_action, self.on_stdin = target_action, on_stdin
        self.on_stdout, self.on_stderr = on_stdout, on_stderr


class RegisterEventHandler:
    def __init__(self, event_handler, **kwargs):
        self.event_handler = event_handler


@dataclasses.dataclass
class ProcessIO:
    """The event an OnProcessIO handler gets (launch.events.process.ProcessIO's fields the files use)."""

    action: object
    name: str
    text: bytes
    fd: int  # 1 stdout, 2 stderr


@dataclasses.dataclass
class LaunchedNode:
    package: str
    executable: str
    name: str
    parameters: list  # in order: YAML file paths (str) and inline dicts, as launch_ros applies them
    action: object = dataclasses.field(default=None, repr=False, compare=False)  # the launch_ros Node

    @property
    def param_files(self) -> list[Path]:
        return [Path(p) for p in self.parameters if isinstance(p, str)]

    @property
    def inline_params(self) -> dict:
        return {k: v for p in self.parameters if isinstance(p, dict) for k, v in p.items()}


@dataclasses.dataclass
class LaunchedProcess:
    cmd: list[str]
    name: str | None


@dataclasses.dataclass
class Launched:
    arguments: dict[str, DeclareLaunchArgument]
    configurations: dict[str, str]
    environment: dict[str, str]
    processes: list[LaunchedProcess]
    nodes: list[LaunchedNode]
    handlers: list[OnProcessIO] = dataclasses.field(default_factory=list)
    context: Context | None = dataclasses.field(default=None, repr=False)

    def output(self, name: str, text: str, stream: str = "stderr") -> list[LaunchedNode]:
        """Node `name` writes `text` (a line of its log) on `stream`: the nodes the handlers start on it."""
        targets = [n.action for n in self.nodes if n.name == name]
        if not targets:
            raise ValueError(f"no node named {name!r} was started")
        before = len(self.nodes)
        fd = {"stdout": 1, "stderr": 2}[stream]
        for handler in list(self.handlers):
            callback = handler.on_stdout if fd == 1 else handler.on_stderr
            if handler.target_action in targets and callback is not None:
                event = ProcessIO(action=handler.target_action, name=name, text=text.encode(), fd=fd)
                _visit(callback(event), self.context, self)
        return self.nodes[before:]


def _modules() -> dict[str, types.ModuleType]:
    def module(name, **members):
        m = types.ModuleType(name)
        m.__dict__.update(members)
        return m

    actions = module("launch.actions", DeclareLaunchArgument=DeclareLaunchArgument, ExecuteProcess=ExecuteProcess,
                     OpaqueFunction=OpaqueFunction, SetEnvironmentVariable=SetEnvironmentVariable,
                     RegisterEventHandler=RegisterEventHandler)
    event_handlers = module("launch.event_handlers", OnProcessIO=OnProcessIO)
    substitutions = module("launch.substitutions", LaunchConfiguration=LaunchConfiguration)
    launch = module("launch", LaunchDescription=LaunchDescription, actions=actions, substitutions=substitutions,
                    event_handlers=event_handlers)
    ros_actions = module("launch_ros.actions", Node=Node)
    return {"launch": launch, "launch.actions": actions, "launch.substitutions": substitutions,
            "launch.event_handlers": event_handlers,
            "launch_ros": module("launch_ros", actions=ros_actions), "launch_ros.actions": ros_actions}


BOUND_TO_LAUNCH = "surrogait_bringup.launch_description"  # imports `launch`: bound to whichever it met first


@contextlib.contextmanager
def standin_launch_api():
    """`launch` and `launch_ros` are this module's stand-ins while the block runs (and modules that imported
    them then are imported afresh next time)."""
    saved = {name: sys.modules.get(name) for name in _modules()}
    sys.modules.update(_modules())
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        sys.modules.pop(BOUND_TO_LAUNCH, None)


def run_launch_file(path: Path, arguments: dict[str, str] | None = None) -> Launched:
    """What `ros2 launch <path> name:=value ...` would set and start (nothing is started)."""
    with standin_launch_api():
        spec = importlib.util.spec_from_file_location(f"launch_file_{abs(hash(str(path)))}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        description = module.generate_launch_description()
        context = Context(dict(arguments or {}), {})
        launched = Launched({}, context.launch_configurations, context.environment, [], [], context=context)
        _visit(description.entities, context, launched)
        return launched


def _visit(entities, context: Context, launched: Launched) -> None:
    for entity in entities or []:
        if isinstance(entity, DeclareLaunchArgument):
            launched.arguments[entity.name] = entity
            entity.execute(context)
        elif isinstance(entity, OpaqueFunction):
            _visit(entity.execute(context), context, launched)
        elif isinstance(entity, SetEnvironmentVariable):
            entity.execute(context)
        elif isinstance(entity, ExecuteProcess):
            launched.processes.append(LaunchedProcess([str(a) for a in entity.cmd], entity.name))
        elif isinstance(entity, Node):
            launched.nodes.append(LaunchedNode(entity.package, entity.executable, entity.name, entity.parameters,
                                               entity))
        elif isinstance(entity, RegisterEventHandler):
            if not isinstance(entity.event_handler, OnProcessIO):
                raise TypeError(f"the stand-in knows OnProcessIO handlers only, not {type(entity.event_handler)}")
            launched.handlers.append(entity.event_handler)
        elif isinstance(entity, LaunchDescription):
            _visit(entity.entities, context, launched)
        else:
            raise TypeError(f"the stand-in does not know {type(entity).__name__}: extend launch_standin.py")
