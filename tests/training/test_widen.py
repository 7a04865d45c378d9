"""A trained single-gait policy starts a multi-gait run: `--init-from` carries its networks over when the
new run's observation only appends terms (gait_params), and the widened actor acts exactly as the trained
one did until training teaches it what the new inputs mean."""

import pytest
import torch

from surrogait_train.cli import main
from surrogait_train.config import load_config
from surrogait_train.trainer import Trainer
from surrogait_train.widen import ObservationMismatch, appended_size

GAITS = ["env.gaits=[trot,pace,bound,gallop]", "env.gait_lin_vel_x=[[0.0,1.0],[0.0,1.0],[0.5,1.5],[0.5,1.5]]"]
# Plain networks: a residual actor's gait reference reads the gait inputs by design (the feet follow the gait),
# so only its network part would ignore them (tests/training/test_gait_reference.py covers the reference).
PLAIN = ["learner.residual_reference=false"]


@pytest.fixture
def tiny_overrides(tiny_overrides):
    return [*tiny_overrides, *PLAIN]


def trained_trot(tmp_path, tiny_overrides) -> Trainer:
    trainer = Trainer(load_config(None, tiny_overrides), tmp_path / "trot")
    trainer.train(max_iterations=2, progress=False)
    trainer.save_checkpoint()
    return trainer


def test_a_multi_gait_run_starts_from_a_trot_policy_and_acts_as_it(tmp_path, tiny_overrides):
    trot = trained_trot(tmp_path, tiny_overrides)
    gaits = Trainer(load_config(None, [*tiny_overrides, *GAITS]), tmp_path / "gaits")
    gaits.init_from(trot.run_dir / "checkpoint.pt")

    old_size, new_size = trot.env.obs_size, gaits.env.obs_size
    assert new_size == old_size + 6
    env = gaits.env
    obs = env.observation(env.state, torch.zeros(env.num_envs, env.action_size))  # the robots init_from saw
    with torch.no_grad():
        widened = gaits.actor(obs)
        original = trot.actor(obs[:, :old_size])
        # whatever the gait inputs say, the first action is the trot policy's
        scrambled = obs.clone()
        scrambled[:, old_size:] = torch.randn(len(obs), 6)
        assert torch.allclose(gaits.actor(scrambled), widened)
    torch.testing.assert_close(widened, original)
    # the new inputs are normalised at their own scale: the gaits' values over the robots
    mean = gaits.actor.normalizer.mean[old_size:]
    torch.testing.assert_close(mean, obs[:, old_size:].mean(0))


def test_a_checkpoint_whose_observation_is_not_a_prefix_is_refused(tmp_path, tiny_overrides):
    gaits = Trainer(load_config(None, [*tiny_overrides, *GAITS]), tmp_path / "gaits")
    gaits.save_checkpoint()
    trot = Trainer(load_config(None, tiny_overrides), tmp_path / "trot")
    with pytest.raises(ObservationMismatch, match="only terms appended at the end"):
        trot.init_from(gaits.run_dir / "checkpoint.pt")
    assert appended_size(trot.env.contract.observation, gaits.env.contract.observation) == 6


def test_the_command_line_says_why_it_cannot_start_from_such_a_checkpoint(tmp_path, tiny_overrides, capsys):
    gaits = Trainer(load_config(None, [*tiny_overrides, *GAITS]), tmp_path / "gaits")
    gaits.save_checkpoint()
    code = main(["train", "--run-dir", str(tmp_path / "trot"), "--init-from", str(gaits.run_dir / "checkpoint.pt"),
                 *tiny_overrides, "max_iterations=1"])
    assert code == 2 and "only terms appended at the end can be added" in capsys.readouterr().err
