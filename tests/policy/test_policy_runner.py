import dataclasses

import numpy as np
import pytest
from policy_files import lowstate, write_linear_policy, write_test_policy

from surrogait_core.policy.gait import clock_features, leg_phases
from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.policy.observation import ObservationBuilder
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.robot_spec import load_robot_spec

SPEC = load_robot_spec("go2")


def test_observation_terms_come_from_the_right_places(go2_policy_path):
    runner = PolicyRunner(OnnxPolicy(go2_policy_path, robot="go2"))
    q = SPEC.default_joint_pos + 0.1
    raw = runner.raw_terms(lowstate(joint_pos=q, gyro=(0.1, 0.2, 0.3)), np.array([0.5, 0.0, 0.2]), gait_time_s=0.125)
    np.testing.assert_allclose(raw["joint_pos_rel"], np.full(12, 0.1))
    np.testing.assert_allclose(raw["base_ang_vel_b"], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(raw["projected_gravity_b"], [0.0, 0.0, -1.0])
    np.testing.assert_allclose(raw["command"], [0.5, 0.0, 0.2])
    np.testing.assert_allclose(raw["gait_clock"], clock_features(leg_phases(runner.contract.gait, 0.125)))
    np.testing.assert_array_equal(raw["last_action"], np.zeros(12))
    obs = runner.observation(lowstate(joint_pos=q), np.zeros(3), 0.0)
    assert obs.shape == (runner.contract.obs_size,) and obs.dtype == np.float32
    # the shared builder's scaling applies (joint_vel is scaled by its contract scale)
    expected = ObservationBuilder(runner.contract).build(runner.raw_terms(lowstate(joint_pos=q), np.zeros(3), 0.0))
    np.testing.assert_array_equal(obs, expected)


def test_step_maps_actions_to_targets_and_remembers_the_last_action(tmp_path):
    contract = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    bias = np.full(12, 0.5)  # action = tanh(0.5) whatever the observation
    path = write_linear_policy(tmp_path / "bias.onnx", contract, bias=bias)
    runner = PolicyRunner(OnnxPolicy(path, robot="go2"))
    out = runner.step(lowstate(), np.zeros(3), 0.0)
    np.testing.assert_allclose(out.action, np.tanh(0.5), rtol=1e-6)
    np.testing.assert_allclose(out.joint_targets, SPEC.default_joint_pos + 0.25 * np.tanh(0.5), rtol=1e-6)
    np.testing.assert_allclose(runner.last_action, np.tanh(0.5), rtol=1e-6)
    assert out.finite and 0.0 < out.inference_s < 0.05
    runner.reset()
    np.testing.assert_array_equal(runner.last_action, np.zeros(12))


def test_targets_are_clipped_to_the_contracts_soft_joint_range_as_in_training(tmp_path):
    base = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    wide = dataclasses.replace(base, action=dataclasses.replace(base.action, scale=(10.0,) * 12))
    path = write_linear_policy(tmp_path / "far.onnx", wide, bias=np.full(12, 50.0))
    out = PolicyRunner(OnnxPolicy(path, robot="go2")).step(lowstate(), np.zeros(3), 0.0)
    unclipped = SPEC.default_joint_pos + 10.0 * out.action
    upper = np.asarray(base.soft_joint_pos_upper)
    assert np.any(unclipped > upper), "the test action must reach past a limit"
    np.testing.assert_allclose(out.joint_targets, np.minimum(unclipped, upper))
    assert np.all(out.joint_targets < SPEC.joint_pos_upper)


def test_estimator_velocity_is_required_when_the_contract_asks_for_it(tmp_path):
    path = write_test_policy(tmp_path / "with_vel.onnx", with_base_lin_vel=True)
    runner = PolicyRunner(OnnxPolicy(path, robot="go2"))
    assert runner.needs_base_lin_vel
    with pytest.raises(ValueError, match="base_lin_vel_b"):
        runner.step(lowstate(), np.zeros(3), 0.0)
    raw = runner.raw_terms(lowstate(), np.zeros(3), 0.0, base_lin_vel_b=np.array([0.4, 0.0, 0.0]))
    np.testing.assert_allclose(raw["base_lin_vel_b"], [0.4, 0.0, 0.0])
