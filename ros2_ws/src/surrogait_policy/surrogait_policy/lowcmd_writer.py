"""rt/lowcmd, written once a control cycle from a byte image instead of a generic serialization.

`fill_motor_commands` + `ChannelPublisher.Write(LowCmd_)` cost 0.7 ms of CPU a cycle at 50 Hz
(cold caches; cyclonedds' Python serializer and the SDK's Python CRC packing), the largest share
of the control loop's CPU. `LowCmdImage` patches the motor fields into a CDR image and seals it
with a zlib CRC (bit-identical), and this writer hands the bytes to DDS through the C call
DataWriter.write makes after serializing: 0.1 ms a cycle. Same topic, type and default QoS as
the SDK's publisher, XCDR1 as its writer uses, through the participant it is given (created
after ChannelFactoryInitialize, so the network interface configured there applies).
"""

from __future__ import annotations

import numpy as np

from surrogait_core.go2_wire import LOWCMD_TOPIC
from surrogait_core.go2_wire_image import LowCmdImage


class LowCmdWriter:
    def __init__(self, participant):
        """`participant`: a cyclonedds DomainParticipant on the robot's domain."""
        from cyclonedds._clayer import ddspy_write
        from cyclonedds.pub import DataWriter
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

        self._topic = Topic(participant, LOWCMD_TOPIC, LowCmd_)
        # XCDR1 stated, not assumed: the image must be in the representation the writer announces.
        qos = Qos(Policy.DataRepresentation(use_cdrv0_representation=True))
        self._writer = DataWriter(participant, self._topic, qos)
        self._image = LowCmdImage(use_version_2=False)
        self._write = ddspy_write

    def write(self, q: np.ndarray, dq: np.ndarray, kp: np.ndarray, kd: np.ndarray, tau: np.ndarray) -> None:
        """Servo commands for the 12 motors (SDK order), CRC sealed, on rt/lowcmd."""
        ret = self._write(self._writer._ref, self._image.encode(q, dq, kp, kd, tau))
        if ret < 0:
            raise RuntimeError(f"writing rt/lowcmd failed (DDS return code {ret})")
