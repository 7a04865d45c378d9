"""The robot's wire, read for the recording in a thread of the recorder's own, never in a real-time process.

- Go2 (`DdsWireTap`): rt/lowstate and rt/lowcmd taken from KeepLast DDS histories as raw CDR samples with their
  writers' source timestamps (surrogait_core.wire.dds_raw_reader: no Python deserialisation) in the recorder's
  loop; recorded byte for byte.
- Go1 (`UdpWireTap`): the UDP link is point-to-point, so the safety monitor's gateway sends a copy of every
  LowState it gets from the robot and every LowCmd it sends to it to 127.0.0.1:udp_record_port; they are told
  apart by length and decoded (surrogait_core.wire.go1_wire) into standard messages (topics.GO1_WIRE_TOPICS).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from surrogait_core.wire import go1_wire

WIRE_HISTORY_DEPTH = 512  # samples of each topic DDS keeps between takes: 1 s of a 500 Hz stream
UDP_RECEIVE_BUFFER_BYTES = 1 << 20  # ~1 s of both Go1 streams queued in the kernel while the thread is late

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

    `on_lowstate(view, arrival_ns)` and `on_lowcmd(command, arrival_ns)` get each decoded packet; packets of
    another length, or that do not decode, are counted in `refused`."""

    def __init__(self, port: int, on_lowstate: Callable, on_lowcmd: Callable):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_RECEIVE_BUFFER_BYTES)
        try:
            self._socket.bind(("127.0.0.1", port))
        except OSError as e:
            self._socket.close()
            raise OSError(f"session recorder: cannot listen on 127.0.0.1:{port} for the gateway's copies of the "
                          f"Go1's packets: {e.strerror or e}; is another session recorder running?") from e
        self._socket.settimeout(0.1)
        self._on_lowstate, self._on_lowcmd = on_lowstate, on_lowcmd
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="udp_wire_tap", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                packet = self._socket.recv(2048)
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            arrival_ns = time.time_ns()
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
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self._socket.close()
