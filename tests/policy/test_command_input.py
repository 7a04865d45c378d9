import numpy as np

from surrogait_core.policy.command_input import ChordDetector, CommandInput, clip_command, gamepad_command
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
