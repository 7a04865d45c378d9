"""The simulator's rt/lowstate under each wire profile: what other simulators and faulty robots send."""

import numpy as np
import pytest

from surrogait_core.runtime.node_params import ParamError
from surrogait_core.wire.go2_lowstate_layout import LowStateCrc
from surrogait_core.wire.go2_wire_image import LowStateDecoder
from surrogait_rehearsal.sim.lowstate_writer import LowStateWriter
from surrogait_rehearsal.sim.mujoco.config import SimNodeConfig
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig
from surrogait_rehearsal.sim.wire_profile import RAW_COUNTS_PER_N, RAW_OFFSET_COUNTS, WireProfile, WireProfileError


@pytest.fixture(scope="module")
def readout():
    sim = Go2Sim(SimConfig(initial_pose="stand"))
    for _ in range(50):
        sim.step(None)
    return sim.readout()


def written(profile: str, readout, tick_ms=12345):
    writer = LowStateWriter(WireProfile.parse(profile))
    msg = writer.fill(readout, tick_ms, [0] * 40)
    return msg.serialize()


def test_the_go2_profile_is_the_wire_as_before(readout):
    data = written("go2", readout)
    view = LowStateDecoder().decode(data)
    assert view.tick_ms == 12345 and LowStateCrc().check(data)
    np.testing.assert_allclose(view.foot_force, np.clip(np.rint(readout.foot_force_n), 0, None))


def test_each_variant_changes_only_its_own_field(readout):
    crc, decode = LowStateCrc(), LowStateDecoder().decode
    tickless = decode(written("tickless", readout))
    assert tickless.tick_ms == 0 and tickless.foot_force.sum() > 0
    assert np.all(decode(written("no_foot_force", readout)).foot_force == 0)
    raw = decode(written("raw_foot_force", readout)).foot_force
    np.testing.assert_allclose(raw, np.rint(RAW_OFFSET_COUNTS + RAW_COUNTS_PER_N * readout.foot_force_n))
    no_crc = written("no_crc", readout)
    assert not crc.check(no_crc) and crc.check(written("lowstate_200hz", readout))
    combined = written("tickless,no_foot_force,lowstate_200hz,no_crc", readout)
    assert decode(combined).tick_ms == 0 and not crc.check(combined)


def test_profiles_combine_and_bad_lists_are_refused():
    p = WireProfile.parse(" tickless , lowstate_200hz ")
    assert not p.tick and p.lowstate_rate_hz == 200.0 and p.crc and p.foot_force == "newtons"
    assert SimNodeConfig.from_params({"wire_profile": "lowstate_200hz"}).effective_lowstate_rate_hz == 200.0
    assert SimNodeConfig.from_params({}).effective_lowstate_rate_hz == 500.0
    for bad, why in (("tickles", "unknown tickles"), ("go2,no_crc", "list only the variants"),
                     ("no_foot_force,raw_foot_force", "exclude each other"), ("", "empty")):
        with pytest.raises(WireProfileError, match=why):
            WireProfile.parse(bad)
    with pytest.raises(ParamError, match="wire_profile"):
        SimNodeConfig.from_params({"wire_profile": "tickles"})
    with pytest.raises(ParamError, match="Go2's DDS wire"):
        SimNodeConfig.from_params({"robot": "go1", "wire_profile": "tickless"})


def test_a_suspended_robot_hangs_level_and_its_imu_reads_gravity():
    sim = Go2Sim(SimConfig(initial_pose="suspended", imu_gyro_noise_std=0.0, imu_acc_noise_std=0.0))
    for _ in range(1000):
        sim.step(None)
    r = sim.readout()
    assert abs(sim.data.qpos[2] - 0.6) < 0.02 and np.allclose(r.accel_b, [0, 0, 9.81], atol=0.3)
    assert np.all(r.foot_force_n == 0.0), "the feet hang in the air"
