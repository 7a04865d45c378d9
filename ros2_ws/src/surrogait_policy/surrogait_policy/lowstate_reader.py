"""rt/lowstate, read once a control cycle: only the newest sample is kept, and only it is decoded.

The Go2 publishes rt/lowstate at 500 Hz. A callback per sample (unitree_sdk2py's
ChannelSubscriber handler) makes Python deserialize every one of them — about 0.26 ms of CPU
each here, 13 % of a core on its own, and each one holds the GIL the control thread needs.
The policy uses one state a cycle (50 Hz), so this reader keeps a KEEP_LAST(1) history in
DDS (C, no Python work per sample) and deserializes only the newest sample when the control
loop asks for it. Same topic and type as the SDK's subscriber, on the domain that
ChannelFactoryInitialize configured (interface included).
"""

from __future__ import annotations

import dataclasses

from surrogait_core.go2_wire import LOWSTATE_TOPIC


@dataclasses.dataclass(frozen=True)
class LowStateSample:
    msg: object  # unitree_go.msg.dds_.LowState_
    source_time_s: float  # the publisher's wall clock (time.time() scale) when it wrote the sample


class LatestLowState:
    def __init__(self, domain: int):
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        self._participant = DomainParticipant(domain)
        self._topic = Topic(self._participant, LOWSTATE_TOPIC, LowState_)
        self._reader = DataReader(self._participant, self._topic, qos=Qos(Policy.History.KeepLast(1)))

    def take(self) -> LowStateSample | None:
        """The newest sample not taken before, or None if none arrived since the last call."""
        samples = self._reader.take(N=1)
        if not samples or not samples[0].sample_info.valid_data:
            return None
        return LowStateSample(samples[0], samples[0].sample_info.source_timestamp * 1e-9)
