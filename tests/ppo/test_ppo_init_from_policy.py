"""PPO starts from an exported policy file, as the differentiable trainer's `--init-from POLICY.onnx` does, so
both learners can fine-tune one start on one task: rsl_rl's actor then acts as the file does, and its noise
is PPO's own."""

from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import torch

from surrogait_bringup.policies import policies_dir
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_train.config import load_config
from surrogait_train.onnx_init import PolicyFileMismatch
from surrogait_train.ppo.cli import main as ppo_main
from surrogait_train.ppo.config import from_train_config
from surrogait_train.ppo.init_from_policy import init_ppo_from_policy_file
from surrogait_train.ppo.train import PPOSession

PRETRAINED = policies_dir()
# PPO starts from the plain trot: the shipped go2_trot.onnx is a residual policy, which rsl_rl cannot carry
SHIPPED, SHIPPED_CONFIG = PRETRAINED / "go2_trot_plain.onnx", PRETRAINED / "go2_trot_plain.yaml"
SMALL = ["env.num_envs=4", "env.num_threads=1"]


@pytest.fixture
def session():
    torch.set_num_threads(1)
    cfg = load_config(SHIPPED_CONFIG, SMALL)
    session = PPOSession(cfg, from_train_config(cfg, init_noise_std=0.2, num_steps_per_env=4, num_mini_batches=1))
    yield session
    session.close()


def test_the_ppo_actor_acts_as_the_shipped_file_and_keeps_its_own_noise(session, tmp_path):
    init_ppo_from_policy_file(session, SHIPPED)
    obs = session.vec_env.get_observations()
    with torch.no_grad():
        ours = session.actor(obs).numpy()  # the deterministic mean action
    shipped = OnnxPolicy(SHIPPED)
    raw = shipped.session.run([shipped.output_name], {shipped.input_name: obs["policy"].numpy()})[0]
    np.testing.assert_allclose(ours, raw, atol=1e-5)
    # exported again, it is the same policy
    again = OnnxPolicy(session.export(tmp_path / "again.onnx"))
    np.testing.assert_allclose(again.act(obs["policy"].numpy()), shipped.act(obs["policy"].numpy()), atol=1e-5)
    torch.testing.assert_close(session.actor.distribution.std_param.detach(), torch.full((12,), 0.2))


def test_a_policy_for_another_robot_does_not_start_this_ppo_run(session):
    with pytest.raises(PolicyFileMismatch, match="robot: file 'go1', run 'go2'"):
        init_ppo_from_policy_file(session, PRETRAINED / "go1_trot.onnx")


def test_a_residual_policy_file_is_refused_with_what_to_do_instead(session):
    # the shipped go2_trot.onnx adds its gait reference inside the graph; rsl_rl's MLP alone would act otherwise
    with pytest.raises(PolicyFileMismatch, match="residual on the gait reference.*go2_trot_plain.onnx"):
        init_ppo_from_policy_file(session, PRETRAINED / "go2_trot.onnx")


def test_the_ppo_command_line_fine_tunes_a_policy_file(tmp_path, capsys):
    args = ["train", "--run-dir", str(tmp_path / "tune"), "--config", str(SHIPPED_CONFIG), "--iterations", "1",
            "--ppo", "num_steps_per_env=4", "num_mini_batches=1", "init_noise_std=0.2"]  # fmt: skip
    assert ppo_main([*args, "--init-from", str(SHIPPED), "--", *SMALL]) == 0
    assert f"actor initialised from {SHIPPED}" in capsys.readouterr().out
    assert OnnxPolicy(tmp_path / "tune" / "policy.onnx").contract.robot == "go2"

    missing = tmp_path / "missing.onnx"
    assert ppo_main([*args, "--init-from", str(missing), "--", *SMALL]) == 2
    assert "missing.onnx not found" in capsys.readouterr().err


def test_a_ppo_made_policy_starts_ppo_again_exactly(session):
    # go2_trot_rough.onnx was exported by this PPO baseline: its normaliser has no floor, and none is added
    rough = PRETRAINED / "go2_trot_rough.onnx"
    init_ppo_from_policy_file(session, rough)
    obs = session.vec_env.get_observations()
    with torch.no_grad():
        ours = session.actor(obs).numpy()
    np.testing.assert_allclose(ours, OnnxPolicy(rough).session.run(None, {"obs": obs["policy"].numpy()})[0], atol=1e-5)


def test_the_shipped_trot_file_starts_a_multi_gait_ppo_run_and_trots_as_before():
    # PPO's actor is a plain MLP (it refuses a residual file): the multi-gait config without its reference
    gaits_config = Path(str(resources.files("surrogait_train") / "configs" / "go2_gaits.yaml"))
    cfg = load_config(gaits_config, [*SMALL, "learner.residual_reference=false"])
    session = PPOSession(cfg, from_train_config(cfg, init_noise_std=0.2, num_steps_per_env=4, num_mini_batches=1))
    try:
        changed = init_ppo_from_policy_file(session, SHIPPED)
        assert changed[0] == "observation" and "gaits" in changed  # gait_params appended, zero-weighted
        obs = session.vec_env.get_observations()["policy"]
        trot_inputs = OnnxPolicy(SHIPPED).contract.obs_size
        assert obs.shape[1] > trot_inputs
        with torch.no_grad():
            ours = session.actor({"policy": obs}).numpy()
        shipped = OnnxPolicy(SHIPPED)
        raw = shipped.session.run([shipped.output_name], {shipped.input_name: obs[:, :trot_inputs].numpy()})[0]
        np.testing.assert_allclose(ours, raw, atol=1e-5)
    finally:
        session.close()
