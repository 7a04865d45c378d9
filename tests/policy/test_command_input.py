import numpy as np
import pytest

from surrogait_core.policy.command_input import (
    ChordDetector,
    CommandInput,
    CommandSlewLimiter,
    clip_command,
    gamepad_command,
    slewed,
)
from surrogait_core.policy.contract import CommandRanges
from surrogait_core.wire.go2_wire import ESTOP_KEYS, STAND_UP_KEYS, WALK_KEYS, Gamepad

RANGES = CommandRanges(lin_vel_x=(-0.5, 1.0), lin_vel_y=(-0.3, 0.3), ang_vel_yaw=(-0.5, 0.5))


def pad(keys=(), lx=0.0, ly=0.0, rx=0.0):
    return Gamepad(frozenset(keys), lx, ly, rx, 0.0)


def test_commands_are_clipped_to_the_contract_ranges():
    np.testing.assert_allclose(clip_command([3.0, -1.0, 2.0], RANGES), [1.0, -0.3, 0.5])
    np.testing.assert_allclose(clip_command([-3.0, 0.1, -2.0], RANGES), [-0.5, 0.1, -0.5])
    np.testing.assert_allclose(clip_command([np.nan, np.inf, 0.2], RANGES), [0.0, 0.0, 0.2])


def test_cmd_vel_times_out_to_zero():
    cmd = CommandInput(RANGES, timeout_s=0.5)
    np.testing.assert_array_equal(cmd.command(0.0), np.zeros(3))
    cmd.set_cmd_vel(0.7, 0.0, 0.2, now_s=1.0)
    np.testing.assert_allclose(cmd.command(1.4), [0.7, 0.0, 0.2])
    np.testing.assert_array_equal(cmd.command(1.51), np.zeros(3))
    cmd.set_cmd_vel(5.0, 0.0, 0.0, now_s=2.0)
    np.testing.assert_allclose(cmd.command(2.0), [1.0, 0.0, 0.0])


def test_the_followed_command_moves_towards_the_target_at_the_slew_rate_per_component():
    limiter = CommandSlewLimiter((1.0, 0.5, 2.0))
    np.testing.assert_allclose(limiter.step([1.0, -1.0, 1.0], 0.1), [0.1, -0.05, 0.2])
    np.testing.assert_allclose(limiter.step([0.15, -1.0, 0.25], 0.1), [0.15, -0.1, 0.25])  # reached: no overshoot
    limiter.reset()
    np.testing.assert_array_equal(limiter.step([0.0, 0.0, 0.0], 0.1), np.zeros(3))
    # 0 = that component follows at once
    np.testing.assert_allclose(CommandSlewLimiter((0.0, 1.0, 0.0)).step([0.8, 0.8, -0.4], 0.02), [0.8, 0.02, -0.4])


def test_a_step_to_a_stop_becomes_a_ramp():
    steps = np.array([[1.0, 0.0, 0.0]] * 100 + [[0.0, 0.0, 0.0]] * 60)  # 2 s at 1 m/s, then stop; 50 Hz
    followed = slewed(steps, 0.02, (1.0, 1.0, 1.0))
    assert followed[49, 0] == pytest.approx(1.0) and followed[0, 0] == pytest.approx(0.02)
    assert np.all(np.abs(np.diff(followed[:, 0])) <= 0.02 + 1e-12)
    assert followed[149, 0] == pytest.approx(0.0)  # 1 s after the stop


@pytest.mark.parametrize("rate", [(1.0, 1.0), (1.0, -1.0, 1.0), (1.0, float("nan"), 1.0)])
def test_a_slew_rate_must_be_three_values_that_are_not_negative(rate):
    with pytest.raises(ValueError, match="slew rate"):
        CommandSlewLimiter(rate)


def test_gamepad_sticks_map_to_the_ranges_and_win_over_cmd_vel():
    np.testing.assert_allclose(gamepad_command(pad(ly=1.0, lx=1.0, rx=-1.0), RANGES), [1.0, -0.3, 0.5])
    np.testing.assert_allclose(gamepad_command(pad(ly=-1.0), RANGES), [-0.5, 0.0, 0.0])
    cmd = CommandInput(RANGES, timeout_s=0.5)
    cmd.set_cmd_vel(0.3, 0.0, 0.0, now_s=0.0)
    cmd.set_gamepad(pad(ly=0.5), now_s=0.1)
    np.testing.assert_allclose(cmd.command(0.2), [0.5, 0.0, 0.0])
    # sticks in the dead band do not count as a command: cmd_vel takes over again once the pad times out
    cmd.set_gamepad(pad(ly=0.01), now_s=0.7)
    cmd.set_cmd_vel(0.3, 0.0, 0.0, now_s=0.7)
    np.testing.assert_allclose(cmd.command(0.7), [0.3, 0.0, 0.0])


def test_chords_fire_once_per_press():
    chords = ChordDetector()
    assert chords.update(frozenset()) == []
    assert chords.update(STAND_UP_KEYS) == ["stand_up"]
    assert chords.update(STAND_UP_KEYS) == [], "holding the chord must not repeat the request"
    assert chords.update(STAND_UP_KEYS | {"R1"}) == []
    assert chords.update(frozenset()) == []
    assert chords.update(WALK_KEYS) == ["walk"]
    assert chords.update(ESTOP_KEYS | WALK_KEYS) == ["damp"]
