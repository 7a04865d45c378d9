"""Threshold defaults come from the robot spec; YAML overrides are validated."""

import dataclasses

import numpy as np
import pytest
from safety_helpers import CONTRACT, SPEC

from surrogait_core.safety import ThresholdError, default_thresholds, thresholds_from_params


def test_defaults_are_derived_from_the_spec():
    th = default_thresholds(SPEC)
    np.testing.assert_array_equal(th.joint_pos_lower, SPEC.joint_pos_lower)
    np.testing.assert_array_equal(th.joint_torque_limit, SPEC.joint_torque_limit)
    assert th.min_base_height_m == pytest.approx(0.6 * SPEC.standing_base_height_m)
    assert th.stale_state_s == pytest.approx(0.05) and th.policy_silent_s() == pytest.approx(0.06)
    assert th.damping_grace_s == pytest.approx(0.04)
    # Damping can never ask a motor for more than its torque limit at any speed up to its velocity limit.
    assert np.all(th.damping_kd * SPEC.joint_vel_limit <= SPEC.joint_torque_limit + 1e-9)
    assert th.damping_kd > 0.5
    # A target past its stop by the margin pushes with at most a quarter of the weakest motor's torque.
    assert SPEC.nominal_kp * th.target_limit_margin_rad == pytest.approx(0.25 * SPEC.joint_torque_limit.min())


def test_overrides_and_the_contracts_control_period():
    contract = dataclasses.replace(CONTRACT, control_dt_s=0.01)
    th = thresholds_from_params(SPEC, {"max_roll_rad": 0.5, "damping_kd": 2}, contract)
    assert th.max_roll_rad == 0.5 and th.damping_kd == 2.0
    assert th.control_period_s == 0.01 and th.stale_state_s == pytest.approx(0.025)


def test_the_silence_threshold_follows_the_streams_own_period_with_a_floor():
    th = default_thresholds(SPEC)
    assert th.policy_silent_s(stream_period_s=0.02) == pytest.approx(0.06), "a 50 Hz stream: three periods"
    assert th.policy_silent_s(stream_period_s=0.002) == pytest.approx(0.04), "a 500 Hz stream: the 40 ms floor"
    assert th.policy_silent_s(None) == pytest.approx(0.06), "before the stream is measured: the control period's"


def test_the_joint_position_fault_sits_strictly_between_the_soft_and_the_hard_range():
    contract = CONTRACT
    th = default_thresholds(SPEC, contract)
    soft_lo, soft_hi = np.array(contract.soft_joint_pos_lower), np.array(contract.soft_joint_pos_upper)
    lower, upper = th.joint_pos_fault_limits()
    assert np.all(SPEC.joint_pos_lower < lower) and np.all(lower < soft_lo)
    assert np.all(soft_hi < upper) and np.all(upper < SPEC.joint_pos_upper)
    with pytest.raises(ThresholdError, match="joint_pos_fault_fraction"):
        thresholds_from_params(SPEC, {"joint_pos_fault_fraction": 1.0}, contract)


@pytest.mark.parametrize("params, message", [
    ({"max_rol_rad": 0.5}, "unknown safety parameter"),
    ({"max_roll_rad": "big"}, "must be a finite number"),
    ({"max_roll_rad": -1.0}, "must be a finite number"),
    ({"max_roll_rad": float("nan")}, "must be a finite number"),
    ({"max_roll_rad": True}, "must be a finite number"),
    ({"control_period_s": 0.02}, "reads the control period from the policy file's contract"),
    ({"damping_kd": 0.0}, "damping_kd"),
    ({"joint_pos_lower": [0.0] * 12}, "unknown safety parameter"),
])
def test_malformed_params_are_refused(params, message):
    with pytest.raises(ThresholdError, match=message):
        thresholds_from_params(SPEC, params)
