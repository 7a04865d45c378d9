"""A run starts from an exported policy file (`--init-from POLICY.onnx`): the shipped policy is fine-tuned without
the checkpoint it came from. Its actor, normaliser included, acts exactly as the file does; the critic starts
untrained and `learner.critic_warmup_iterations` fits it before the actor moves; a file whose inputs or outputs
mean something else in the run is refused with the reason."""

from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import torch

from surrogait_bringup.policies import policies_dir
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_train.cli import main
from surrogait_train.config import load_config
from surrogait_train.export import export_onnx
from surrogait_train.onnx_init import SETTLED_COUNT, PolicyFileMismatch
from surrogait_train.trainer import Trainer

PRETRAINED = policies_dir()


def raw_actions(policy_path: Path, obs: np.ndarray) -> np.ndarray:
    """The network's output for `obs` through onnxruntime (before the contract's action scaling)."""
    policy = OnnxPolicy(policy_path)
    return policy.session.run([policy.output_name], {policy.input_name: obs.astype(np.float32)})[0]


def test_the_shipped_policy_starts_a_run_and_acts_exactly_as_its_file(tmp_path):
    shipped = PRETRAINED / "go2_trot.onnx"
    cfg = load_config(PRETRAINED / "go2_trot.yaml", ["env.num_envs=4", "env.num_threads=1"])
    trainer = Trainer(cfg, tmp_path / "tune")
    trainer.init_from(shipped)

    env = trainer.env
    obs = env.observation(env.state, torch.zeros(env.num_envs, env.action_size))
    obs = torch.cat([obs, obs + torch.randn(obs.shape, generator=torch.Generator().manual_seed(0))])
    with torch.no_grad():
        ours = trainer.actor(obs).numpy()
    # float32 through two graphs: outputs reach ~1e3 on the perturbed inputs (inputs with a small std)
    np.testing.assert_allclose(ours, raw_actions(shipped, obs.numpy()), atol=1e-5, rtol=1e-4)
    # the file has no sample count: the statistics are taken as settled, not relearnt from the first window
    assert float(trainer.actor.normalizer.count) == SETTLED_COUNT


def test_an_exported_run_round_trips_through_its_file(tmp_path, tiny_overrides):
    trained = Trainer(load_config(None, tiny_overrides), tmp_path / "a")
    trained.train(max_iterations=2, progress=False)
    policy = export_onnx(trained.actor, trained.env.contract, tmp_path / "a.onnx")

    tuned = Trainer(load_config(None, tiny_overrides), tmp_path / "b")
    tuned.init_from(policy)
    for name, value in trained.actor.state_dict().items():
        if name != "normalizer.count":
            torch.testing.assert_close(tuned.actor.state_dict()[name], value, msg=name)


def test_the_critic_warms_up_before_the_actor_moves(tmp_path, tiny_overrides):
    trained = Trainer(load_config(None, tiny_overrides), tmp_path / "a")
    policy = export_onnx(trained.actor, trained.env.contract, tmp_path / "a.onnx")
    tuned = Trainer(load_config(None, [*tiny_overrides, "learner.critic_warmup_iterations=2"]), tmp_path / "b")
    tuned.init_from(policy)

    def actor_weights() -> torch.Tensor:
        return torch.cat([p.detach().flatten().clone() for p in tuned.actor.net.parameters()])

    start_actor = actor_weights()
    start_critic = torch.cat([p.detach().flatten().clone() for p in tuned.learner.critic.parameters()])
    stats = tuned.train(max_iterations=2, progress=False)
    assert stats.update_skipped
    assert torch.equal(actor_weights(), start_actor)
    assert not torch.equal(torch.cat([p.flatten() for p in tuned.learner.critic.parameters()]), start_critic)

    tuned.train(max_iterations=3, progress=False)
    assert not torch.equal(actor_weights(), start_actor)


def test_a_policy_for_another_robot_is_refused_with_the_fields_that_differ(tmp_path, tiny_overrides):
    trainer = Trainer(load_config(None, tiny_overrides), tmp_path / "go2")
    with pytest.raises(PolicyFileMismatch, match="robot: file 'go1', run 'go2'"):
        trainer.init_from(PRETRAINED / "go1_trot.onnx")


