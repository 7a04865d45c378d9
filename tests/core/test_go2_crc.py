"""The fast LowCmd CRC is unitree_sdk2's CRC, bit for bit."""

import ctypes

import numpy as np
import pytest

from surrogait_core.wire import go2_crc, go2_wire


def sdk_crc():
    from unitree_sdk2py.utils.crc import CRC

    return CRC()


def random_lowcmd(rng: np.random.Generator):
    """A LowCmd_ with every field the CRC covers set at random (not only what the policy writes)."""
    cmd = go2_wire.new_lowcmd()
    cmd.head = [int(v) for v in rng.integers(0, 256, 2)]
    cmd.level_flag, cmd.frame_reserve = (int(v) for v in rng.integers(0, 256, 2))
    cmd.sn = [int(v) for v in rng.integers(0, 2**32, 2)]
    cmd.version = [int(v) for v in rng.integers(0, 2**32, 2)]
    cmd.bandwidth = int(rng.integers(0, 2**16))
    for m in cmd.motor_cmd:
        m.mode = int(rng.integers(0, 256))
        m.q, m.dq, m.tau, m.kp, m.kd = (float(v) for v in rng.normal(0.0, 50.0, 5))
        m.reserve = [int(v) for v in rng.integers(0, 2**32, 3)]
    cmd.bms_cmd.off = int(rng.integers(0, 256))
    cmd.bms_cmd.reserve = [int(v) for v in rng.integers(0, 256, 3)]
    cmd.wireless_remote = [int(v) for v in rng.integers(0, 256, 40)]
    cmd.led = [int(v) for v in rng.integers(0, 256, 12)]
    cmd.fan = [int(v) for v in rng.integers(0, 256, 2)]
    cmd.gpio = int(rng.integers(0, 256))
    cmd.reserve = int(rng.integers(0, 2**32))
    return cmd


def test_lowcmd_crc_equals_the_sdk_crc_on_random_messages():
    rng = np.random.default_rng(0)
    for _ in range(200):
        cmd = random_lowcmd(rng)
        assert go2_crc.lowcmd_crc(cmd) == sdk_crc().Crc(cmd)


def test_crc_of_words_equals_the_sdk_c_core():
    core = getattr(sdk_crc(), "crc_lib", None)
    if core is None:
        pytest.skip("unitree_sdk2py ships its C CRC core for Linux x86_64/aarch64 only")
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 202, 294):
        words = rng.integers(0, 2**32, n, dtype=np.uint32)
        expected = core.crc32_core(words.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), n)
        assert go2_crc.crc32_words(words.astype("<u4").tobytes()) == expected


def test_the_crc_covers_every_motor_field_and_not_the_crc_word():
    cmd = go2_wire.fill_damping(go2_wire.new_lowcmd(), kd=1.0)
    crc = go2_crc.lowcmd_crc(cmd)
    cmd.crc ^= 0xFFFF
    assert go2_crc.lowcmd_crc(cmd) == crc, "the crc word itself is not part of the checksum"
    for field in ("mode", "q", "dq", "tau", "kp", "kd"):
        changed = go2_wire.fill_damping(go2_wire.new_lowcmd(), kd=1.0)
        setattr(changed.motor_cmd[11], field, getattr(changed.motor_cmd[11], field) + 1)
        assert go2_crc.lowcmd_crc(changed) != crc, field
