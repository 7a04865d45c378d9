"""A node's parameters as one dataclass table, read and checked without ROS.

Each node lists its parameters as a frozen dataclass whose fields are `param(default, description)`;
the default's type (bool, int, float or str) is the parameter's type. `read_params` fills the table
from {name: value} (what the node got from ROS, see `surrogait_core.runtime.ros_node.declare_params`, or a
test's dict), refuses unknown names and wrong types, then runs the table's own `validate()`. Every
refusal is a `ParamError` whose message names the parameter, says what is wrong and what to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from surrogait_core.wire.network_interface import interface_problem

T = TypeVar("T")

_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


class ParamError(ValueError):
    """A parameter is unknown, has the wrong type or a value that cannot work; the message says which."""


def param(default: bool | int | float | str, description: str) -> Any:
    """A parameter field of a table: its default (whose type is the parameter's) and its description."""
    if type(default) not in _KIND_NAMES:
        raise TypeError(f"a parameter default must be a bool, int, float or str, got {default!r}")
    return dataclasses.field(default=default, metadata={"description": description})


def parameter_table(cls: type) -> dict[str, tuple[object, str]]:
    """{name: (default, description)} of a parameter table, in field order."""
    return {f.name: (f.default, f.metadata.get("description", "")) for f in dataclasses.fields(cls)}


def coerce(name: str, value: object, default: object) -> object:
    """`value` as the type of `default`; an int is accepted for a float (YAML `2` for 2.0), never a bool for an int."""
    kind = type(default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ParamError(f"parameter {name!r} must be {_KIND_NAMES[kind]}, got {value!r}")
    return value


def read_params(cls: type[T], values: Mapping[str, object]) -> T:
    """The table `cls` filled from `values` (missing names take their defaults), checked.

    Unknown names are refused (a typo must not pass silently), values are checked against their
    defaults' types, then the table's `validate()` (if it has one) checks what the values mean.
    """
    table = parameter_table(cls)
    unknown = sorted(set(values) - set(table))
    if unknown:
        raise ParamError(f"unknown parameter(s) {', '.join(unknown)}: check the spelling (unknown parameters are "
                         f"refused so that a typo cannot pass unnoticed); this node takes: {', '.join(table)}")
    params = cls(**{name: coerce(name, values.get(name, default), default) for name, (default, _) in table.items()})
    validate = getattr(params, "validate", None)
    if validate is not None:
        validate()
    return params


def realtime_priority_problem(priority: int) -> str | None:
    """Why `realtime_priority` cannot be used (None: it can): every process's SCHED_FIFO priority, 0..99."""
    if not 0 <= priority <= 99:
        return f"realtime_priority {priority} must be in 0..99 (0 = normal scheduling)"
    return None


def check_realtime_priority(priority: int) -> None:
    """Refuse a `realtime_priority` outside 0..99 (ParamError)."""
    if (problem := realtime_priority_problem(priority)) is not None:
        raise ParamError(problem)


def check_interface(name: str) -> None:
    """Refuse a DDS network interface that this machine does not have (ParamError listing the ones it has)."""
    if (problem := interface_problem(name)) is not None:
        raise ParamError(problem)
