"""Helper of test_wire_io.py, run as its own process (unitree_sdk2py's DDS set-up is once per process).

Writes LowCmds through the policy's `LowCmdWriter` to an SDK ChannelSubscriber, and LowStates from
an SDK ChannelPublisher to the policy's `LatestLowState`; prints what each side got as JSON.

    python wire_roundtrip.py <dds_domain>
"""

import json
import sys
import time

import numpy as np
from cyclonedds.domain import DomainParticipant
from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

from surrogait_core.policy.policy_controller import MotorTargets
from surrogait_core.wire import go2_wire
from surrogait_core.wire.latest_lowstate import LatestLowState
from surrogait_policy.lowcmd_writer import LowCmdWriter


def main(domain: int) -> None:
    ChannelFactoryInitialize(domain, "lo")
    participant = DomainParticipant(domain)
    writer, reader = LowCmdWriter(participant), LatestLowState(participant)
    commands = []
    sub = ChannelSubscriber(go2_wire.LOWCMD_TOPIC, LowCmd_)
    sub.Init(commands.append, 0)
    pub = ChannelPublisher(go2_wire.LOWSTATE_TOPIC, LowState_)
    pub.Init()

    q, dq, kp, kd, tau = (np.arange(12) * s for s in (0.1, -0.05, 2.0, 0.25, 0.5))
    deadline = time.monotonic() + 10.0
    while not commands and time.monotonic() < deadline:  # until the reader has matched the writer
        writer.write(MotorTargets(q, dq, kp, kd, tau))
        time.sleep(0.05)

    states = []
    for tick in (1000, 1002):  # two samples before one take: only the newer one is handed over
        msg = unitree_go_msg_dds__LowState_()
        msg.tick, msg.imu_state.quaternion, msg.foot_force = tick, [1.0, 0.0, 0.0, 0.0], [10, 20, 30, tick]
        for i in range(12):
            msg.motor_state[i].q = 0.01 * i
        pub.Write(msg)
        states.append(msg)
    taken = None
    while taken is None and time.monotonic() < deadline:
        time.sleep(0.05)
        taken = reader.take()
    again = reader.take()

    cmd = commands[-1] if commands else None
    print(json.dumps({
        "command": None if cmd is None else {
            "crc_ok": go2_wire.crc_ok(cmd), "q": list(go2_wire.motor_commands(cmd).q),
            "kp": list(go2_wire.motor_commands(cmd).kp), "mode": [int(m) for m in go2_wire.motor_commands(cmd).mode],
        },
        "state": None if taken is None else {
            "tick_ms": taken.state.tick_ms, "joint_pos": list(taken.state.joint_pos),
            "foot_force": list(taken.state.foot_force), "age_s": time.time() - taken.source_time_s,
        },
        "taken_again": again is not None,
    }))


if __name__ == "__main__":
    main(int(sys.argv[1]))
