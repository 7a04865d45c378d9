"""rt/lowstate's CRC checked from the CDR sample, bit for bit as unitree_sdk2py computes it, and its health fields."""

import numpy as np
import pytest
from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
from unitree_sdk2py.utils.crc import CRC

from surrogait_core.wire.go2_lowstate_layout import LowStateCrc


@pytest.fixture(scope="module")
def crc():
    return LowStateCrc()


def random_lowstate(seed: int):
    rng = np.random.default_rng(seed)
    msg = unitree_go_msg_dds__LowState_()
    msg.tick = int(rng.integers(0, 2**32))
    msg.sn = [int(v) for v in rng.integers(0, 2**32, 2)]
    msg.imu_state.quaternion = rng.normal(size=4).astype(np.float32).tolist()
    msg.imu_state.accelerometer = rng.normal(size=3).astype(np.float32).tolist()
    msg.foot_force = [int(v) for v in rng.integers(-32768, 32768, 4)]
    msg.wireless_remote = [int(v) for v in rng.integers(0, 256, 40)]
    msg.bms_state.soc = int(rng.integers(0, 101))
    msg.power_v = float(np.float32(rng.uniform(20, 34)))
    for i in range(20):
        m = msg.motor_state[i]
        m.q, m.dq, m.tau_est = (float(np.float32(v)) for v in rng.normal(size=3))
        m.temperature = int(rng.integers(0, 100))
    return msg


@pytest.mark.parametrize("seed", range(8))
def test_a_sealed_lowstate_passes_and_any_other_crc_fails(crc, seed):
    msg = random_lowstate(seed)
    msg.crc = CRC().Crc(msg)
    assert crc.check(msg.serialize(use_version_2=False))
    msg.crc ^= 1 << (seed % 32)
    assert not crc.check(msg.serialize(use_version_2=False))


def test_a_simulator_that_leaves_crc_at_zero_fails(crc):
    msg = random_lowstate(99)
    msg.crc = 0
    assert not crc.check(msg.serialize(use_version_2=False))


def test_a_corrupted_field_fails(crc):
    msg = random_lowstate(5)
    msg.crc = CRC().Crc(msg)
    data = bytearray(msg.serialize(use_version_2=False))
    data[200] ^= 0x10  # a bit flipped in transit
    assert not crc.check(bytes(data))


def test_health_fields_are_read_from_the_sample(crc):
    msg = random_lowstate(7)
    h = crc.health(msg.serialize(use_version_2=False))
    assert h.battery_soc_pct == msg.bms_state.soc
    assert h.power_v == pytest.approx(msg.power_v)
    assert h.motor_temperature_c.tolist() == [float(m.temperature) for m in msg.motor_state[:12]]
    assert h.serial == tuple(msg.sn)
