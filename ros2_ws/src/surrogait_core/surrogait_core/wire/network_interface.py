"""The DDS network interface check every node makes before unitree_sdk2py sees the name.

DDS given a name that is not an interface here fails late and obscurely; each node refuses it
up front with this message instead.
"""

from __future__ import annotations

import socket


def available_interfaces() -> list[str]:
    return [name for _, name in socket.if_nameindex()]


def interface_problem(name: str) -> str | None:
    """None when `name` is a network interface of this machine, else what is wrong and what to use."""
    names = available_interfaces()
    if name in names:
        return None
    return (f"network_interface {name!r} does not exist on this machine; available: {', '.join(names)} "
            "(lo for a rehearsal on one machine, the Ethernet interface wired to the robot otherwise)")
