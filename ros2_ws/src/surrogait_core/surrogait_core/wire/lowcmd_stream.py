"""rt/lowcmd as others write it, taken raw: every sample since the last poll, with its arrival time.

A policy node streams LowCmd at the motor rate (500 Hz) and changes its targets once a control
period, so nine messages in ten repeat the previous one byte for byte. Deserializing each one in
Python (≈ 0.3 ms) and recomputing its CRC would cost a watcher a quarter of a core; `RepeatFilter`
lets it decode only the messages whose bytes changed, and time the others.

Arrival times: a sample polled now arrived since the previous poll; within that interval its
source timestamp places it exactly when the writer shares this host's clock (rehearsal), and a
robot whose clock differs cannot push it outside the interval.
"""

from __future__ import annotations

import time

from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_wire import LOWCMD_TOPIC

HISTORY_DEPTH = 64  # samples kept between polls: 128 ms of a 500 Hz stream, ≥ 25 polls at 200 Hz


class TimedTake:
    """Takes every sample a RawReader holds, each with its monotonic arrival time (see the module's doc).

    `writers_share_this_clock`: every writer runs on this host (a rehearsal's observer), so a sample is timed by
    its source timestamp alone. A stopped or starved process takes its samples late, and its own DDS receive
    thread may have queued them late too: the poll interval then says nothing about when they were sent."""

    def __init__(self, raw: RawReader, writers_share_this_clock: bool = False):
        self._raw = raw
        self._same_clock = writers_share_this_clock
        self._last_poll: float | None = None

    @property
    def depth(self) -> int:
        """Samples the reader keeps between polls: a poll that returns this many may have lost older ones."""
        return self._raw.depth

    def poll(self) -> list[tuple[bytes, float]]:
        """(CDR sample, monotonic arrival time) of every sample since the last call, oldest first."""
        now, wall_s = time.monotonic(), time.time()
        since_last_poll = 0.0 if self._last_poll is None else now - self._last_poll
        self._last_poll = now
        max_age_s = float("inf") if self._same_clock else since_last_poll
        out = [(data, now - min(max(wall_s - sent_s, 0.0), max_age_s)) for data, sent_s in self._raw.take()]
        out.sort(key=lambda sample: sample[1])
        return out


class LowCmdStream(TimedTake):
    """A KeepLast(`depth`) reader of rt/lowcmd that ignores this participant's own writers."""

    def __init__(self, participant, topic=None, depth: int = HISTORY_DEPTH, writers_share_this_clock: bool = False):
        """`participant`: a cyclonedds DomainParticipant; `topic`: its rt/lowcmd Topic, if it has one;
        `depth`: samples kept between polls (older ones are lost)."""
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

        super().__init__(RawReader(participant, LOWCMD_TOPIC, LowCmd_, depth, ignore_local=True, topic=topic),
                         writers_share_this_clock)
        self.topic = self._raw.topic


class RepeatFilter:
    """Remembers the last message's bytes and the verdict reached on them."""

    def __init__(self) -> None:
        self._last: bytes | None = None
        self.verdict: object = None

    def repeated(self, data: bytes) -> bool:
        return data == self._last

    def remember(self, data: bytes, verdict: object) -> None:
        self._last, self.verdict = data, verdict
