"""Play synthetic proprioception as the robot's rt/lowstate over unitree_sdk2 DDS, in real time,
as its own process (the SDK's channel factory is one DDS domain per process).

    python lowstate_player.py --domain 33 --duration 3 [--bad-from 1.0 --bad-to 1.2] [--realtime-priority 30]

The robot stands still at 0.28 m (SyntheticRobot); samples in [bad-from, bad-to) carry NaN
accelerometer readings. Prints how many samples it wrote.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests/ folder, for estimator.*

from estimator.synthetic_robot import SyntheticRobot  # noqa: E402
from surrogait_core.robot_spec import load_robot_spec  # noqa: E402
from surrogait_core.runtime.realtime import enter_realtime  # noqa: E402
from surrogait_core.wire import go2_wire  # noqa: E402

DT = 0.002


def fill_lowstate(msg, s, tick_ms: int):
    msg.tick = tick_ms & 0xFFFFFFFF
    msg.imu_state.quaternion = [float(v) for v in s.quat_wxyz]
    msg.imu_state.gyroscope = [float(v) for v in s.gyro_b]
    msg.imu_state.accelerometer = [float(v) for v in s.accel_b]
    for i, m in enumerate(msg.motor_state[: go2_wire.NUM_MOTORS]):
        m.q, m.dq = float(s.joint_pos[i]), float(s.joint_vel[i])
    msg.foot_force = [int(round(max(0.0, f))) for f in s.foot_force]
    return msg


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--bad-from", type=float, default=-1.0)
    ap.add_argument("--bad-to", type=float, default=-1.0)
    ap.add_argument("--realtime-priority", type=int, default=0,
                    help="SCHED_FIFO priority, as the robot's firmware publishes (0: normal scheduling)")
    args = ap.parse_args()
    enter_realtime(args.realtime_priority)  # where permitted; a late stream shows as gaps to the estimator

    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
    from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

    robot = SyntheticRobot(load_robot_spec("go2"), height_m=0.28, seed=11)
    still = robot.sample(0.0)  # standing still: one set of joint angles, fresh sensor noise per sample
    rng, n = robot.rng, robot.noise
    ChannelFactoryInitialize(args.domain, "lo")
    pub = ChannelPublisher(go2_wire.LOWSTATE_TOPIC, LowState_)
    pub.Init()
    msg = unitree_go_msg_dds__LowState_()
    # Wait (up to 20 s) until the estimator's reader has matched, so the stream starts when someone listens.
    if not pub.Write(fill_lowstate(msg, still, 998), 20.0):  # one sample ahead of the stream's first tick
        print("lowstate_player: no subscriber matched rt/lowstate within 20 s", file=sys.stderr)
        return 1
    time.sleep(0.3)
    t0, written, k = time.monotonic(), 1, 0
    while (t := k * DT) < args.duration:
        s = dataclasses.replace(
            still, time_s=t,
            accel_b=np.array([0.0, 0.0, 9.81]) + rng.normal(0.0, n.accel, 3),
            gyro_b=rng.normal(0.0, n.gyro, 3),
            joint_pos=still.joint_pos + rng.normal(0.0, n.joint_pos, 12),
            joint_vel=rng.normal(0.0, n.joint_vel, 12),
        )
        if args.bad_from <= t < args.bad_to:
            s = dataclasses.replace(s, accel_b=np.full(3, np.nan))
        wait = t0 + t - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        pub.Write(fill_lowstate(msg, s, 1000 + int(round(t * 1000))))
        written += 1
        k += 1
    print(f"written {written}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
