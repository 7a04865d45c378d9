"""A stand-in for the policy node when it is not installed (development only).

    python standin_policy.py --domain 41

Waits for rt/lowstate, stands up over 1.5 s from the pose it finds (nominal PD) and holds the
default pose at 50 Hz; publishes policy/state (PASSIVE, STAND_UP, READY, DAMP, transient local)
and damps on a DAMP from safety/state, as the policy node does. No ONNX, no walking.
"""

from __future__ import annotations

import argparse
import json
import threading
import time

import numpy as np

from surrogait_core import interfaces
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    args = ap.parse_args()
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

    spec = load_robot_spec("go2")
    ChannelFactoryInitialize(args.domain, "lo")
    latest = {}
    lock = threading.Lock()

    def on_state(msg):
        with lock:
            latest["q"] = np.array([m.q for m in msg.motor_state[:12]])

    ChannelSubscriber(go2_wire.LOWSTATE_TOPIC, LowState_).Init(on_state, 0)
    pub = ChannelPublisher(go2_wire.LOWCMD_TOPIC, LowCmd_)
    pub.Init()
    rclpy.init()
    node = rclpy.create_node("standin_policy")
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    state_pub = node.create_publisher(String, interfaces.POLICY_STATE, qos)
    damp = threading.Event()
    node.create_subscription(String, interfaces.SAFETY_STATE,
                             lambda m: damp.set() if json.loads(m.data)["state"] == "DAMP" else None, qos)
    threading.Thread(target=rclpy.spin, args=(node,), daemon=True).start()

    def set_state(s, current=[None]):  # noqa: B006 - remembers the last published state
        if s != current[0]:
            current[0] = s
            state_pub.publish(String(data=s))

    n = 12
    kp, kd, zeros = np.full(n, spec.nominal_kp), np.full(n, spec.nominal_kd), np.zeros(n)
    set_state("PASSIVE")
    t_next, q0, t0 = time.monotonic(), None, None
    while True:
        with lock:
            q = latest.get("q")
        cmd = go2_wire.new_lowcmd()
        if damp.is_set() or q is None:
            set_state("DAMP" if damp.is_set() else "PASSIVE")
            go2_wire.fill_damping(cmd, 1.0)
        else:
            if q0 is None:
                q0, t0 = q.copy(), time.monotonic()
            a = min(1.0, (time.monotonic() - t0) / 1.5)
            set_state("READY" if a >= 1.0 else "STAND_UP")
            go2_wire.fill_motor_commands(cmd, (1 - a) * q0 + a * spec.default_joint_pos, zeros, kp, kd, zeros)
        pub.Write(cmd)
        t_next += 0.02
        time.sleep(max(0.0, t_next - time.monotonic()))


if __name__ == "__main__":
    main()
