"""PPO's mirror loss (`--ppo symmetry=W`): the actor is asked for pi(mirror(o)) = mirror(pi(o)), as the
differentiable trainer's `learner.symmetry` asks, so a PPO fine-tune need not come out lopsided."""

import torch

from surrogait_train.config import load_config
from surrogait_train.ppo.config import from_train_config
from surrogait_train.ppo.train import PPOSession
from surrogait_train.symmetry import action_mirror, mirror_difference, observation_mirror

SMALL = ["env.num_envs=8", "env.num_threads=1", "seed=3"]


def mirror_error(session: PPOSession, obs: torch.Tensor) -> float:
    mirrors = observation_mirror(session.contract), action_mirror(session.contract)
    with torch.no_grad():
        return float(mirror_difference(lambda o: session.actor({"policy": o}), obs, *mirrors).square().mean())


def test_the_mirror_loss_makes_the_ppo_actor_more_symmetric_than_ppo_alone():
    torch.set_num_threads(1)
    cfg = load_config(None, SMALL)
    errors = {}
    for weight in (0.0, 50.0):
        ppo = from_train_config(cfg, num_steps_per_env=8, num_mini_batches=1, learning_rate=1e-3, symmetry=weight)
        session = PPOSession(cfg, ppo)
        try:
            obs = session.vec_env.get_observations()["policy"].clone()
            before = mirror_error(session, obs)
            session.learn(3)
            errors[weight] = mirror_error(session, obs) / before
        finally:
            session.close()
    assert errors[50.0] < 0.5 * errors[0.0], errors
