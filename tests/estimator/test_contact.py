"""Contact detection: hysteresis, touchdown trust ramp, gait-clock fusion."""

import numpy as np
import pytest

from surrogait_core.estimator import ContactConfig, ContactDetector


def test_hysteresis_gives_one_transition_per_touchdown_and_liftoff():
    det = ContactDetector(ContactConfig(force_on=20.0, force_off=10.0))
    # A force hovering around a single threshold (15) must not chatter.
    forces = [0, 12, 18, 25, 14, 19, 12, 11, 9, 14, 18, 12, 0]
    states = [bool(det.update(np.full(4, f), 0.002)[0]) for f in forces]
    assert states == [False, False, False, True, True, True, True, True, False, False, False, False, False]


def test_trust_ramps_up_after_touchdown_and_is_zero_in_swing():
    det = ContactDetector(ContactConfig(force_on=20.0, force_off=10.0, trust_ramp_s=0.02))
    det.update(np.array([50.0, 50.0, 0.0, 0.0]), 0.002)
    first = det.stance_trust()
    assert first[2] == 0.0 and first[3] == 0.0
    assert 0.0 < first[0] < 0.5
    for _ in range(20):
        det.update(np.array([50.0, 50.0, 0.0, 0.0]), 0.002)
    np.testing.assert_allclose(det.stance_trust(), [1.0, 1.0, 0.0, 0.0])


def test_a_foot_under_steady_light_load_settles_into_stance():
    # Standing, each Go2 foot carries ~37 N: below force_on, so only the settle time makes it stance.
    det = ContactDetector(ContactConfig(force_on=60.0, force_off=25.0, settle_s=0.1))
    forces = np.array([42.0, 42.0, 32.0, 10.0])
    for _ in range(49):
        assert not det.update(forces, 0.002).any()
    np.testing.assert_array_equal(det.update(forces, 0.002), [True, True, True, False])
    # A clear load is stance at once.
    assert ContactDetector(ContactConfig(force_on=60.0, force_off=25.0)).update(np.full(4, 75.0), 0.002).all()


def test_gait_schedule_raises_the_bar_for_off_schedule_touchdowns():
    det = ContactDetector(ContactConfig(force_on=20.0, force_off=10.0, off_schedule_factor=2.0, settle_s=1.0))
    scheduled = np.array([True, False, True, False])
    stance = det.update(np.full(4, 30.0), 0.002, scheduled_stance=scheduled)
    np.testing.assert_array_equal(stance, [True, False, True, False])
    stance = det.update(np.full(4, 45.0), 0.002, scheduled_stance=scheduled)
    np.testing.assert_array_equal(stance, [True, True, True, True])  # a clear force wins over the schedule


def test_bad_thresholds_are_refused():
    with pytest.raises(ValueError, match="force_off < force_on"):
        ContactConfig(force_on=10.0, force_off=20.0)


def test_a_lightly_loaded_foot_is_touching_the_ground_but_is_no_stance_foot():
    det = ContactDetector(ContactConfig(force_on=60.0, force_off=25.0, touch_force=10.0))
    for _ in range(100):
        stance = det.update(np.array([15.0, 40.0, 5.0, 0.0]), 0.002)
    assert list(stance) == [False, True, False, False]  # 40 N settles into stance; 15 N never does
    assert list(det.touching) == [True, True, False, False]  # but a 15 N foot is on the ground
