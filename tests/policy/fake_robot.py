"""A stand-in Go2 on the wire for node tests (no physics): publishes rt/lowstate at 500 Hz with the
robot lying still in its folded pose (a charged battery and cool motors, as a Go2 reports them; no CRC:
sealing 500 messages a second in Python would load this process enough to blur the LowCmd timing it records,
so the node under test is told `allow_lowstate_without_crc`), records every rt/lowcmd, and prints a JSON
summary when it ends.

    python fake_robot.py <dds_domain> <seconds> <summary.json>
"""

import json
import os
import sys
import threading
import time

import numpy as np
from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

from surrogait_core.wire.go2_wire import LOWCMD_TOPIC, LOWSTATE_TOPIC, crc_ok, motor_commands


def main() -> None:
    domain, seconds, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    pose = np.tile([0.0, 1.36, -2.65], 4)  # no physics: the joints stay where a powered-on Go2 lies
    ChannelFactoryInitialize(domain, "lo")
    lock, commands = threading.Lock(), []

    def on_lowcmd(cmd) -> None:
        m = motor_commands(cmd)
        with lock:
            commands.append({"t": time.monotonic(), "crc_ok": crc_ok(cmd), "damping": m.is_damping,
                             "stiff": m.is_stiff, "q": m.q.tolist(), "kp": m.kp.tolist()})

    sub = ChannelSubscriber(LOWCMD_TOPIC, LowCmd_)
    sub.Init(on_lowcmd, 0)
    pub = ChannelPublisher(LOWSTATE_TOPIC, LowState_)
    pub.Init()
    msg = unitree_go_msg_dds__LowState_()
    msg.imu_state.quaternion = [1.0, 0.0, 0.0, 0.0]
    msg.imu_state.accelerometer = [0.0, 0.0, 9.81]
    msg.bms_state.soc, msg.power_v = 90, 28.5
    for i in range(12):
        msg.motor_state[i].q = float(pose[i])
        msg.motor_state[i].temperature = 30
    start = time.monotonic()
    k = 0
    while time.monotonic() - start < seconds:
        k += 1
        msg.tick = int(k * 2)
        pub.Write(msg)
        time.sleep(max(0.0, start + k * 0.002 - time.monotonic()))
    with lock:
        with open(out, "w") as f:
            json.dump({"commands": commands, "lowstates": k}, f)
    sys.stdout.flush()
    os._exit(0)  # skip the DDS library's slow teardown


if __name__ == "__main__":
    main()
