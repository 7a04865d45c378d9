"""The simulated motor drivers: PD law, sentinels, stop mode, torque limits, and LowCmd validation."""

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire import POS_STOP_F, VEL_STOP_F, MotorCommands
from surrogait_rehearsal.sim.motor_driver import LowCmdGate, drop_reason, pd_torques

SPEC = load_robot_spec("go2")
LIMIT = SPEC.joint_torque_limit
N = 12


def servo(q, dq=0.0, kp=40.0, kd=1.0, tau=0.0, mode=go2_wire.MODE_SERVO) -> MotorCommands:
    full = lambda v: np.broadcast_to(np.asarray(v, dtype=np.float64), (N,)).copy()  # noqa: E731
    return MotorCommands(mode=np.full(N, mode), q=full(q), dq=full(dq), kp=full(kp), kd=full(kd), tau=full(tau))


def test_no_command_means_passive_motors():
    q, dq = np.linspace(-1, 1, N), np.linspace(2, -2, N)
    assert np.array_equal(pd_torques(None, q, dq, LIMIT), np.zeros(N))


def test_pd_law_matches_the_driver_formula():
    rng = np.random.default_rng(0)
    q, dq = rng.normal(0, 0.1, N), rng.normal(0, 0.5, N)
    cmd = servo(q=rng.normal(0, 0.1, N), dq=rng.normal(0, 0.2, N), kp=30.0, kd=0.8, tau=rng.normal(0, 0.5, N))
    expected = cmd.kp * (cmd.q - q) + cmd.kd * (cmd.dq - dq) + cmd.tau
    assert np.all(np.abs(expected) < LIMIT)  # within limits: no clipping in this case
    np.testing.assert_allclose(pd_torques(cmd, q, dq, LIMIT), expected, rtol=1e-12)


def test_torque_is_clipped_to_each_motors_limit():
    cmd = servo(q=10.0, kp=100.0)  # asks for 1000 N·m
    tau = pd_torques(cmd, np.zeros(N), np.zeros(N), LIMIT)
    np.testing.assert_array_equal(tau, LIMIT)
    assert tau[2] > tau[0]  # calves are stronger than hips (45.43 vs 23.7 N·m)
    np.testing.assert_array_equal(pd_torques(servo(q=-10.0, kp=100.0), np.zeros(N), np.zeros(N), LIMIT), -LIMIT)


def test_stop_mode_gives_no_torque_even_with_gains():
    cmd = servo(q=1.0, kp=40.0, kd=1.0, tau=3.0, mode=go2_wire.MODE_STOP)
    assert np.array_equal(pd_torques(cmd, np.zeros(N), np.ones(N), LIMIT), np.zeros(N))


def test_stop_mode_is_per_motor():
    cmd = servo(q=0.5, kp=10.0, kd=0.0)
    cmd.mode[3] = go2_wire.MODE_STOP
    tau = pd_torques(cmd, np.zeros(N), np.zeros(N), LIMIT)
    assert tau[3] == 0.0 and np.all(np.delete(tau, 3) == pytest.approx(5.0))


@pytest.mark.parametrize("as_float32", [False, True])
def test_position_sentinel_drops_only_the_kp_term(as_float32):
    q_target = np.float32(POS_STOP_F) if as_float32 else POS_STOP_F  # DDS carries float32
    cmd = servo(q=float(q_target), dq=0.0, kp=40.0, kd=2.0, tau=0.5)
    dq = np.full(N, 0.3)
    tau = pd_torques(cmd, np.full(N, 0.2), dq, LIMIT)
    np.testing.assert_allclose(tau, 2.0 * (0.0 - 0.3) + 0.5)  # damping and feed-forward remain


def test_velocity_sentinel_drops_only_the_kd_term():
    cmd = servo(q=0.1, dq=VEL_STOP_F, kp=40.0, kd=2.0)
    tau = pd_torques(cmd, np.zeros(N), np.full(N, 5.0), LIMIT)
    np.testing.assert_allclose(tau, 40.0 * 0.1)


