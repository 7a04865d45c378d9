"""The robot's wire, read for the recording in a thread of the recorder's own, never in a real-time process.

- Go2 (`DdsWireTap`): rt/lowstate and rt/lowcmd taken from KeepLast DDS histories as raw CDR samples with their
  writers' source timestamps (surrogait_core.wire.dds_raw_reader: no Python deserialisation) in the recorder's
  loop; recorded byte for byte.
- Go1 (`UdpWireTap`): the UDP link is point-to-point, so the safety monitor's gateway sends a copy of every
  LowState it gets from the robot and every LowCmd it sends to it to 127.0.0.1:udp_record_port; they are told
  apart by length and decoded (surrogait_core.wire.go1_wire) into standard messages (topics.GO1_WIRE_TOPICS).
"""

from __future__ import annotations

import collections
import socket
import struct
import threading
import time
from collections.abc import Callable

from surrogait_core.wire import go1_wire

WIRE_HISTORY_DEPTH = 512  # samples of each topic DDS keeps between takes: 1 s of a 500 Hz stream
# What the kernel may queue while the recorder is starved of CPU (a normal-priority process beside real-time
# ones): Linux charges a datagram's whole kernel buffer, not its payload (measured on loopback: 1280 B for a 614 B
# LowCmd, 2304 B for an 807 B LowState), and both streams run at 500 Hz, so 8 MiB holds ~4.7 s. 1 MiB (~1.2 s)
# overflowed once on a 2-core CI machine (442 packets: docs/rehearsal-log.md 2026-12-07 (5)). Linux grants at most
# twice net.core.rmem_max: the tap reads back what it got.
UDP_RECEIVE_BUFFER_BYTES = 8 << 20
KERNEL_BYTES_PER_LOWCMD, KERNEL_BYTES_PER_LOWSTATE = 1280, 2304
GO1_STREAM_HZ = 500.0  # a LowState and a LowCmd each
# Linux's socket option for the count of datagrams the kernel dropped on a socket (Python's socket module does not
# name it): each datagram then carries the total so far as ancillary data.
SO_RXQ_OVFL = getattr(socket, "SO_RXQ_OVFL", 40)
_OVERFLOW = struct.Struct("=I")

Write = Callable[[str, bytes, int, int | None], None]  # (topic, CDR bytes, log time ns, publish time ns)


class DdsWireTap:
    """The Go2's rt/lowstate and rt/lowcmd on `domain` (after ChannelFactoryInitialize on the interface); `take`
    writes what arrived since the last take (the recorder's loop calls it)."""

    def __init__(self, domain: int, network_interface: str, write: Write, lowstate_topic: str, lowcmd_topic: str):
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

        from surrogait_core.wire.dds_raw_reader import RawReader
        from surrogait_core.wire.go2_wire import LOWCMD_TOPIC, LOWSTATE_TOPIC

        ChannelFactoryInitialize(domain, network_interface)
        participant = DomainParticipant(domain)
        self._readers = ((RawReader(participant, LOWSTATE_TOPIC, LowState_, WIRE_HISTORY_DEPTH), lowstate_topic),
                         (RawReader(participant, LOWCMD_TOPIC, LowCmd_, WIRE_HISTORY_DEPTH), lowcmd_topic))
        self._write = write

    def take(self) -> None:
        now_ns = time.time_ns()
        for reader, topic in self._readers:
            for data, sent_s in reader.take():
                self._write(topic, data, now_ns, int(sent_s * 1e9))


class UdpWireTap:
    """The Go1's packets as the safety monitor's gateway copies them to 127.0.0.1:`port`.

    Its thread only receives: each packet and its arrival time are queued as bytes. `take` (the recorder's loop)
    decodes what arrived and hands it to `on_lowstate(view, arrival_ns)` and `on_lowcmd(command, arrival_ns)`;
    packets of another length, or that do not decode, are counted in `refused`. Why not decode in the thread: a
    decoded exchange costs ~0.35 ms of Python (two messages built and serialised per packet), 17 % of a core at
    500 Hz; a thread that falls behind under load leaves the stream queued in the kernel, and closing the socket
    on that queue lost the session's end (3.6 % of a recording once: docs/rehearsal-log.md 2026-12-06 (3)). Queued
    here and read out at `stop`, a late recorder writes late and loses nothing. `dropped` counts the datagrams the
    kernel still dropped (its receive buffer full: SO_RXQ_OVFL), which the recording's metadata states."""

    def __init__(self, port: int, on_lowstate: Callable, on_lowcmd: Callable):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_RECEIVE_BUFFER_BYTES)
        self._socket.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
        self.receive_buffer_bytes = self._socket.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        try:
            self._socket.bind(("127.0.0.1", port))
        except OSError as e:
            self._socket.close()
            raise OSError(f"session recorder: cannot listen on 127.0.0.1:{port} for the gateway's copies of the "
                          f"Go1's packets: {e.strerror or e}; is another session recorder running?") from e
        self._socket.settimeout(0.1)
        self.address: tuple[str, int] = self._socket.getsockname()  # the port bound (0 asks the system for one)
        self._on_lowstate, self._on_lowcmd = on_lowstate, on_lowcmd
        self.refused = 0
        self.dropped = 0
        self._arrived: collections.deque[tuple[bytes, int]] = collections.deque()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="udp_wire_tap", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._receive(0)
            except TimeoutError:
                continue
            except OSError:
                return  # closed

    def _receive(self, flags: int) -> None:
        packet, ancillary, _, _ = self._socket.recvmsg(2048, socket.CMSG_SPACE(_OVERFLOW.size), flags)
        self._arrived.append((packet, time.time_ns()))
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(data) >= _OVERFLOW.size:
                self.dropped = _OVERFLOW.unpack_from(data)[0]  # the socket's total so far

    @property
    def receive_buffer_s(self) -> float:
        """How long the kernel can queue the Go1's streams while the recorder does not read (then it drops)."""
        return self.receive_buffer_bytes / ((KERNEL_BYTES_PER_LOWCMD + KERNEL_BYTES_PER_LOWSTATE) * GO1_STREAM_HZ)

    @property
    def pending(self) -> int:
        """Packets received and not yet taken."""
        return len(self._arrived)

    def take(self) -> None:
        """Decode and hand on every packet that arrived since the last take, in arrival order."""
        while self._arrived:
            packet, arrival_ns = self._arrived.popleft()
            try:
                if len(packet) == go1_wire.LOWSTATE_LENGTH:
                    self._on_lowstate(go1_wire.decode_lowstate(packet), arrival_ns)
                elif len(packet) == go1_wire.LOWCMD_LENGTH:
                    self._on_lowcmd(go1_wire.decode_lowcmd(packet), arrival_ns)
                else:
                    self.refused += 1
            except go1_wire.Go1WireError:
                self.refused += 1

    def stop(self) -> None:
        """Stop receiving; every packet that reached the socket before is there for a last `take` (the kernel's
        queue is read out first: closing the socket would throw away the stream's end)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        while True:
            try:
                self._receive(socket.MSG_DONTWAIT)
            except OSError:  # BlockingIOError: nothing left (or already closed)
                break
        self._socket.close()
