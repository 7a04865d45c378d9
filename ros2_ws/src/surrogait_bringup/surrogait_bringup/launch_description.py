"""The launch files' one body: declare `stack.launch_arguments`, then start what `stack.build_stack` says.

`ros2 launch surrogait_bringup <file> name:=value ...` resolves the declared arguments; an OpaqueFunction
reads them and turns the Stack into actions, in order: environment first, then processes and nodes (the
safety monitor before the policy node on the robot). A Stack's gate (the Gazebo rehearsal's) becomes an
OnProcessIO handler on the node it waits for: its nodes start on the first line of that node's output that
holds the gate's text, once.
"""

from __future__ import annotations

from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
)
from launch.event_handlers import OnProcessIO
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from surrogait_bringup.stack import NodeLaunch, StartGate, build_stack, launch_arguments


def generate(session: str, robot: str | None = None) -> LaunchDescription:
    """The launch description of `session` (robot, rehearsal, gazebo); `robot` fixed by a per-robot file."""
    arguments = launch_arguments(session, robot)
    declared = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                      choices=list(a.choices) if a.choices else None) for a in arguments]
    names = [a.name for a in arguments]
    return LaunchDescription([*declared, OpaqueFunction(function=_start, args=[session, names])])


def _node(n: NodeLaunch) -> Node:
    return Node(package=n.package, executable=n.executable, name=n.name, output="screen", parameters=list(n.parameters))


def _start(context, session: str, names: list[str]) -> list:
    values = {name: LaunchConfiguration(name).perform(context) for name in names}
    stack = build_stack(session, values)
    nodes = {n.name: _node(n) for n in stack.nodes}
    actions = [
        *(SetEnvironmentVariable(name, value) for name, value in stack.environment.items()),
        *(ExecuteProcess(cmd=list(p.cmd), name=p.name, output="screen") for p in stack.processes),
        *nodes.values(),
    ]
    if stack.gate is not None:
        actions.append(_gated(nodes[stack.gate.after], stack.gate))
    return actions


def _gated(after: Node, gate: StartGate) -> RegisterEventHandler:
    opened = False

    def on_output(event):
        nonlocal opened
        if opened or gate.line not in event.text.decode(errors="replace"):
            return None
        opened = True
        return [_node(n) for n in gate.nodes]

    # rclpy logs to stderr by default (stdout with RCUTILS_LOGGING_USE_STDOUT=1): either stream opens the gate.
    return RegisterEventHandler(OnProcessIO(target_action=after, on_stdout=on_output, on_stderr=on_output))
