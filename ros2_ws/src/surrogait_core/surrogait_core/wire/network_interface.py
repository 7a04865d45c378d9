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


def interface_ipv4(name: str) -> str | None:
    """The IPv4 address of interface `name`, or None if it has none (or does not exist)."""
    import fcntl
    import struct

    siocgifaddr = 0x8915  # Linux: get an interface's (first) IPv4 address
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            request = struct.pack("256s", name.encode()[:15])
            return socket.inet_ntoa(fcntl.ioctl(s.fileno(), siocgifaddr, request)[20:24])
        except OSError:
            return None


def udp_peer_problem(interface: str, peer_ip: str) -> str | None:
    """None when `interface` can reach `peer_ip` directly (the same /24, or both loopback), else why not.

    The Go1's low-level UDP peer sits on its own subnet (192.168.123.0/24): a computer wired to it
    needs an address there on the interface it is wired through, or every packet goes elsewhere.
    """
    if (problem := interface_problem(interface)) is not None:
        return problem
    address = interface_ipv4(interface)
    if peer_ip.startswith("127."):
        if address is not None and address.startswith("127."):
            return None
        return f"the peer {peer_ip} is on loopback: use network_interface lo (rehearsal on one machine)"
    subnet = peer_ip.rsplit(".", 1)[0]
    if address is not None and address.rsplit(".", 1)[0] == subnet:
        return None
    return (f"network interface {interface!r} has {'address ' + address if address else 'no IPv4 address'}, not "
            f"one in {subnet}.x where the robot ({peer_ip}) is: give it one (e.g. `sudo ip addr add {subnet}.162/24 "
            f"dev {interface}`) or choose the interface wired to the robot")
