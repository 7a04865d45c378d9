"""The fault suite's independent observers of the robot's wire, in the suite's own process.

Each records every LowCmd that reached the robot and every LowState, with arrival times (monotonic), and decodes
them afterwards: `WireRecorder` on the Go2's DDS wire (a raw reader of rt/lowcmd at the motor rate, a subscriber
of rt/lowstate), `TapRecorder` on the Go1's UDP link as the simulated robot sees it (its tap's copies, timed by
the kernel). The Go1's link is point to point, so only the simulator can say what reached the robot.
"""

from __future__ import annotations

import threading
import time

from surrogait_core.robot_links import UDP, robot_link
from surrogait_core.wire import go1_wire, go2_wire
from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_wire import LowStateView, MotorCommands
from surrogait_core.wire.go2_wire_image import LowStateDecoder
from surrogait_core.wire.lowcmd_stream import LowCmdStream, RepeatFilter, TimedTake
from surrogait_rehearsal.harness.nodes import go1_ports

SO_TIMESTAMPNS = 35  # Linux (asm-generic/socket.h); the socket module does not name it


def kernel_arrival_monotonic(cmsgs: list[tuple[int, int, bytes]], seen_at_monotonic: float) -> float:
    """When the kernel queued a datagram (its SCM_TIMESTAMPNS, CLOCK_REALTIME) on the monotonic clock;
    `seen_at_monotonic` where the message carries no timestamp."""
    import socket
    import struct

    for level, kind, payload in cmsgs:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
            sec, nsec = struct.unpack("qq", payload[:16])
            realtime_minus_monotonic = time.clock_gettime(time.CLOCK_REALTIME) - time.monotonic()
            return sec + nsec * 1e-9 - realtime_minus_monotonic
    return seen_at_monotonic



