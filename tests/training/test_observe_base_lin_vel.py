"""`env.observe_base_lin_vel`: the state estimator's base velocity as the observation's last term. Without it a
policy sets its speed from the command alone (on damped joints it walks at 0.6 of it, bench/results/damped_joints.md);
with it, the velocity reaches the network, the exported file asks the estimator for it, and a run can start from a
file that lacks it."""

import numpy as np
import torch

from surrogait_core.policy.contract import read_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_train.config import EnvConfig, load_config
from surrogait_train.env import LocomotionEnv, make_contract
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

OBSERVE = ["env.observe_base_lin_vel=true"]


def test_the_velocity_is_the_last_term_asked_of_the_estimator_and_off_by_default():
    plain, seeing = make_contract(EnvConfig()), make_contract(EnvConfig(observe_base_lin_vel=True))
    assert "base_lin_vel_b" not in [t.name for t in plain.observation]
    assert seeing.observation[:-1] == plain.observation
    last = seeing.observation[-1]
    assert (last.name, last.size, last.source) == ("base_lin_vel_b", 3, "estimator")
    assert "base_lin_vel_b" in seeing.estimator_terms


def test_the_observation_ends_with_the_robots_scaled_velocity():
    env = LocomotionEnv(EnvConfig(num_envs=4, observe_base_lin_vel=True), seed=1)
    env.reset(seed=1)
    env.step(torch.zeros(env.num_envs, env.action_size))  # moving a little: a velocity to see
    obs = env.observation(env.state, torch.zeros(env.num_envs, env.action_size))
    scale = env.contract.observation[-1].scale
    torch.testing.assert_close(obs[:, -3:], env.state.base_lin_vel_b * scale)
    assert env.state.base_lin_vel_b.abs().max() > 0
    env.close()


def test_an_exported_policy_acts_on_the_velocity_the_node_gives_it(tmp_path, tiny_overrides):
    trainer = Trainer(load_config(None, [*tiny_overrides, *OBSERVE]), tmp_path)
    trainer.train(max_iterations=1, progress=False)
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "p.onnx")
    trainer.env.close()
    assert read_contract(path).observation[-1].name == "base_lin_vel_b"
    runner = PolicyRunner(OnnxPolicy(path))
    assert runner.needs_base_lin_vel
    joints = np.zeros(12)
    actions = []
    for vx in (0.0, 1.0):
        runner.reset()
        terms = runner.terms(np.zeros(3), np.array([0.0, 0.0, -1.0]), joints + runner.contract.action.offset, joints,
                             np.array([0.5, 0.0, 0.0]), 0.0, np.array([vx, 0.0, 0.0]))
        actions.append(runner.act(terms).joint_targets)
    assert not np.allclose(actions[0], actions[1]), "the velocity reached the network"


def test_a_run_that_observes_it_starts_from_the_shipped_trot_and_acts_as_it(tmp_path):
    shipped = "ros2_ws/src/surrogait_bringup/policies/go2_trot.onnx"
    cfg = load_config("ros2_ws/src/surrogait_bringup/policies/go2_trot.yaml", ["env.num_envs=4", *OBSERVE])
    trainer = Trainer(cfg, tmp_path)
    trainer.init_from(shipped)
    env = trainer.env
    obs = env.observation(env.state, torch.zeros(env.num_envs, env.action_size))
    with torch.no_grad():
        widened = trainer.actor(obs).numpy()
        obs[:, -3:] = torch.randn(env.num_envs, 3)
        assert np.allclose(trainer.actor(obs).numpy(), widened), "whatever the velocity, the file's action at first"
    policy = OnnxPolicy(shipped)  # the network's output through onnxruntime, before the contract's scaling
    expected = policy.session.run([policy.output_name], {policy.input_name: obs[:, :-3].numpy()})[0]
    np.testing.assert_allclose(widened, expected, atol=1e-5, rtol=1e-4)
    env.close()
