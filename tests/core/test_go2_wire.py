"""The Go2 wire codec: CRC, damping, motor order and the gamepad bytes."""

import numpy as np

from surrogait_core.wire import go2_wire


def test_commands_are_sealed_with_a_crc_that_detects_tampering():
    cmd = go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), *(np.arange(12) * s for s in (0.1, 0, 1, 0.1, 0)))
    assert cmd.head == [0xFE, 0xEF] and cmd.level_flag == 0xFF
    assert go2_wire.crc_ok(cmd)
    cmd.motor_cmd[4].q += 0.01
    assert not go2_wire.crc_ok(cmd)


def test_damping_has_no_stiffness_and_positive_damping():
    cmd = go2_wire.fill_damping(go2_wire.new_lowcmd(), kd=3.0)
    motors = go2_wire.motor_commands(cmd)
    assert motors.is_damping and not motors.is_stiff
    assert np.all(motors.mode == go2_wire.MODE_SERVO)
    assert go2_wire.crc_ok(cmd)


def test_unused_motor_slots_stay_stopped():
    cmd = go2_wire.fill_damping(go2_wire.new_lowcmd(), kd=1.0)
    assert all(m.mode == go2_wire.MODE_STOP and m.q == go2_wire.POS_STOP_F for m in cmd.motor_cmd[12:])


def test_gamepad_round_trips_through_wireless_remote_bytes():
    pad = go2_wire.Gamepad(go2_wire.ESTOP_KEYS, lx=0.5, ly=-0.25, rx=0.125, ry=1.0)
    raw = go2_wire.encode_gamepad(pad)
    assert len(raw) == 40
    assert go2_wire.decode_gamepad(raw) == pad
    assert go2_wire.decode_gamepad([0] * 40).keys == frozenset()


def test_lowstate_is_decoded_in_sdk_order():
    from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_

    msg = unitree_go_msg_dds__LowState_()
    for i in range(12):
        msg.motor_state[i].q = i * 0.1
    msg.imu_state.quaternion = [1.0, 0.0, 0.0, 0.0]
    msg.foot_force = [10, 20, 30, 40]
    msg.tick = 1234
    view = go2_wire.decode_lowstate(msg)
    np.testing.assert_allclose(view.joint_pos, np.arange(12) * 0.1)
    assert view.tick_ms == 1234 and list(view.foot_force) == [10, 20, 30, 40]
