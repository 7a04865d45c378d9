"""The Go1's LowState for the estimator: a UDP socket on loopback where the safety monitor forwards every one.

The Go1 speaks unitree_legged_sdk UDP, not DDS, and the safety monitor is the only process with a socket to
the robot: it forwards each LowState it receives to 127.0.0.1:`udp_lowstate_port`. Same shape as
`LowStateStream` (`wait` sleeps in poll() with the GIL released, `take_all` empties the socket at once), so
the node's estimator thread works the same. Packets the SDK would refuse (length, CRC) are refused here and
counted by reason (`refused`); the others are handed over as bytes for `go1_wire.decode_lowstate`, stamped
with this host's clock at the take (UDP carries no sender stamp).
"""

from __future__ import annotations

import select
import socket
import time

from surrogait_core.wire import go1_wire
from surrogait_estimator.lowstate_stream import RawLowState

LOOPBACK = "127.0.0.1"
RECEIVE_BUFFER_BYTES = 1 << 20  # ≈ 0.5 s of LowState at 500 Hz (the kernel counts ~2 kB a datagram)
REFUSAL_REASONS = ("length", "crc")  # go1_wire.lowstate_drop_reason's


class Go1LowStateStream:
    def __init__(self, port: int):
        self.port = port
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER_BYTES)
            self._socket.bind((LOOPBACK, port))
        except OSError:
            self._socket.close()
            raise
        self._socket.setblocking(False)
        self._poll = select.poll()
        self._poll.register(self._socket, select.POLLIN)
        self.refused = dict.fromkeys(REFUSAL_REASONS, 0)
        self.last_refusal = ""

    def wait(self, timeout_s: float) -> bool:
        """Sleep until a packet is waiting (True) or `timeout_s` passed (False)."""
        return bool(self._poll.poll(timeout_s * 1e3))

    def take_all(self) -> list[RawLowState]:
        """Every LowState packet waiting that the SDK would accept, oldest first; the socket is empty afterwards."""
        packets = []
        while True:
            try:
                packets.append(self._socket.recv(go1_wire.LOWSTATE_LENGTH + 1))  # + 1: a longer one shows
            except BlockingIOError:
                break
        now_s = time.time()
        batch = []
        for packet in packets:
            reason = go1_wire.lowstate_drop_reason(packet)
            if reason is None:
                batch.append(RawLowState(packet, now_s))
            else:
                self.refused[reason] += 1
                self.last_refusal = reason
        return batch

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())

    def close(self) -> None:
        self._socket.close()
