"""PolicyRunner takes the default pose and the soft joint range from the policy's contract, not the robot model."""

import dataclasses

import numpy as np
import pytest

from surrogait_core.policy.contract import write_contract
from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.robot_spec import load_robot_spec

from .onnx_fixtures import linear_policy_onnx

SPEC = load_robot_spec("go2")


def runner_for(path, contract) -> PolicyRunner:
    """A runner of a linear policy (action = obs · W) under `contract`."""
    linear_policy_onnx(path, contract.obs_size, contract.action_size)
    write_contract(path, contract)
    return PolicyRunner(OnnxPolicy(path, robot="go2"))


def batch_terms(runner: PolicyRunner, joint_pos: np.ndarray) -> dict[str, np.ndarray]:
    n = len(joint_pos)
    return runner.terms(
        base_ang_vel_b=np.zeros((n, 3)), projected_gravity_b=np.tile([0.0, 0.0, -1.0], (n, 1)), joint_pos=joint_pos,
        joint_vel=np.zeros((n, 12)), command=np.zeros((n, 3)), gait_time_s=np.zeros(n),
    )  # fmt: skip


def test_joint_positions_are_measured_from_the_contracts_default_pose(tmp_path):
    """A robot model regenerated with another default pose must not change what the policy sees."""
    base = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    trained_pose = tuple(float(x) for x in SPEC.default_joint_pos + 0.02)
    contract = dataclasses.replace(base, default_joint_pos=trained_pose)
    runner = runner_for(tmp_path / "p.onnx", contract)
    terms = batch_terms(runner, np.tile(SPEC.default_joint_pos, (1, 1)))
    np.testing.assert_allclose(terms["joint_pos_rel"], np.full((1, 12), -0.02), atol=1e-12)
    np.testing.assert_array_equal(runner.default_joint_pos, trained_pose)


def test_targets_stay_inside_the_soft_range_and_nan_stays_nan(tmp_path):
    base = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    contract = dataclasses.replace(base, action=dataclasses.replace(base.action, scale=(5.0,) * 12))
    runner = runner_for(tmp_path / "p.onnx", contract)
    runner.reset(num_robots=3)
    rng = np.random.default_rng(1)
    joint_pos = SPEC.default_joint_pos + rng.normal(scale=3.0, size=(3, 12))
    joint_pos[2, 0] = np.nan  # a broken sensor reading: every action of that robot is NaN
    out = runner.act(batch_terms(runner, joint_pos))
    lower, upper = np.asarray(contract.soft_joint_pos_lower), np.asarray(contract.soft_joint_pos_upper)
    unclipped = np.asarray(contract.action.offset) + 5.0 * out.action[:2]
    assert np.any((unclipped < lower) | (unclipped > upper)), "the test actions must reach past the soft range"
    np.testing.assert_allclose(out.joint_targets[:2], np.clip(unclipped, lower, upper))
    assert np.all(np.isnan(out.joint_targets[2])), "NaN must reach the controller, which damps on it"


def test_a_robot_whose_action_is_not_finite_keeps_its_previous_action(tmp_path):
    contract = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    runner = runner_for(tmp_path / "p.onnx", contract)
    runner.reset(num_robots=2)
    first = runner.act(batch_terms(runner, np.tile(SPEC.default_joint_pos + 0.1, (2, 1)))).action
    broken = np.tile(SPEC.default_joint_pos, (2, 1))
    broken[1, 3] = np.nan
    second = runner.act(batch_terms(runner, broken)).action
    np.testing.assert_array_equal(runner.last_action[0], second[0])
    np.testing.assert_array_equal(runner.last_action[1], first[1])


@pytest.mark.parametrize("robots", [None, 4])
def test_reset_forgets_the_last_action(tmp_path, robots):
    runner = runner_for(tmp_path / "p.onnx", make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9))
    runner.last_action = np.ones(12)
    runner.reset(num_robots=robots)
    assert runner.last_action.shape == ((12,) if robots is None else (robots, 12))
    assert not runner.last_action.any()
