"""A scripted robot-side driver for the estimator's rehearsal runs, as its own process (own DDS domain).

    python robot_driver.py --domain 34 --duration 8 [--trot-vx 0.3 --trot-after 3]

Stands the simulated Go2 up over the SDK (joint PD from the first joint positions it reads to
the default pose over 1.5 s, nominal gains, LowCmd at 200 Hz), holds; with --trot-vx, after
--trot-after seconds runs an open-loop trot: stance feet slide backwards at -vx in the base
frame, swing feet arc forward, joint targets by inverse kinematics of the robot's MJCF. This
stands in for a walking policy when none is available; it is not a controller (no feedback
on the base), so the robot walks roughly, not exactly, at vx.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from surrogait_core.estimator.leg_kinematics import LegKinematics
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire

TROT_OFFSETS = np.array([0.0, 0.5, 0.5, 0.0])  # FR, FL, RR, RL: diagonal pairs


def trot_feet(nominal_b: np.ndarray, vx: float, t: float, period_s: float, swing_height_m: float) -> np.ndarray:
    duty = 0.5
    step = vx * period_s * duty  # distance a stance foot slides backwards per stance
    feet = nominal_b.copy()
    for leg in range(4):
        phase = (t / period_s + TROT_OFFSETS[leg]) % 1.0
        if phase < duty:
            s = phase / duty
            feet[leg, 0] += step * (0.5 - s)
        else:
            s = (phase - duty) / (1.0 - duty)
            feet[leg, 0] += step * (s - 0.5)
            feet[leg, 2] += swing_height_m * np.sin(np.pi * s)
    return feet


class LatestJointPositions:
    """Joint positions (SDK order) of the newest rt/lowstate sample, read on demand."""

    def __init__(self, participant) -> None:
        from cyclonedds.qos import Policy, Qos
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        from surrogait_core.wire.go2_wire_image import LowStateDecoder

        self._reader = DataReader(participant, Topic(participant, go2_wire.LOWSTATE_TOPIC, LowState_),
                                  Qos(Policy.History.KeepLast(1)))
        self._decoder = LowStateDecoder()
        self._q: np.ndarray | None = None

    def joint_pos(self) -> np.ndarray | None:
        """The newest joint positions received so far (None before the first sample)."""
        from cyclonedds._clayer import ddspy_take
        from cyclonedds.core import InstanceState, SampleState, ViewState

        samples = ddspy_take(self._reader._ref, SampleState.Any | ViewState.Any | InstanceState.Any, 1)
        if isinstance(samples, list) and samples and samples[-1][1].valid_data:
            self._q = self._decoder.decode(samples[-1][0]).joint_pos.copy()
        return self._q


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--duration", type=float, default=8.0, help="s, from the first rt/lowstate received")
    ap.add_argument("--trot-vx", type=float, default=None)
    ap.add_argument("--trot-after", type=float, default=3.0)
    ap.add_argument("--period", type=float, default=0.4)
    ap.add_argument("--swing-height", type=float, default=0.06)
    ap.add_argument("--done-file", type=Path, default=None, help="touched once standing is reached")
    args = ap.parse_args()

    from cyclonedds.domain import DomainParticipant
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

    ChannelFactoryInitialize(args.domain, "lo")
    spec = load_robot_spec("go2")
    kin = LegKinematics(spec)
    # Polled, not the SDK's ChannelSubscriber: its listener races the reader's creation and prints
    # "[Reader] take sample error" (see surrogait_estimator.lowstate_stream).
    reader = LatestJointPositions(DomainParticipant(args.domain))
    pub = ChannelPublisher(go2_wire.LOWCMD_TOPIC, LowCmd_)
    pub.Init()
    kp, kd, zeros = np.full(12, spec.nominal_kp), np.full(12, spec.nominal_kd), np.zeros(12)
    nominal_b = kin.foot_positions(spec.default_joint_pos)
    q_ik = spec.default_joint_pos.copy()

    t_start = time.monotonic()
    q_start, t_first, k, now = None, None, 0, t_start
    try:
        while t_first is None or (now - t_first) < args.duration:
            now = time.monotonic()
            if t_first is None and now - t_start > 30.0:
                print("robot_driver: no rt/lowstate within 30 s", file=sys.stderr)
                return 1
            q_now = reader.joint_pos()
            if q_now is not None:
                if q_start is None:
                    q_start, t_first = q_now.copy(), now
                t = now - t_first
                alpha = min(1.0, t / 1.5)
                target = (1.0 - alpha) * q_start + alpha * spec.default_joint_pos
                if args.trot_vx is not None and t > args.trot_after:
                    feet = trot_feet(nominal_b, args.trot_vx, t - args.trot_after, args.period, args.swing_height)
                    q_ik = kin.joints_for_feet(feet, q_ik, iterations=3)
                    target = q_ik
                if alpha >= 1.0 and args.done_file is not None and not args.done_file.exists():
                    args.done_file.touch()
                pub.Write(go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), target, zeros, kp, kd, zeros))
            k += 1
            time.sleep(max(0.0, t_start + k * 0.005 - time.monotonic()))
    finally:
        # Leave the motors damped, never stiff and silent.
        for _ in range(5):
            pub.Write(go2_wire.fill_damping(go2_wire.new_lowcmd(), spec.nominal_kd))
            time.sleep(0.005)
    return 0


if __name__ == "__main__":
    sys.exit(main())
