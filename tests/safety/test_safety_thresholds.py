"""Threshold defaults come from the robot spec; YAML overrides are validated."""

import numpy as np
import pytest
from safety_helpers import SPEC

from surrogait_core.safety import ThresholdError, default_thresholds, thresholds_from_params


def test_defaults_are_derived_from_the_spec():
    th = default_thresholds(SPEC)
    np.testing.assert_array_equal(th.joint_pos_lower, SPEC.joint_pos_lower)
    np.testing.assert_array_equal(th.joint_torque_limit, SPEC.joint_torque_limit)
    assert th.min_base_height_m == pytest.approx(0.6 * SPEC.standing_base_height_m)
    assert th.stale_state_s == pytest.approx(0.06) and th.policy_silent_s == pytest.approx(0.06)
    assert th.damping_grace_s == pytest.approx(0.04)
    # Damping can never ask a motor for more than its torque limit at any speed up to its velocity limit.
    assert np.all(th.damping_kd * SPEC.joint_vel_limit <= SPEC.joint_torque_limit + 1e-9)
    assert th.damping_kd > 0.5
    # A target past its stop by the margin pushes with at most a quarter of the weakest motor's torque.
    assert SPEC.nominal_kp * th.target_limit_margin_rad == pytest.approx(0.25 * SPEC.joint_torque_limit.min())


def test_overrides_and_period_scaling():
    th = thresholds_from_params(SPEC, {"control_period_s": 0.01, "max_roll_rad": 0.5, "damping_kd": 2})
    assert th.max_roll_rad == 0.5 and th.damping_kd == 2.0
    assert th.stale_state_s == pytest.approx(0.03)


@pytest.mark.parametrize("params, message", [
    ({"max_rol_rad": 0.5}, "unknown safety parameter"),
    ({"max_roll_rad": "big"}, "must be a finite number"),
    ({"max_roll_rad": -1.0}, "must be a finite number"),
    ({"max_roll_rad": float("nan")}, "must be a finite number"),
    ({"max_roll_rad": True}, "must be a finite number"),
    ({"control_period_s": 0.0}, "control_period_s"),
    ({"damping_kd": 0.0}, "damping_kd"),
    ({"joint_pos_lower": [0.0] * 12}, "unknown safety parameter"),
])
def test_malformed_params_are_refused(params, message):
    with pytest.raises(ThresholdError, match=message):
        thresholds_from_params(SPEC, params)
