"""The launch files' one body: declare `stack.launch_arguments`, then start what `stack.build_stack` says.

`ros2 launch surrogait_bringup <file> name:=value ...` resolves the declared arguments; an OpaqueFunction
reads them and turns the Stack into actions, in order: environment first, then processes and nodes (the
safety monitor before the policy node on the robot).
"""

from __future__ import annotations

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, SetEnvironmentVariable
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from surrogait_bringup.stack import build_stack, launch_arguments


def generate(session: str, robot: str | None = None) -> LaunchDescription:
    """The launch description of `session` (robot, rehearsal, gazebo); `robot` fixed by a per-robot file."""
    arguments = launch_arguments(session, robot)
    declared = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                      choices=list(a.choices) if a.choices else None) for a in arguments]
    names = [a.name for a in arguments]
    return LaunchDescription([*declared, OpaqueFunction(function=_start, args=[session, names])])


def _start(context, session: str, names: list[str]) -> list:
    values = {name: LaunchConfiguration(name).perform(context) for name in names}
    stack = build_stack(session, values)
    return [
        *(SetEnvironmentVariable(name, value) for name, value in stack.environment.items()),
        *(ExecuteProcess(cmd=list(p.cmd), name=p.name, output="screen") for p in stack.processes),
        *(Node(package=n.package, executable=n.executable, name=n.name, output="screen",
               parameters=list(n.parameters)) for n in stack.nodes),
    ]
