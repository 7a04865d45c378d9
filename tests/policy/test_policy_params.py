import dataclasses

import pytest

from surrogait_core.runtime.node_params import ParamError
from surrogait_policy.params import (
    PARAMETERS,
    PolicyNodeParams,
    commands_per_policy_step,
    feedback_every_n_cycles,
    from_values,
)


def test_every_field_is_a_declared_parameter_with_a_description():
    assert set(PARAMETERS) == {f.name for f in dataclasses.fields(PolicyNodeParams)}
    assert all(description for _, description in PARAMETERS.values())


def test_values_are_typed_and_ints_are_accepted_for_floats():
    params = from_values({"policy_path": "p.onnx", "stand_up_duration_s": 3, "dds_domain": 21})
    assert params.stand_up_duration_s == 3.0 and isinstance(params.stand_up_duration_s, float)
    assert params.validate() is params


@pytest.mark.parametrize("values, message", [
    ({"policy_path": "p.onnx", "dds_domain": "one"}, "'dds_domain' must be an integer"),
    ({"policy_path": "p.onnx", "release_sport_mode": 1}, "'release_sport_mode' must be true or false"),
    ({"policy_path": "p.onnx", "stand_up_duration": 2.0}, "unknown parameter"),
])
def test_wrong_types_and_unknown_names_are_refused(values, message):
    with pytest.raises(ParamError, match=message):
        from_values(values)


@pytest.mark.parametrize("values, message", [
    ({}, "policy_path is empty"),
    ({"policy_path": "p.onnx", "robot": "spot"}, "robot 'spot'"),
    ({"policy_path": "p.onnx", "network_interface": "eth9"}, "'eth9' does not exist"),
    ({"policy_path": "p.onnx", "damping_kd": 0.0}, "damping_kd must be positive"),
    ({"policy_path": "p.onnx", "dds_domain": 500}, "outside 0..232"),
    ({"policy_path": "p.onnx", "command_accel_m_s2": -1.0}, "command_accel_m_s2 must be >= 0"),
    ({"policy_path": "p.onnx", "command_yaw_accel_rad_s2": float("inf")}, "command_yaw_accel_rad_s2 must be >= 0"),
])
def test_values_that_cannot_work_are_refused(values, message):
    with pytest.raises(ParamError, match=message):
        from_values(values).validate()


@pytest.mark.parametrize("rate_hz, every_n", [(50.0, 1), (100.0, 1), (10.0, 5), (20.0, 3), (1.0, 50)])
def test_feedback_goes_out_every_nth_cycle_never_above_the_rate_asked(rate_hz, every_n):
    assert feedback_every_n_cycles(rate_hz, cycle_dt_s=0.02) == every_n


def test_feedback_rate_must_be_positive():
    with pytest.raises(ParamError, match="feedback_rate_hz must be positive"):
        from_values({"policy_path": "p.onnx", "feedback_rate_hz": 0.0}).validate()


def test_the_command_stream_defaults_to_the_motor_drivers_500_hz():
    assert PolicyNodeParams().command_rate_hz == 500.0
    assert commands_per_policy_step(500.0, control_dt_s=0.02) == 10


@pytest.mark.parametrize("rate_hz", [49.0, 1001.0, 0.0])
def test_a_command_rate_outside_50_to_1000_hz_is_refused(rate_hz):
    with pytest.raises(ParamError, match="command_rate_hz .* is outside 50..1000 Hz"):
        from_values({"policy_path": "p.onnx", "command_rate_hz": rate_hz}).validate()


@pytest.mark.parametrize("rate_hz, per_step", [(50.0, 1), (200.0, 4), (1000.0, 20)])
def test_the_stream_divides_the_policy_period_evenly(rate_hz, per_step):
    assert commands_per_policy_step(rate_hz, control_dt_s=0.02) == per_step


def test_a_stream_that_does_not_divide_the_policy_period_is_refused_with_a_rate_that_does():
    with pytest.raises(ParamError, match="not a whole multiple .* 50 Hz.*use e.g. 500"):
        commands_per_policy_step(333.0, control_dt_s=0.02)
