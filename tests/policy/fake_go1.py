"""A stand-in Go1 on its low-level UDP wire (no physics): answers every LowCmd it accepts with one LowState,
as the robot (and the safety monitor in front of it) does, the robot lying still in its folded pose.

In a test: `FakeGo1(port)` answers on demand. As a process, for node tests (records every LowCmd and prints
a JSON summary when it ends):

    python fake_go1.py <port> <seconds> <summary.json>   # until <seconds> have passed or SIGINT
"""

from __future__ import annotations

import json
import signal
import socket
import sys
import time

import numpy as np

from surrogait_core.wire import go1_wire
from surrogait_core.wire.go2_wire import Gamepad, LowStateView

FOLDED_POSE = np.tile([0.0, 1.2, -2.7], 4)  # a powered-on Go1 lying down, SDK order


def go1_state(tick_ms: int, joint_pos=FOLDED_POSE, joint_vel=None, tau_est=None) -> LowStateView:
    """A level, still Go1 (joint velocity and torque estimate 0 unless given)."""
    return LowStateView(
        tick_ms=tick_ms, quat_wxyz=np.array([1.0, 0.0, 0.0, 0.0]), gyro_b=np.zeros(3),
        accel_b=np.array([0.0, 0.0, 9.81]), joint_pos=np.asarray(joint_pos, dtype=np.float64),
        joint_vel=np.zeros(12) if joint_vel is None else np.asarray(joint_vel, dtype=np.float64),
        joint_tau_est=np.zeros(12) if tau_est is None else np.asarray(tau_est, dtype=np.float64),
        foot_force=np.zeros(4), gamepad=Gamepad(frozenset(), 0.0, 0.0, 0.0, 0.0))


class FakeGo1:
    """The robot's end of the link: a UDP socket on 127.0.0.1:`port`."""

    def __init__(self, port: int):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", port))

    def receive(self, timeout_s: float = 1.0) -> tuple[bytes, tuple] | None:
        """The next datagram and its sender, or None after `timeout_s`."""
        self.socket.settimeout(timeout_s)
        try:
            return self.socket.recvfrom(4096)
        except TimeoutError:
            return None

    def send(self, address: tuple, state: LowStateView | bytes) -> None:
        packet = state if isinstance(state, bytes) else go1_wire.encode_lowstate(state)
        self.socket.sendto(packet, address)

    def close(self) -> None:
        self.socket.close()


def main() -> None:
    port, seconds, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    robot = FakeGo1(port)
    commands, refused = [], 0
    stopped = []  # SIGINT: the test is done with the robot
    signal.signal(signal.SIGINT, lambda *_: stopped.append(True))
    start = time.monotonic()
    while (left := start + seconds - time.monotonic()) > 0 and not stopped:
        got = robot.receive(min(left, 0.1))
        if got is None:
            continue
        packet, sender = got
        now = time.monotonic()
        if go1_wire.lowcmd_drop_reason(packet) is not None:
            refused += 1  # the robot drops it without an answer
            continue
        m = go1_wire.decode_lowcmd(packet).motors
        commands.append({"t": now, "damping": m.is_damping, "stiff": m.is_stiff, "q": m.q.tolist(),
                         "kp": m.kp.tolist(), "kd": m.kd.tolist()})
        robot.send(sender, go1_state(int((now - start) * 1e3)))
    with open(out, "w") as f:
        json.dump({"commands": commands, "refused": refused}, f)


if __name__ == "__main__":
    main()