class _WireLog:
    """Every LowCmd that reached the robot and every LowState, with arrival times (monotonic), decoded at
    `snapshot()` — commands as MotorCommands, states as LowStateView, whatever the robot. A subclass feeds
    `_raw_cmds` / `_raw_states` and says how to decode one of each."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._raw_cmds: list[tuple[float, bytes]] = []
        self._raw_states: list[tuple[float, object]] = []
        self.stamp_lag_max_s: float | None = None  # how late a sample's own time stamp came, where known
        self.history_overflows = 0  # polls that found a history full: samples may have been lost

    def _decode_cmd(self, raw: bytes) -> MotorCommands:
        raise NotImplementedError

    def _decode_state(self, raw: object) -> LowStateView:
        raise NotImplementedError

    def clear(self):
        with self.lock:
            self._raw_cmds, self._raw_states, self.history_overflows = [], [], 0

    def snapshot(self) -> tuple[list[tuple[float, MotorCommands]], list[tuple[float, LowStateView]]]:
        with self.lock:
            raw, states = list(self._raw_cmds), list(self._raw_states)
        cmds, repeats = [], RepeatFilter()  # a run of identical messages is decoded once
        for t, data in raw:
            if not repeats.repeated(data):
                repeats.remember(data, self._decode_cmd(data))
            cmds.append((t, repeats.verdict))
        return cmds, [(t, self._decode_state(m)) for t, m in states]

    def recent_states(self, n: int) -> list[tuple[float, LowStateView]]:
        with self.lock:
            tail = self._raw_states[-n:]
        return [(t, self._decode_state(m)) for t, m in tail]

    def recent_commands(self, n: int) -> list[MotorCommands]:
        with self.lock:
            tail = self._raw_cmds[-n:]
        return [self._decode_cmd(data) for _, data in tail]

    def last_state_time(self) -> float | None:
        with self.lock:
            return self._raw_states[-1][0] if self._raw_states else None


class WireRecorder(_WireLog):
    """The Go2's DDS wire: every rt/lowcmd and rt/lowstate sample, both taken raw and timed by their source
    timestamps (`lowcmd_stream.TimedTake`; the rehearsal's writers share this host's clock), decoded only at
    `snapshot()`.

    The suite runs at the lowest real-time priority beside the rehearsal's processes, which on a saturated
    2-core machine left this thread unscheduled for 50-200 ms at a time, up to 3 s during bring-up. DDS
    therefore keeps HISTORY_S of each stream between polls (a shallow history lost the first damping
    commands and the judge saw damping half a second late), and a poll that finds a history full says so
    (`history_overflows`): samples may have been lost, and a latency judged from them cannot be trusted.
    """

    POLL_S = 0.01
    HISTORY_S = 8.0  # of a 500 Hz stream

    def __init__(self, domain: int):
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

        super().__init__()
        depth = int(self.HISTORY_S * 500)
        self._deserialize = LowCmd_.deserialize
        participant = DomainParticipant(domain)  # after ChannelFactoryInitialize: its config
        # The rehearsal's processes all run on this host: samples are timed by when they were written.
        self._cmd_stream = LowCmdStream(participant, depth=depth, writers_share_this_clock=True)
        self._state_stream = TimedTake(RawReader(participant, go2_wire.LOWSTATE_TOPIC, LowState_, depth), True)
        self._state_decoder = LowStateDecoder()
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="wire_recorder", daemon=True)
        self._poller.start()

    def _decode_cmd(self, raw: bytes) -> MotorCommands:
        return go2_wire.motor_commands(self._deserialize(raw))

    def _decode_state(self, raw: object) -> LowStateView:
        return self._state_decoder.decode(raw)

    def _poll(self):
        while not self._stop.wait(self.POLL_S):
            cmds, states = self._cmd_stream.poll(), self._state_stream.poll()
            with self.lock:
                self.history_overflows += (len(cmds) >= self._cmd_stream.depth) + \
                    (len(states) >= self._state_stream.depth)
                self._raw_cmds += [(t, data) for data, t in cmds]
                self._raw_states += [(t, data) for data, t in states]

    def close(self):
        self._stop.set()
        self._poller.join(timeout=1.0)


class TapRecorder(_WireLog):
    """The Go1's link, seen from the simulated robot: its tap sends a copy of every LowCmd it accepted
    (614 bytes) and every LowState it sent (807 bytes) to `port` on 127.0.0.1.

    Each copy is timed by the kernel as it reaches the socket (SO_TIMESTAMPNS), not when this thread gets to
    it: the thread shares this process's GIL with the operator's executor and runs at normal priority beside
    the rehearsal's real-time processes, so its own clock read can come milliseconds late (`stamp_lag_max_s`
    says by how much), and latencies here are judged in milliseconds.
    """

    def __init__(self, port: int):
        import socket

        super().__init__()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # a stalled reader loses nothing
        self._sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.settimeout(0.05)
        self.stamp_lag_max_s = 0.0  # the longest this thread took to see a copy after the kernel had it
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="tap_recorder", daemon=True)
        self._thread.start()

    def _decode_cmd(self, raw: bytes) -> MotorCommands:
        return go1_wire.decode_lowcmd(raw).motors

    def _decode_state(self, raw: object) -> LowStateView:
        return go1_wire.decode_lowstate(raw)

    def _receive(self):
        import socket

        ancillary = socket.CMSG_SPACE(16)  # struct timespec
        while not self._stop.is_set():
            try:
                data, cmsgs, _, _ = self._sock.recvmsg(2048, ancillary)
            except OSError:  # timeout
                continue
            seen_at = time.monotonic()
            t = kernel_arrival_monotonic(cmsgs, seen_at)
            with self.lock:
                self.stamp_lag_max_s = max(self.stamp_lag_max_s, seen_at - t)
                if len(data) == go1_wire.LOWCMD_LENGTH:
                    self._raw_cmds.append((t, data))
                elif len(data) == go1_wire.LOWSTATE_LENGTH:
                    self._raw_states.append((t, data))

    def clear(self):
        super().clear()
        with self.lock:
            self.stamp_lag_max_s = 0.0

    def close(self):
        self._stop.set()
        self._thread.join(timeout=1.0)
        self._sock.close()


WireObserver = WireRecorder | TapRecorder


def observe_wire(robot: str, domain: int) -> WireObserver:
    """An observer of `robot`'s wire in the rehearsal on `domain`: the DDS wire itself, or, on a point-to-point UDP
    link, the simulated robot's tap (nothing else sees what reached the robot)."""
    if robot_link(robot).protocol == UDP:
        return TapRecorder(go1_ports(domain).tap)
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize

    ChannelFactoryInitialize(domain, "lo")
    return WireRecorder(domain)
