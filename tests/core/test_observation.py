"""Observations are built one way for training, evaluation and the robot."""

import numpy as np
import pytest

from surrogait_core.policy.contract import GaitSpec
from surrogait_core.policy.gait import clock_features, leg_phases, stance_mask
from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.policy.observation import ObservationBuilder, projected_gravity
from surrogait_core.robot_spec import load_robot_spec


def _raw(rng, batch=()):
    sizes = {"base_lin_vel_b": 3, "base_ang_vel_b": 3, "projected_gravity_b": 3, "command": 3,
             "joint_pos_rel": 12, "joint_vel": 12, "last_action": 12, "gait_clock": 8}
    return {k: rng.normal(scale=50.0, size=(*batch, n)) for k, n in sizes.items()}


def test_terms_are_scaled_clipped_and_concatenated_in_contract_order():
    contract = make_locomotion_contract(load_robot_spec("go2"), soft_joint_range_fraction=0.9, with_base_lin_vel=True)
    raw = _raw(np.random.default_rng(0))
    obs = ObservationBuilder(contract).build(raw)
    assert obs.shape == (contract.obs_size,) and obs.dtype == np.float32
    start = 0
    for term in contract.observation:
        expected = np.clip(raw[term.name] * term.scale, -term.clip, term.clip)
        np.testing.assert_allclose(obs[start : start + term.size], expected, rtol=1e-6)
        start += term.size
    assert contract.observation[0].name == "base_lin_vel_b" and contract.estimator_terms == ("base_lin_vel_b",)


def test_torch_and_numpy_give_the_same_observation_and_torch_keeps_gradients():
    torch = pytest.importorskip("torch", reason="the trainer's torch path (not in the deployment-only env)")
    contract = make_locomotion_contract(load_robot_spec("go2"), soft_joint_range_fraction=0.9)
    builder = ObservationBuilder(contract)
    raw = _raw(np.random.default_rng(1), batch=(4,))
    raw_t = {k: torch.tensor(v, requires_grad=True) for k, v in raw.items()}
    obs_t = builder.build(raw_t)
    np.testing.assert_allclose(obs_t.detach().numpy(), builder.build(raw), rtol=1e-6)
    obs_t.sum().backward()
    assert raw_t["joint_vel"].grad is not None


def test_a_missing_or_misshaped_term_is_named():
    builder = ObservationBuilder(make_locomotion_contract(load_robot_spec("go2"), soft_joint_range_fraction=0.9))
    raw = _raw(np.random.default_rng(2))
    del raw["command"]
    with pytest.raises(KeyError, match="command"):
        builder.build(raw)
    raw = _raw(np.random.default_rng(2))
    raw["joint_vel"] = raw["joint_vel"][:6]
    with pytest.raises(ValueError, match="joint_vel.*size 6.*contract says 12"):
        builder.build(raw)


def test_projected_gravity_of_level_and_rolled_bases():
    np.testing.assert_allclose(projected_gravity(np.array([1.0, 0, 0, 0])), [0, 0, -1], atol=1e-12)
    half = np.pi / 4  # roll of +90°: gravity points along -y of the body... rotated onto body y
    g = projected_gravity(np.array([np.cos(half), np.sin(half), 0, 0]))
    np.testing.assert_allclose(g, [0, -1, 0], atol=1e-12)


def test_trot_clock_pairs_diagonal_legs_and_respects_duty_factor():
    gait = GaitSpec()  # trot: FR+RL together, FL+RR half a cycle later
    t = np.linspace(0, 2.0, 2001)
    phases = leg_phases(gait, t)
    np.testing.assert_allclose(phases[:, 0], phases[:, 3])
    np.testing.assert_allclose(phases[:, 1], phases[:, 2])
    stance = stance_mask(gait, phases)
    assert stance.mean(axis=0) == pytest.approx([0.5] * 4, abs=0.01)
    assert not np.any(stance[:, 0] & stance[:, 1])
    features = clock_features(phases)
    np.testing.assert_allclose(features[:, :4] ** 2 + features[:, 4:] ** 2, 1.0)
