"""A stand-in Go2 on the wire for node tests (no physics): publishes rt/lowstate at 500 Hz with the
robot lying still in its folded pose (a charged battery and cool motors, as a Go2 reports them; no CRC:
sealing 500 messages a second in Python would load this process enough to blur the LowCmd timing it records,
so the node under test is told `allow_lowstate_without_crc`), records every rt/lowcmd, and prints a JSON
summary when it ends.

    python fake_robot.py <dds_domain> <seconds> <summary.json>   # until <seconds> have passed or SIGINT

Each LowCmd is recorded with two times: `sent`, the writer's source timestamp (the policy node's wall
clock when it wrote the sample; one host, so it is the stream's own timing) and `t`, when this process
took it. The stream's rate is judged on `sent`: this is a plain Python process, and on a loaded machine
it takes samples in batches (its 2 ms loop descheduled for several periods), so arrival times measure
its own scheduling, not the node's. Samples are taken raw from a KeepLast DDS history each cycle and
only a message whose bytes changed is decoded (cyclonedds' generic deserializer costs 0.3-0.6 ms a
sample: at 500 Hz a callback per sample kept this process busy enough to fall behind).
"""

import json
import os
import signal
import sys
import time

import numpy as np
from cyclonedds.domain import DomainParticipant
from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

from surrogait_core.wire.dds_raw_reader import RawReader
from surrogait_core.wire.go2_wire import LOWCMD_TOPIC, LOWSTATE_TOPIC, crc_ok, motor_commands

HISTORY_DEPTH = 256  # 0.5 s of a 500 Hz stream between two takes


def main() -> None:
    domain, seconds, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    pose = np.tile([0.0, 1.36, -2.65], 4)  # no physics: the joints stay where a powered-on Go2 lies
    ChannelFactoryInitialize(domain, "lo")
    lowcmd = RawReader(DomainParticipant(domain), LOWCMD_TOPIC, LowCmd_, HISTORY_DEPTH)
    commands, last_bytes, verdict = [], None, None

    def take_lowcmds() -> None:
        nonlocal last_bytes, verdict
        now = time.monotonic()
        for data, sent_s in lowcmd.take():
            if data != last_bytes:
                cmd = LowCmd_.deserialize(data)
                m = motor_commands(cmd)
                verdict = {"crc_ok": crc_ok(cmd), "damping": m.is_damping, "stiff": m.is_stiff,
                           "q": m.q.tolist(), "kp": m.kp.tolist()}
                last_bytes = data
            commands.append({"sent": sent_s, "t": now, **verdict})

    pub = ChannelPublisher(LOWSTATE_TOPIC, LowState_)
    pub.Init()
    msg = unitree_go_msg_dds__LowState_()
    msg.imu_state.quaternion = [1.0, 0.0, 0.0, 0.0]
    msg.imu_state.accelerometer = [0.0, 0.0, 9.81]
    msg.bms_state.soc, msg.power_v = 90, 28.5
    for i in range(12):
        msg.motor_state[i].q = float(pose[i])
        msg.motor_state[i].temperature = 30
    stopped = []  # SIGINT: the test is done with the robot
    signal.signal(signal.SIGINT, lambda *_: stopped.append(True))
    start = time.monotonic()
    k = 0
    while time.monotonic() - start < seconds and not stopped:
        k += 1
        msg.tick = int(k * 2)
        pub.Write(msg)
        take_lowcmds()
        time.sleep(max(0.0, start + k * 0.002 - time.monotonic()))
    take_lowcmds()
    with open(out, "w") as f:
        json.dump({"commands": commands, "lowstates": k}, f)
    sys.stdout.flush()
    os._exit(0)  # skip the DDS library's slow teardown


if __name__ == "__main__":
    main()
