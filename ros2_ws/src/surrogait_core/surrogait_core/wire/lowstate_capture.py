"""A second of rt/lowstate, every sample with the moment it arrived: what the pre-flight judges.

The control loop takes the newest sample once a control period and cannot tell when each arrived. The
pre-flight wants the stream's own rate, jitter, delays and CRC verdicts, so it has its own reader (made
once, with the link: a new reader would first have to be matched with the robot's writer) and a WaitSet
that wakes on every sample for the duration of a capture only; between captures DDS overwrites its
history (KEEP_LAST, in C) and no Python runs.
"""

from __future__ import annotations

import time

from surrogait_core.inputs.preflight import PreflightCapture, PreflightRecorder
from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_lowstate_layout import LowStateCrc
from surrogait_core.wire.go2_wire import LOWSTATE_TOPIC
from surrogait_core.wire.go2_wire_image import LowStateDecoder

HISTORY_DEPTH = 64


class LowStateCapture:
    def __init__(self, participant):
        """`participant`: a cyclonedds DomainParticipant on the robot's domain."""
        from cyclonedds.core import ReadCondition, WaitSet
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        self._raw = RawReader(participant, LOWSTATE_TOPIC, LowState_, HISTORY_DEPTH)
        self._waitset = WaitSet(participant)
        self._condition = ReadCondition(self._raw.reader, self._raw.any_state)
        self._waitset.attach(self._condition)
        self._decoder = LowStateDecoder()
        self._crc = LowStateCrc()
        self.latest_data: bytes | None = None  # the newest sample of the latest capture

    def capture(self, duration_s: float) -> PreflightCapture:
        """Every sample that arrives within `duration_s` from now (older ones are dropped first)."""
        self._raw.take()
        recorder = PreflightRecorder(duration_s)
        start = time.monotonic()
        end = start + duration_s
        while (now := time.monotonic()) < end:
            if self._waitset.wait(int((end - now) * 1e9)) <= 0:
                continue
            arrival_s, arrival_wall_s = time.monotonic(), time.time()
            for data, sent_s in self._raw.take():
                recorder.add(self._decoder.decode(data), arrival_s, sent_s, arrival_wall_s - sent_s,
                             self._crc.check(data))
                self.latest_data = data
        if self.latest_data is not None and recorder.crc_checked:
            recorder.health = self._crc.health(self.latest_data)
        return recorder.capture(time.monotonic() - start)
