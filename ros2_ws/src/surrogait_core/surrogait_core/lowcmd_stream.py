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

from surrogait_core.go2_wire import LOWCMD_TOPIC

HISTORY_DEPTH = 64  # samples kept between polls: 128 ms of a 500 Hz stream, ≥ 25 polls at 200 Hz


class LowCmdStream:
    """A KeepLast(HISTORY_DEPTH) reader of rt/lowcmd that ignores this participant's own writers."""

    def __init__(self, participant, topic=None):
        """`participant`: a cyclonedds DomainParticipant; `topic`: its rt/lowcmd Topic, if it has one."""
        from cyclonedds._clayer import ddspy_take
        from cyclonedds.core import InstanceState, SampleState, ViewState
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

        self.topic = topic if topic is not None else Topic(participant, LOWCMD_TOPIC, LowCmd_)
        qos = Qos(Policy.History.KeepLast(HISTORY_DEPTH), Policy.IgnoreLocal.Participant)
        self._reader = DataReader(participant, self.topic, qos)
        self._any_state = SampleState.Any | ViewState.Any | InstanceState.Any
        self._take = ddspy_take
        self._last_poll: float | None = None

    def poll(self) -> list[tuple[bytes, float]]:
        """(CDR sample, monotonic arrival time) of every sample since the last call, oldest first."""
        now, wall_ns = time.monotonic(), time.time_ns()
        since_last_poll = 0.0 if self._last_poll is None else now - self._last_poll
        self._last_poll = now
        samples = self._take(self._reader._ref, self._any_state, HISTORY_DEPTH)
        if isinstance(samples, int):  # a DDS return code, as DataReader.take raises on
            raise RuntimeError(f"taking rt/lowcmd failed (DDS return code {samples})")
        out = []
        for data, info in samples:
            if info.valid_data:
                age_s = (wall_ns - info.source_timestamp) * 1e-9
                out.append((data, now - min(max(age_s, 0.0), since_last_poll)))
        out.sort(key=lambda sample: sample[1])
        return out


class RepeatFilter:
    """Remembers the last message's bytes and the verdict reached on them."""

    def __init__(self) -> None:
        self._last: bytes | None = None
        self.verdict: object = None

    def repeated(self, data: bytes) -> bool:
        return data == self._last

    def remember(self, data: bytes, verdict: object) -> None:
        self._last, self.verdict = data, verdict
