"""The Go1's wire as the recorder taps it: the gateway's copies of every LowState and LowCmd, received by a thread
that only queues them, decoded in the recorder's loop; what the kernel drops (the recorder too late to read) is
counted, never silent. Real UDP on loopback, real Go1 packets (surrogait_core.wire.go1_wire)."""

from __future__ import annotations

import socket
import time

import numpy as np

from surrogait_core.wire import go1_wire
from surrogait_recorder.wire_taps import KERNEL_BYTES_PER_LOWCMD, UdpWireTap

BESIDE_REHEARSALS = "an ephemeral port of its own and no real time"

LOWCMD = go1_wire.encode_lowcmd(np.zeros(12), np.zeros(12), np.full(12, 20.0), np.full(12, 0.5), np.zeros(12))


def _wait_until(condition, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_packets_are_queued_by_the_thread_and_decoded_in_order_by_take():
    commands, states = [], []
    tap = UdpWireTap(0, lambda view, t: states.append(t), lambda cmd, t: commands.append((cmd, t)))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        tap.start()
        for _ in range(50):
            sender.sendto(LOWCMD, tap.address)
        sender.sendto(b"not a Go1 packet", tap.address)
        assert _wait_until(lambda: tap.pending == 51)
        assert commands == [], "nothing is decoded in the receiving thread"
        tap.take()
    finally:
        tap.stop()
        sender.close()
    assert len(commands) == 50 and states == [] and tap.refused == 1
    assert np.allclose(commands[0][0].motors.kp, 20.0)
    arrivals = [t for _, t in commands]
    assert arrivals == sorted(arrivals)
    assert tap.dropped == 0


def test_packets_still_in_the_kernels_queue_at_stop_are_taken_not_thrown_away():
    """A recorder behind the stream when the session ends: what the socket holds is the stream's end."""
    commands = []
    tap = UdpWireTap(0, lambda view, t: None, lambda cmd, t: commands.append(t))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _ in range(200):  # the thread never started: every packet still in the kernel's queue
            sender.sendto(LOWCMD, tap.address)
    finally:
        tap.stop()
        sender.close()
    tap.take()
    assert len(commands) == 200 and tap.dropped == 0


def test_what_the_kernel_drops_while_nobody_reads_is_counted():
    received = []
    tap = UdpWireTap(0, lambda view, t: None, lambda cmd, t: received.append(t))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sent = 20_000  # ~12 MB of LowCmds: several times the receive buffer
    try:
        for _ in range(sent):  # the thread not started: the recorder stalled
            sender.sendto(LOWCMD, tap.address)
        tap.start()
        assert _wait_until(lambda: tap.pending > 0 and not _has_more(tap))  # the buffer read empty
        queued = tap.pending
        sender.sendto(LOWCMD, tap.address)  # arrives after the drops: it carries their count
        assert _wait_until(lambda: tap.pending == queued + 1)
        tap.take()
    finally:
        tap.stop()
        sender.close()
    assert 0 < tap.dropped < sent
    assert len(received) + tap.dropped == sent + 1, "every packet sent is either recorded or counted as dropped"
    assert abs(queued * KERNEL_BYTES_PER_LOWCMD - tap.receive_buffer_bytes) < 0.1 * tap.receive_buffer_bytes, \
        f"the kernel held {queued} LowCmds in {tap.receive_buffer_bytes} B: not what receive_buffer_s assumes"


def _has_more(tap: UdpWireTap) -> bool:
    before = tap.pending
    time.sleep(0.2)
    return tap.pending != before
