"""rt/lowstate, read once a control cycle: only the newest sample is kept, and only it is decoded.

The Go2 publishes rt/lowstate at 500 Hz. A callback per sample (unitree_sdk2py's
ChannelSubscriber handler) makes Python deserialize every one of them — about 0.26 ms of CPU
each here, 13 % of a core on its own, and each one holds the GIL the control thread needs.
The policy uses one state a cycle (50 Hz), so this reader keeps a KEEP_LAST(1) history in
DDS (C, no Python work per sample) and decodes only the newest sample when the control loop
asks for it — from its CDR bytes with `LowStateDecoder` (0.1 ms of CPU a cycle at 50 Hz)
rather than through cyclonedds' generic deserializer (0.6 ms). Same topic and type as the SDK's
subscriber, through the participant it is given (created after ChannelFactoryInitialize, so
the network interface configured there applies).
"""

from __future__ import annotations

import dataclasses

from surrogait_core.go2_wire import LOWSTATE_TOPIC, LowStateView
from surrogait_core.go2_wire_image import LowStateDecoder


@dataclasses.dataclass(frozen=True)
class LowStateSample:
    state: LowStateView
    source_time_s: float  # the publisher's wall clock (time.time() scale) when it wrote the sample


class LatestLowState:
    def __init__(self, participant):
        """`participant`: a cyclonedds DomainParticipant on the robot's domain."""
        # DataReader.take() would deserialize the sample generically; the C layer's take (the call
        # DataReader.take makes) hands over the CDR bytes and the sample info instead.
        from cyclonedds._clayer import ddspy_take
        from cyclonedds.core import InstanceState, SampleState, ViewState
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        self._topic = Topic(participant, LOWSTATE_TOPIC, LowState_)
        self._reader = DataReader(participant, self._topic, qos=Qos(Policy.History.KeepLast(1)))
        self._any_state = SampleState.Any | ViewState.Any | InstanceState.Any
        self._decoder = LowStateDecoder()
        self._take = ddspy_take

    def take(self) -> LowStateSample | None:
        """The newest sample not taken before, or None if none arrived since the last call."""
        samples = self._take(self._reader._ref, self._any_state, 1)
        if isinstance(samples, int):  # a DDS return code, as DataReader.take raises on
            raise RuntimeError(f"taking rt/lowstate failed (DDS return code {samples})")
        if not samples:
            return None
        data, info = samples[-1]
        if not info.valid_data:
            return None
        return LowStateSample(self._decoder.decode(data), info.source_timestamp * 1e-9)
