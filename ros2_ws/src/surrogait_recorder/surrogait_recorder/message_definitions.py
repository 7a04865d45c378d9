"""Message definitions for MCAP schemas (encoding `ros2msg`), written as rosbag2 writes them.

A ROS 2 message's definition is its .msg text followed by each type it uses, once, in the order they are
first met, each block introduced by a line of 80 `=` and `MSG: <package>/<Type>` (rosbag2_storage_mcap's
layout, which Foxglove Studio and PlotJuggler read). The text comes from the installed interface packages
(share/<package>/msg/<Type>.msg, found through the ament index), as rosbag2's local definition source takes it.

The Go2's wire types (unitree_sdk2's rt/lowstate and rt/lowcmd) are ROS 2 messages as well: the SDK's IDL
types `unitree_go::msg::dds_::LowState_` are the DDS form of unitree_go/msg/LowState, the message the vendor's
ROS 2 package declares, and a sample on the wire is that message's CDR. Their definitions are written here from
the IDL types the SDK ships (field order, types and array sizes as they are on the wire), so a recording holds
the robot's samples byte for byte with a schema that decodes them (tests/recorder checks every field against
the SDK's own deserializer).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from pathlib import Path

SEPARATOR = "=" * 80
# Built-in field types of the ROS 2 interface definition language (a type not here names a message).
PRIMITIVES = frozenset({"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
                        "uint32", "int64", "uint64", "string", "wstring"})
_BOUNDED_STRING = re.compile(r"^w?string<=\d+$")
_ARRAY_SUFFIX = re.compile(r"\[[^\]]*\]$")


class DefinitionError(LookupError):
    """A message definition cannot be found or read; the message says which and where it looked."""


def _share_dirs(package: str) -> list[Path]:
    """Where `package`'s share/ folder may be: the ament index's (a sourced ROS 2 installation or workspace), then
    the install prefix of its Python package (prefix/lib/pythonX.Y/site-packages/<package>: the ROS 2 wheels,
    which set no ament index), then this interpreter's prefix."""
    import importlib.util
    import sys

    dirs = []
    try:
        from ament_index_python.packages import get_package_share_directory

        dirs.append(Path(get_package_share_directory(package)))
    except (LookupError, OSError, ValueError):  # not indexed, or no index at all (AMENT_PREFIX_PATH unset)
        pass
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        dirs.append(Path(spec.origin).resolve().parents[4] / "share" / package)
    dirs.append(Path(sys.prefix) / "share" / package)
    return dirs


def _share_msg_file(package: str, name: str) -> Path:
    candidates = [d / "msg" / f"{name}.msg" for d in _share_dirs(package)]
    for path in candidates:
        if path.is_file():
            return path
    raise DefinitionError(f"{package}/msg/{name}: no .msg file in {', '.join(map(str, candidates))}")


def _field_type(line: str) -> str | None:
    """The type a definition line uses, without array or bound suffixes (None for comments and blank lines)."""
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    words = text.split()
    if len(words) < 2:
        raise DefinitionError(f"cannot read the definition line {line!r}")
    type_name = _ARRAY_SUFFIX.sub("", words[0])
    return None if type_name in PRIMITIVES or _BOUNDED_STRING.match(type_name) else type_name


def ros_message_definition(type_name: str, msg_text: Callable[[str, str], str] | None = None) -> str:
    """The full definition of ROS 2 message `type_name` ("nav_msgs/msg/Odometry" or "nav_msgs/Odometry").

    `msg_text(package, name)` gives one .msg file's text (default: the installed share/ tree)."""
    read = msg_text or (lambda package, name: _share_msg_file(package, name).read_text())
    package, name = _split(type_name)
    root = read(package, name)
    blocks: list[str] = []
    seen: set[str] = set()

    def dependencies(text: str, own_package: str) -> None:
        for line in text.splitlines():
            used = _field_type(line)
            if used is None:
                continue
            dep_package, dep_name = _split(used) if "/" in used else (own_package, used)
            key = f"{dep_package}/{dep_name}"
            if key in seen:
                continue
            seen.add(key)
            dep_text = read(dep_package, dep_name)
            blocks.append(f"{SEPARATOR}\nMSG: {key}\n{dep_text.rstrip()}\n")
            dependencies(dep_text, dep_package)

    dependencies(root, package)
    return "\n".join([root.rstrip() + "\n", *blocks])


def _split(type_name: str) -> tuple[str, str]:
    parts = type_name.split("/")
    if len(parts) == 3 and parts[1] == "msg":
        return parts[0], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise DefinitionError(f"{type_name!r}: expected <package>/msg/<Type> or <package>/<Type>")


# ---------------------------------------------------------------- the Unitree SDK's IDL types


def idl_type_name(idl_class: type) -> str:
    """The ROS 2 name of an SDK IDL type: unitree_go.msg.dds_.LowState_ -> unitree_go/msg/LowState."""
    typename = idl_class.__idl_typename__  # e.g. "unitree_go.msg.dds_.LowState_"
    parts = typename.split(".")
    if len(parts) != 4 or parts[1:3] != ["msg", "dds_"] or not parts[3].endswith("_"):
        raise DefinitionError(f"{typename}: not the DDS form of a ROS 2 message (<package>.msg.dds_.<Type>_)")
    return f"{parts[0]}/msg/{parts[3][:-1]}"


def _resolve(annotation, module) -> type:
    """A nested struct's class from its annotation (the SDK writes them as dotted strings)."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    if isinstance(annotation, str):
        return getattr(module, annotation.rsplit(".", 1)[-1])
    return annotation


def _idl_field(annotation, module) -> tuple[str, type | None]:
    """(ROS field type, nested IDL class or None) of one IDL field annotation."""
    from cyclonedds.idl.types import array, sequence

    args = typing.get_args(annotation)
    if args and isinstance(args[-1], str):  # Annotated[int, 'uint8']
        return args[-1], None
    if args and isinstance(args[-1], (array, sequence)):
        holder = args[-1]
        inner, nested = _idl_field(holder.subtype, module)
        if isinstance(holder, array):
            return f"{inner}[{holder.length}]", nested
        return (f"{inner}[<={holder.max_length}]" if holder.max_length else f"{inner}[]"), nested
    if annotation is bool:
        return "bool", None
    if annotation is str:
        return "string", None
    nested = _resolve(annotation, module)
    if not hasattr(nested, "__idl_typename__"):
        raise DefinitionError(f"cannot map the IDL field annotation {annotation!r} to a ROS 2 type")
    package, _, name = idl_type_name(nested).split("/")
    return f"{package}/{name}", nested


def idl_message_definition(idl_class: type) -> str:
    """The full ROS 2 definition (rosbag2's layout) of an SDK IDL struct and every struct it contains."""
    import importlib

    blocks: list[tuple[str, str]] = []
    seen: set[type] = set()

    def text_of(cls: type) -> str:
        module = importlib.import_module(cls.__module__.rsplit(".", 1)[0])  # the dds_ package holds every type
        lines = []
        for field, annotation in cls.__annotations__.items():
            ros_type, nested = _idl_field(annotation, module)
            lines.append(f"{ros_type} {field}")
            if nested is not None and nested not in seen:  # each contained type once, where first met
                seen.add(nested)
                index = len(blocks)
                blocks.append((idl_type_name(nested), ""))
                blocks[index] = (blocks[index][0], text_of(nested))
        return "\n".join(lines) + "\n"

    root = text_of(idl_class)
    rest = [f"{SEPARATOR}\nMSG: {name.replace('/msg/', '/')}\n{text}" for name, text in blocks]
    return "\n".join([root, *rest])