def test_a_network_of_other_sizes_is_refused_with_the_setting_that_fits_it(tmp_path, tiny_overrides):
    trainer = Trainer(load_config(None, tiny_overrides), tmp_path / "tiny")  # hidden [32, 32]
    with pytest.raises(PolicyFileMismatch, match=r"set learner.actor_hidden=\[256, 128, 64\]"):
        trainer.init_from(PRETRAINED / "go2_trot.onnx")


def test_the_command_line_starts_from_a_policy_file_and_says_why_it_cannot(tmp_path, tiny_overrides, capsys):
    trained = Trainer(load_config(None, tiny_overrides), tmp_path / "a")
    policy = export_onnx(trained.actor, trained.env.contract, tmp_path / "a.onnx")
    run = ["train", "--no-progress", *tiny_overrides, "max_iterations=1"]
    assert main([*run, "--run-dir", str(tmp_path / "b"), "--init-from", str(policy)]) == 0
    out = capsys.readouterr().out
    assert f"initialised networks from {policy}" in out and "learner.critic_warmup_iterations" in out

    assert main([*run, "--run-dir", str(tmp_path / "c"), "--init-from", str(PRETRAINED / "go1_trot.onnx")]) == 2
    assert "mean something else in this run" in capsys.readouterr().err


def test_a_policy_ppo_made_starts_a_run_and_the_note_says_how_to_keep_it_exact(tmp_path, capsys):
    rough = PRETRAINED / "go2_trot_rough.onnx"  # exported by the PPO baseline: rsl_rl's normaliser, no std floor
    overrides = ["env.num_envs=4", "env.num_threads=1", "learner.critic_warmup_iterations=5"]
    trainer = Trainer(load_config(PRETRAINED / "go2_trot_rough.yaml", overrides), tmp_path / "floored")
    trainer.init_from(rough)
    note = capsys.readouterr().out
    assert "under learner.obs_norm_min_std=0.1" in note
    keep = note.split("learner.obs_norm_min_std=")[-1].split()[0]

    exact = Trainer(load_config(PRETRAINED / "go2_trot_rough.yaml", [*overrides, f"learner.obs_norm_min_std={keep}"]),
                    tmp_path / "exact")  # fmt: skip
    exact.init_from(rough)
    assert "under learner.obs_norm_min_std" not in capsys.readouterr().out
    env = exact.env
    obs = env.observation(env.state, torch.zeros(env.num_envs, env.action_size))
    with torch.no_grad():
        np.testing.assert_allclose(exact.actor(obs).numpy(), raw_actions(rough, obs.numpy()), atol=1e-5)


def test_the_plain_trot_file_starts_a_multi_gait_run_with_its_gait_inputs_zero_weighted(tmp_path):
    shipped = PRETRAINED / "go2_trot_plain.onnx"  # a plain MLP: the multi-gait run's actor made plain to match
    gaits_config = Path(str(resources.files("surrogait_train") / "configs" / "go2_gaits.yaml"))
    plain = ["env.num_envs=4", "env.num_threads=1", "learner.residual_reference=false"]
    trainer = Trainer(load_config(gaits_config, plain), tmp_path / "gaits")
    trainer.init_from(shipped)

    env = trainer.env
    trot_inputs = OnnxPolicy(shipped).contract.obs_size
    obs = env.observation(env.state, torch.zeros(env.num_envs, env.action_size))
    assert obs.shape[1] > trot_inputs  # gait_params appended
    with torch.no_grad():
        ours = trainer.actor(obs).numpy()
    np.testing.assert_allclose(ours, raw_actions(shipped, obs[:, :trot_inputs].numpy()), atol=1e-5)


def test_a_file_whose_observation_the_run_does_not_only_append_to_is_refused(tmp_path):
    gaits_config = Path(str(resources.files("surrogait_train") / "configs" / "go2_gaits.yaml"))
    multi = Trainer(load_config(gaits_config, ["env.num_envs=4", "env.num_threads=1"]), tmp_path / "gaits")
    wide = export_onnx(multi.actor, multi.env.contract, tmp_path / "gaits.onnx")
    trot = Trainer(load_config(PRETRAINED / "go2_trot.yaml", ["env.num_envs=4", "env.num_threads=1"]), tmp_path / "t")
    with pytest.raises(PolicyFileMismatch, match="observation: file .*gait_params"):
        trot.init_from(wide)
