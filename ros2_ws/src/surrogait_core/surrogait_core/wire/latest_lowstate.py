"""rt/lowstate, read when a node asks: only the newest sample is kept, and only it is decoded.

The Go2 publishes rt/lowstate at 500 Hz. A callback per sample (unitree_sdk2py's
ChannelSubscriber handler) makes Python deserialize every one of them — about 0.26 ms of CPU
each here, 13 % of a core on its own, and each one holds the GIL the node's other threads need.
The policy node uses one state a control cycle (50 Hz) and the safety monitor one a check
(200 Hz), so this reader keeps a KEEP_LAST(1) history in DDS (C, no Python work per sample) and
decodes only the newest sample when asked — from its CDR bytes with `LowStateDecoder` (~0.01 ms)
rather than through cyclonedds' generic deserializer (0.3-0.6 ms; in the monitor, most of its check
thread's CPU). Same topic and type as the SDK's subscriber, through the participant it is
given (created after ChannelFactoryInitialize, so the network interface configured there applies).

With `depth` > 1 the reader also counts the samples that arrived between takes (the stream's rate is
an input the nodes check), and with `check_crc` it checks the CRC of the sample it decodes
(`go2_lowstate_layout`, ≈ 15 µs): a Go2 seals every LowState, a corrupted sample or a simulator that
leaves crc unset does not.
"""

from __future__ import annotations

import dataclasses

from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_wire import LOWSTATE_TOPIC, LowStateView
from surrogait_core.wire.go2_wire_image import LowStateDecoder


@dataclasses.dataclass(frozen=True)
class LowStateSample:
    state: LowStateView
    source_time_s: float  # the publisher's wall clock (time.time() scale) when it wrote the sample
    received: int = 1  # samples that arrived since the previous take, this one included
    crc_ok: bool | None = None  # None: not checked
    data: bytes | None = None  # the CDR sample (health fields are read from it at pre-flight)


class LatestLowState:
    def __init__(self, participant, depth: int = 1, check_crc: bool = False):
        """`participant`: a cyclonedds DomainParticipant on the robot's domain; `depth`: samples DDS keeps
        between takes (counted, only the newest decoded); `check_crc`: check the newest sample's CRC."""
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        self._raw = RawReader(participant, LOWSTATE_TOPIC, LowState_, depth=depth)
        self._decoder = LowStateDecoder()
        self._crc = None
        if check_crc:
            from surrogait_core.wire.go2_lowstate_layout import LowStateCrc

            self._crc = LowStateCrc()

    def take(self) -> LowStateSample | None:
        """The newest sample not taken before, or None if none arrived since the last call."""
        samples = self._raw.take()
        if not samples:
            return None
        data, sent_s = samples[-1]
        crc_ok = None if self._crc is None else self._crc.check(data)
        return LowStateSample(self._decoder.decode(data), sent_s, len(samples), crc_ok, data)
