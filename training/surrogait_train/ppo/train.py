"""PPO (rsl_rl's OnPolicyRunner) on the differentiable trainer's environment.

`PPOSession` owns one environment, the rsl_rl runner and the bookkeeping a sample-efficiency
comparison needs: env samples consumed (robot-steps) and seconds spent learning. Training is
advanced in chunks (`learn(iterations)`) so a caller can stop, export and evaluate between
chunks without that evaluation time counting as training time.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rsl_rl.runners import OnPolicyRunner

from surrogait_core.policy.provenance import make_provenance
from surrogait_train.ppo.config import PPOConfig
from surrogait_train.ppo.export import export_actor_onnx
from surrogait_train.ppo.vec_env import RslRlVecEnv
from surrogait_train.provenance import git_commit


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_env(train_cfg: Any) -> Any:
    """The differentiable trainer's environment, built from its own config (same robots, rewards, clock; on the
    host or resident on `env.device`: surrogait_train.devices)."""
    from surrogait_train.devices import make_env as make_train_env

    return make_train_env(train_cfg.env, train_cfg.reward, seed=train_cfg.seed, randomization=train_cfg.randomization)


class PPOSession:
    """One PPO training run: `learn(n)` iterations at a time, `export(path)` at any point.

    rsl_rl's networks and updates run on `learner.device` ("" = the environment's: devices.learner_device);
    where that is not the environment's device, the adapter copies observations and actions across every step.
    """

    def __init__(
        self,
        train_cfg: Any,
        ppo_cfg: PPOConfig,
        log_dir: Path | str | None = None,
        env: Any | None = None,
        seed: int | None = None,
    ):
        self.train_cfg = train_cfg
        self.ppo_cfg = ppo_cfg
        self.seed = int(train_cfg.seed if seed is None else seed)
        torch.set_num_threads(max(1, int(getattr(train_cfg, "torch_threads", 1))))
        seed_everything(self.seed)
        self.device = _learner_device(train_cfg)
        self.env = env if env is not None else make_env(train_cfg)
        self.vec_env = RslRlVecEnv(self.env, seed=self.seed, cfg=_cfg_dict(train_cfg, ppo_cfg), device=self.device)
        self.log_dir = str(log_dir) if log_dir is not None else None
        self.runner = OnPolicyRunner(self.vec_env, ppo_cfg.runner_cfg(self.env.contract), log_dir=self.log_dir,
                                     device=str(self.device))
        self.train_seconds = 0.0
        self.iterations = 0
        self.prior_stages: list[dict] = []  # the stages that made the policy this run started from (init_from)
        self.init_from_name: str | None = None

    @property
    def contract(self) -> Any:
        return self.env.contract

    @property
    def env_samples(self) -> int:
        """Robot-steps the learner has consumed so far (the sample budget both learners share)."""
        return self.vec_env.env_steps

    @property
    def samples_per_iteration(self) -> int:
        return self.ppo_cfg.num_steps_per_env * self.vec_env.num_envs

    def learn(self, iterations: int) -> None:
        if iterations <= 0:
            return
        start = time.perf_counter()
        self.runner.learn(iterations, init_at_random_ep_len=False)
        self.train_seconds += time.perf_counter() - start
        self.iterations += iterations
        # rsl_rl's learn() leaves current_learning_iteration at the last finished one; continue after it.
        self.runner.current_learning_iteration = self.iterations

    @property
    def actor(self) -> torch.nn.Module:
        return self.runner.alg.get_policy()

    def stage(self) -> dict:
        """This run as a provenance stage (surrogait_train.provenance)."""
        return {"learner": "ppo", "seed": self.seed, "iterations": self.iterations, "samples": self.env_samples,
                "wall_s": round(self.train_seconds, 1), "num_envs": self.vec_env.num_envs,
                "init_from": self.init_from_name}

    def export(self, path: Path | str) -> Path:
        provenance = make_provenance([*self.prior_stages, self.stage()], git_commit())
        return export_actor_onnx(self.actor, self.contract, path, provenance=provenance)

    def save(self, path: Path | str) -> None:
        """rsl_rl checkpoint (actor, critic, optimiser, normalisers) written atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".partial")
        self.runner.save(str(tmp), infos={"env_samples": self.env_samples, "train_seconds": self.train_seconds})
        tmp.replace(path)

    def load(self, path: Path | str) -> None:
        infos = self.runner.load(str(path), map_location=str(self.device)) or {}
        self.iterations = self.runner.current_learning_iteration
        self.vec_env.env_steps = int(infos.get("env_samples", 0))
        self.train_seconds = float(infos.get("train_seconds", 0.0))

    def close(self) -> None:
        self.vec_env.close()


def _learner_device(train_cfg: Any) -> torch.device:
    """learner.device of a trainer config (the environment's where empty); the CPU for other configs."""
    if not hasattr(train_cfg, "learner") or not hasattr(train_cfg, "env"):
        return torch.device("cpu")
    from surrogait_train.devices import learner_device

    return learner_device(train_cfg, same_as_env=False)


def _cfg_dict(train_cfg: Any, ppo_cfg: PPOConfig) -> dict[str, Any]:
    """What rsl_rl's logger stores as the environment config."""
    import dataclasses

    out: dict[str, Any] = {"ppo": dataclasses.asdict(ppo_cfg)}
    if dataclasses.is_dataclass(train_cfg):
        out["train"] = dataclasses.asdict(train_cfg)
    return out