def test_damping_command_resists_motion_only():
    cmd = go2_wire.motor_commands(go2_wire.fill_damping(go2_wire.new_lowcmd(), 2.0))
    tau = pd_torques(cmd, np.full(N, 0.7), np.full(N, -1.5), LIMIT)
    np.testing.assert_allclose(tau, 3.0)


def _valid_cmd():
    z = np.zeros(N)
    return go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), SPEC.default_joint_pos, z, np.full(N, 40.0),
                                        np.full(N, 1.0), z)


def test_valid_lowcmd_is_accepted():
    assert drop_reason(_valid_cmd()) is None


def test_bad_crc_head_level_and_nan_are_refused():
    cmd = _valid_cmd()
    cmd.crc ^= 1
    assert drop_reason(cmd) == "crc"

    cmd = go2_wire.new_lowcmd()
    cmd.head = [0xFE, 0x00]
    cmd.crc = go2_wire.lowcmd_crc(cmd)  # a correct CRC over a wrong head
    assert drop_reason(cmd) == "head"

    cmd = go2_wire.new_lowcmd()
    cmd.level_flag = 0xEE  # high-level flag
    cmd.crc = go2_wire.lowcmd_crc(cmd)
    assert drop_reason(cmd) == "level_flag"

    q = SPEC.default_joint_pos.copy()
    q[4] = np.nan
    z = np.zeros(N)
    cmd = go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), q, z, np.full(N, 40.0), np.full(N, 1.0), z)
    assert drop_reason(cmd) == "nonfinite"


def test_gate_keeps_the_last_valid_command_and_counts_drops():
    gate = LowCmdGate()
    assert gate.latest() is None
    good = _valid_cmd()
    assert gate.receive(good)
    bad = _valid_cmd()
    bad.motor_cmd[0].q = 1.5  # changed after sealing: CRC no longer matches
    assert not gate.receive(bad)
    assert not gate.receive(bad)
    latest = gate.latest()
    np.testing.assert_allclose(latest.q, SPEC.default_joint_pos, atol=1e-6)  # the bad one never took over
    stats = gate.snapshot()
    assert stats.accepted == 1 and stats.dropped["crc"] == 2 and stats.dropped_total == 2
    assert gate.counts() == (1, 2)


def test_gate_numbers_the_valid_commands_so_the_physics_can_tell_a_new_one():
    gate = LowCmdGate()
    assert gate.latest_numbered() == (0, None)
    good = _valid_cmd()
    gate.receive(good)
    seq, cmd = gate.latest_numbered()
    assert seq == 1 and cmd is gate.latest()
    bad = _valid_cmd()
    bad.crc ^= 1
    gate.receive(bad)
    assert gate.latest_numbered()[0] == 1  # a dropped message is no new command
    gate.receive(good)  # the same values again: still a new command
    assert gate.latest_numbered()[0] == 2


def test_a_stream_repeating_the_same_bytes_keeps_each_copys_verdict_and_numbers_every_arrival():
    gate = LowCmdGate()
    good = _valid_cmd().serialize()
    assert gate.receive_sample(good) and gate.receive_sample(good)
    seq, cmd = gate.latest_numbered()
    assert seq == 2, "a re-sent command is a new arrival (on_command recomputes its torque)"
    np.testing.assert_allclose(cmd.q, go2_wire.motor_commands(_valid_cmd()).q, atol=1e-6)
    bad = _valid_cmd()
    bad.motor_cmd[0].q = 1.5  # changed after sealing: CRC no longer matches
    bad_bytes = bad.serialize()
    assert not gate.receive_sample(bad_bytes) and not gate.receive_sample(bad_bytes)
    assert gate.snapshot().dropped["crc"] == 2 and gate.latest_numbered()[0] == 2
