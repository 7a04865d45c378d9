"""Byte images of LowCmd_ and LowState_ give exactly what the SDK's generic serializer gives."""

import numpy as np
import pytest

from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire_image import LowCmdImage, LowStateDecoder, WireLayoutError, locate_field


def random_targets(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.normal(0.0, 20.0, go2_wire.NUM_MOTORS) for _ in range(5)]  # q, dq, kp, kd, tau


def test_encoded_lowcmd_is_the_sdk_serialization_with_the_sdk_crc():
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_
    from unitree_sdk2py.utils.crc import CRC

    image, rng = LowCmdImage(), np.random.default_rng(0)
    for _ in range(100):
        targets = random_targets(rng)
        data = image.encode(*targets)
        reference = go2_wire.fill_motor_commands(go2_wire.new_lowcmd(), *targets)
        assert data == reference.serialize(use_version_2=False)
        decoded = LowCmd_.deserialize(data)
        assert decoded.crc == image.crc == CRC().Crc(decoded)


def test_encoded_lowcmd_reads_back_as_the_commanded_servo_targets():
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

    q, dq, kp, kd, tau = (np.arange(12) * s for s in (0.1, -0.2, 3.0, 0.5, 0.25))
    motors = go2_wire.motor_commands(LowCmd_.deserialize(LowCmdImage().encode(q, dq, kp, kd, tau)))
    assert np.all(motors.mode == go2_wire.MODE_SERVO)
    for got, want in ((motors.q, q), (motors.dq, dq), (motors.kp, kp), (motors.kd, kd), (motors.tau, tau)):
        np.testing.assert_array_equal(got, want.astype(np.float32))


def random_lowstate(rng: np.random.Generator):
    from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_

    msg = unitree_go_msg_dds__LowState_()
    imu = msg.imu_state
    imu.quaternion, imu.gyroscope = rng.normal(size=4).tolist(), rng.normal(size=3).tolist()
    imu.accelerometer, imu.rpy = rng.normal(size=3).tolist(), rng.normal(size=3).tolist()
    for m in msg.motor_state:
        m.mode, m.temperature = (int(v) for v in rng.integers(0, 256, 2))
        m.q, m.dq, m.ddq, m.tau_est = (float(v) for v in rng.normal(size=4))
    msg.foot_force = [int(v) for v in rng.integers(-(2**15), 2**15, 4)]
    msg.tick = int(rng.integers(0, 2**32))
    keys = frozenset(k for k in go2_wire.KEY_BITS if rng.random() < 0.3)
    msg.wireless_remote = go2_wire.encode_gamepad(go2_wire.Gamepad(keys, *rng.normal(size=4).astype(np.float32)))
    return msg


def assert_same_view(a: go2_wire.LowStateView, b: go2_wire.LowStateView) -> None:
    for field in ("quat_wxyz", "gyro_b", "accel_b", "joint_pos", "joint_vel", "joint_tau_est", "foot_force"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    assert a.tick_ms == b.tick_ms and a.gamepad == b.gamepad


def test_lowstate_decoded_from_bytes_equals_the_generic_decoding():
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

    decoder, rng = LowStateDecoder(), np.random.default_rng(1)
    for _ in range(100):
        data = random_lowstate(rng).serialize()
        assert_same_view(decoder.decode(data), go2_wire.decode_lowstate(LowState_.deserialize(data)))


def test_a_lowstate_in_another_encoding_still_decodes():
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

    msg = random_lowstate(np.random.default_rng(2))
    xcdr2 = msg.serialize(use_version_2=True)
    assert xcdr2[:4] != msg.serialize(use_version_2=False)[:4]
    assert_same_view(LowStateDecoder().decode(xcdr2), go2_wire.decode_lowstate(LowState_.deserialize(xcdr2)))


def test_a_field_that_does_not_reach_the_image_is_reported():
    value = {"x": 0.0}

    def image() -> bytes:
        return b"\x00" * 16  # the field never shows up

    with pytest.raises(WireLayoutError, match="cannot locate x"):
        locate_field(image, lambda v: value.update(x=v), "<f", 0.0, 1.5, "x")
