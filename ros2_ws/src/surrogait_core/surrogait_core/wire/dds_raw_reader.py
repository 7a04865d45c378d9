"""A DDS reader that hands over samples as raw CDR bytes with the writer's timestamp.

cyclonedds' `DataReader.take()` deserialises every sample generically in Python (0.3–0.6 ms for
a Go2 message); the C layer's take (the call `DataReader.take` makes) returns the CDR bytes and
the sample info instead, so a node decodes only what it uses, with the byte-image decoders of
`go2_wire_image`, or skips a sample that repeats the previous one. KeepLast history in DDS (C, no
Python per sample) holds what arrived between takes. Used for rt/lowstate and rt/lowcmd by the
policy node, the estimator, the safety monitor and the rehearsal simulator.
"""

from __future__ import annotations


class RawReader:
    def __init__(self, participant, topic_name: str, msg_type, depth: int, ignore_local: bool = False, topic=None):
        """`participant`: a cyclonedds DomainParticipant (created after ChannelFactoryInitialize, so the
        network interface configured there applies); `ignore_local`: skip this participant's own writers;
        `topic`: the participant's Topic for `topic_name`, if it already has one."""
        from cyclonedds._clayer import ddspy_take
        from cyclonedds.core import InstanceState, SampleState, ViewState
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        self.topic = topic if topic is not None else Topic(participant, topic_name, msg_type)
        policies = [Policy.History.KeepLast(depth)] + ([Policy.IgnoreLocal.Participant] if ignore_local else [])
        self.reader = DataReader(participant, self.topic, Qos(*policies))
        self.any_state = SampleState.Any | ViewState.Any | InstanceState.Any
        self._topic_name, self.depth, self._take = topic_name, depth, ddspy_take

    def take(self) -> list[tuple[bytes, float]]:
        """(CDR sample, the writer's wall-clock time s) of every valid sample held, oldest first."""
        samples = self._take(self.reader._ref, self.any_state, self.depth)
        if isinstance(samples, int):  # a DDS return code, as DataReader.take raises on
            raise RuntimeError(f"taking {self._topic_name} failed (DDS return code {samples})")
        return [(data, info.source_timestamp * 1e-9) for data, info in samples if info.valid_data]
