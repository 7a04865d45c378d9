"""The fault suite's Go1 observer times what reaches the robot by the kernel's clock, not by its own thread's.

The suite judges reactions in milliseconds (a rogue command replaced within 10 ms), and its observer thread
shares the harness's GIL with the operator's ROS executor: measured in the suite, the thread read the clock
up to 48 ms after a copy had arrived. A reaction timed that way looks as slow as the observer was.
"""

import socket
import sys
import time

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go1_wire
from surrogait_rehearsal.harness.fault_suite import TapRecorder

SPEC = load_robot_spec("go1")


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def tap_port():
    return free_udp_port()


@pytest.fixture
def tap(tap_port):
    recorder = TapRecorder(tap_port)
    yield recorder
    recorder.close()


def hold_the_gil(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_copy_is_timed_when_it_arrived_even_when_the_observer_thread_runs_late(tap, tap_port):
    n = SPEC.num_joints
    lowcmd = go1_wire.encode_lowcmd(SPEC.default_joint_pos, np.zeros(n), np.full(n, SPEC.nominal_kp),
                                    np.full(n, SPEC.nominal_kd), np.zeros(n))
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)  # the observer thread cannot take the GIL while this one spins
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as robot_tap:
            sent_at = time.monotonic()
            robot_tap.sendto(lowcmd, ("127.0.0.1", tap_port))
            hold_the_gil(0.08)
    finally:
        sys.setswitchinterval(old_interval)
    deadline = time.monotonic() + 2.0
    while not tap.snapshot()[0] and time.monotonic() < deadline:
        time.sleep(0.01)
    cmds, _ = tap.snapshot()
    assert len(cmds) == 1, "the copy reached the observer"
    arrived_at, command = cmds[0]
    np.testing.assert_allclose(command.q, SPEC.default_joint_pos, atol=1e-5)
    assert tap.stamp_lag_max_s >= 0.05, "the observer's thread saw the copy only after this one let go"
    # (the kernel clock is CLOCK_REALTIME, converted: allow it a millisecond either way)
    late_ms = (arrived_at - sent_at) * 1e3
    assert -1.0 <= late_ms < 10.0, f"timed {late_ms:.1f} ms after it was sent"


def test_clearing_the_observer_forgets_its_lag(tap):
    tap.stamp_lag_max_s = 0.02
    tap.clear()
    assert tap.stamp_lag_max_s == 0.0
