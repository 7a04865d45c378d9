"""Run-time input checks on the LowState stream: each bad input named by its cause."""


import numpy as np

from surrogait_core.inputs.sanity import (
    FOOT_STUCK,
    IMU_GRAVITY_DIRECTION,
    IMU_GRAVITY_NORM,
    IMU_QUAT_NORM,
    RATE_LOW,
    InputSanity,
    SanityConfig,
)
from surrogait_core.wire.go2_wire import Gamepad, LowStateView

RNG = np.random.default_rng(3)


def state(quat=(1.0, 0.0, 0.0, 0.0), accel=(0.0, 0.0, 9.81), feet=None, joint_vel=None) -> LowStateView:
    return LowStateView(
        tick_ms=0, quat_wxyz=np.array(quat, dtype=float), gyro_b=RNG.normal(0, 0.01, 3),
        accel_b=np.array(accel, dtype=float) + RNG.normal(0, 0.05, 3), joint_pos=np.zeros(12),
        joint_vel=np.zeros(12) if joint_vel is None else np.asarray(joint_vel, dtype=float),
        joint_tau_est=np.zeros(12), foot_force=RNG.uniform(20, 80, 4) if feet is None else np.asarray(feet, float),
        gamepad=Gamepad(frozenset(), 0, 0, 0, 0))


def feed(sanity, make, seconds, t0=0.0, dt=0.002):
    for k in range(int(seconds / dt)):
        sanity.on_state(make(), t0 + k * dt)
    return t0 + seconds


def test_a_healthy_walking_robot_raises_nothing():
    sanity = InputSanity()
    walking = np.tile([0.5, 3.0, 4.0], 4)  # every leg swinging
    feed(sanity, lambda: state(joint_vel=walking * RNG.choice([-1, 1])), 4.0)
    sanity.on_rate(498.0)
    assert sanity.issues() == {}


def test_a_slow_stream_is_named_and_clears_when_it_recovers():
    sanity = InputSanity(SanityConfig(min_rate_hz=100.0))
    sanity.on_rate(62.0)
    issue = sanity.issues()[RATE_LOW]
    assert "62 Hz" in issue.detail and "100 Hz" in issue.detail
    sanity.on_rate(200.0)  # the 200 Hz of some simulators is enough for a 50 Hz policy
    assert RATE_LOW not in sanity.issues()


def test_a_dead_imu_quaternion_is_named_after_it_persists():
    sanity = InputSanity()
    sanity.on_state(state(quat=(0, 0, 0, 0)), 0.0)
    assert IMU_QUAT_NORM not in sanity.issues(), "one glitch is not an issue"
    feed(sanity, lambda: state(quat=(0, 0, 0, 0)), 0.1, t0=0.002)
    assert "norm is 0.000" in sanity.issues()[IMU_QUAT_NORM].detail


def test_an_accelerometer_that_does_not_read_gravity_is_named():
    sanity = InputSanity()
    feed(sanity, lambda: state(accel=(0.0, 0.0, 0.0)), 0.5)
    assert IMU_GRAVITY_NORM not in sanity.issues(), "judged on a full second of data only"
    feed(sanity, lambda: state(accel=(0.0, 0.0, 0.0)), 1.5, t0=0.5)
    assert IMU_GRAVITY_NORM in sanity.issues()


def test_an_accelerometer_that_disagrees_with_the_quaternion_is_named():
    sanity = InputSanity()
    roll = 0.6  # the quaternion says tilted 34 degrees, the accelerometer says level
    feed(sanity, lambda: state(quat=(np.cos(roll / 2), np.sin(roll / 2), 0, 0)), 1.5)
    assert IMU_GRAVITY_DIRECTION in sanity.issues()
    level = InputSanity()
    g = 9.81 * np.array([0.0, np.sin(roll), np.cos(roll)])  # a tilted robot whose IMU agrees with itself
    feed(level, lambda: state(quat=(np.cos(roll / 2), np.sin(roll / 2), 0, 0), accel=g), 1.5)
    assert level.issues() == {}


def test_a_foot_sensor_stuck_while_its_leg_moves_is_named_but_not_while_the_robot_stands_still():
    sanity = InputSanity()
    standing = lambda: state(feet=[40.0, 40.0, 38.0, 39.0])  # noqa: E731  (still: identical readings are fine)
    feed(sanity, standing, 3.0)
    assert FOOT_STUCK not in sanity.issues()
    walking = np.tile([0.5, 3.0, 4.0], 4)

    def one_dead():
        feet = RNG.uniform(0, 80, 4)
        feet[1] = 0.0  # FL reads 0 whatever its leg does
        return state(feet=feet, joint_vel=walking)

    t = feed(sanity, one_dead, 1.5, t0=3.0)
    assert FOOT_STUCK not in sanity.issues()
    feed(sanity, one_dead, 1.0, t0=t)
    issue = sanity.issues()[FOOT_STUCK]
    assert issue.values["feet"] == ["FL"] and "FL at 0" in issue.detail


def test_a_foot_strike_right_after_a_host_stall_is_not_an_imu_fault():
    """A whole-host pause of 110 ms (seen in CI: every process stopped, the robot's stream queued meanwhile), then a
    foot strike's jolt in the first sample judged after it. That sample stands for its own moment, not for the gap:
    weighted with the gap it once tilted the accelerometer's 1 s mean 20° and latched a walking Go2's monitor."""
    sanity = InputSanity()
    t = feed(sanity, lambda: state(), 2.0)
    for stall in range(3):
        t += 0.110  # nothing judged for 110 ms
        sanity.on_state(state(accel=(25.0, -20.0, 40.0)), t)  # a foot strike: 4 g, mostly not gravity
        t = feed(sanity, lambda: state(), 1.0, t0=t + 0.002)
        assert IMU_GRAVITY_DIRECTION not in sanity.issues() and IMU_GRAVITY_NORM not in sanity.issues(), stall


def test_an_imu_that_disagrees_across_gaps_in_its_stream_is_still_named():
    """The gap rule does not blind the check: a stream with 110 ms gaps whose accelerometer is tilted 30° from
    its quaternion is named once a time constant of samples has been judged."""
    sanity = InputSanity()
    tilted = (9.81 * np.sin(np.radians(30)), 0.0, 9.81 * np.cos(np.radians(30)))
    t = 0.0
    for _ in range(40):
        t = feed(sanity, lambda: state(accel=tilted), 0.1, t0=t) + 0.110
    assert IMU_GRAVITY_DIRECTION in sanity.issues()


def test_a_robot_that_rolls_fast_with_an_imu_that_agrees_with_itself_is_not_an_imu_fault():
    """A stumble: the body rolls 25° in a tenth of a second. The quaternion follows at once; the accelerometer's
    1 s mean only slowly. Compared with the quaternion of the moment, that lag read as a 25° disagreement and
    latched a monitor on a Go2 stumbling after a host stall; compared with the quaternion averaged the same way,
    the IMU agrees with itself throughout."""
    sanity = InputSanity()
    t = feed(sanity, lambda: state(), 2.0)
    for k in range(1, 250):  # 0.1 s of rolling, then holding the roll
        roll = np.radians(25.0) * min(1.0, k * 0.002 / 0.1)
        quat = (np.cos(roll / 2), np.sin(roll / 2), 0.0, 0.0)
        sanity.on_state(state(quat=quat, accel=9.81 * np.array([0.0, np.sin(roll), np.cos(roll)])), t + k * 0.002)
        assert IMU_GRAVITY_DIRECTION not in sanity.issues(), f"{k * 2} ms into the roll"
