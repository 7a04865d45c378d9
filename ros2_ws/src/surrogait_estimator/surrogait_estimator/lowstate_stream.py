"""rt/lowstate for the estimator: its own DDS reader, emptied in batches by the estimator's thread.

Why not unitree_sdk2py's ChannelSubscriber (what this node used, and what went wrong on a busy
2-core machine):
- its DDS listener deserialises every sample in Python (~0.45 ms each, a quarter of a core at
  500 Hz) in a thread that competes for the GIL with the thread doing the estimation;
- its queue (`Init(handler, 10)`) keeps the *oldest* ten samples and silently drops new ones
  when full, so a handler that falls behind works through stale samples: its estimate trailed
  the robot by ten samples' worth of its own (descheduled) processing time, 0.15-0.5 s;
- cyclonedds-python runs the listener as soon as the C reader exists, before the Python object
  is registered: `Entity.get_entity` returns None, `None.take(1)` raises AttributeError, and the
  SDK's bare `except:` prints "[Reader] take sample error" for each sample that arrives in that
  window (dozens when the process is descheduled while it subscribes); those samples are lost.

Here a KEEP_LAST(`depth`) reader without a listener holds what arrived (C, no Python per
sample); the estimator's thread sleeps in a WaitSet (GIL released) until data is there, takes
everything at once as raw CDR bytes with the writer's timestamps, and decodes only the samples
it will process (`LowStateDecoder`, ~0.01 ms each). Same topic and type as the SDK's subscriber,
through the participant it is given (created after ChannelFactoryInitialize, so the network
interface configured there applies).
"""

from __future__ import annotations

import dataclasses

from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_wire import LOWSTATE_TOPIC

# 128 ms at 500 Hz: more than the catch-up budget ever processes after a stall; older samples would
# be skipped anyway, and DDS overwriting them costs nothing.
HISTORY_DEPTH = 64


@dataclasses.dataclass(frozen=True)
class RawLowState:
    data: bytes  # the sample as it travelled: the Go2's LowState_ CDR, or a Go1 LowState packet
    source_time_s: float  # the writer's wall clock when it wrote the sample (Go1: this host's, at the take)


class LowStateStream:
    def __init__(self, participant, depth: int = HISTORY_DEPTH):
        """`participant`: a cyclonedds DomainParticipant on the robot's domain."""
        from cyclonedds.core import ReadCondition, WaitSet
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        self._raw = RawReader(participant, LOWSTATE_TOPIC, LowState_, depth)
        self._waitset = WaitSet(participant)
        self._condition = ReadCondition(self._raw.reader, self._raw.any_state)
        self._waitset.attach(self._condition)
        # DDS hands over whole LowState_ samples: nothing is refused before the estimator's own checks.
        self.refused: dict[str, int] = {}
        self.refused_total = 0
        self.last_refusal = ""

    def wait(self, timeout_s: float) -> bool:
        """Sleep until a sample is waiting (True) or `timeout_s` passed (False)."""
        return self._waitset.wait(int(timeout_s * 1e9)) > 0

    def take_all(self) -> list[RawLowState]:
        """Every sample waiting, oldest first; the reader is empty afterwards."""
        return [RawLowState(data, sent_s) for data, sent_s in self._raw.take()]

    def close(self) -> None:
        self._waitset.detach(self._condition)
