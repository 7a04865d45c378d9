"""PPO hyper-parameters as a plain dataclass, turned into rsl_rl's OnPolicyRunner config dict.

Defaults are the public legged-robot PPO recipe (legged_gym / rsl_rl ANYmal and Go2 configs):
24 steps per robot per iteration, 5 epochs of 4 mini-batches, Adam at 1e-3 with the adaptive
KL schedule (desired KL 0.01), clip 0.2, entropy 0.01, gamma 0.99, lambda 0.95, initial action
noise std 1.0, gradient-norm clip 1.0. The actor's hidden layers and activation default to the
differentiable trainer's (`LearnerConfig.actor_hidden`, ELU) so both learners train the same
network; see `from_train_config`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from surrogait_core.policy.contract import PolicyContract
from surrogait_train.ppo.symmetry import symmetry_cfg


@dataclasses.dataclass
class PPOConfig:
    num_steps_per_env: int = 24
    num_learning_epochs: int = 5
    num_mini_batches: int = 4
    learning_rate: float = 1e-3
    schedule: str = "adaptive"  # "adaptive" (KL-driven) or "fixed"
    desired_kl: float = 0.01
    clip_param: float = 0.2
    entropy_coef: float = 0.01
    value_loss_coef: float = 1.0
    use_clipped_value_loss: bool = True
    gamma: float = 0.99
    lam: float = 0.95
    max_grad_norm: float = 1.0
    init_noise_std: float = 1.0
    actor_hidden: list[int] = dataclasses.field(default_factory=lambda: [256, 128, 64])
    critic_hidden: list[int] = dataclasses.field(default_factory=lambda: [256, 128, 64])
    activation: str = "elu"
    obs_normalization: bool = True  # running mean/std inside the actor; exported into the ONNX
    save_interval: int = 50
    # weight of the left-right mirror loss (ppo/symmetry.py, as the differentiable trainer's learner.symmetry);
    # 0: none
    symmetry: float = 0.0

    def runner_cfg(self, contract: PolicyContract | None = None) -> dict[str, Any]:
        """The `train_cfg` dict rsl_rl 5.x's `OnPolicyRunner` expects. With `symmetry` > 0 the mirror loss
        needs the run's `contract` (its mirrors are derived from the observation and action terms)."""
        algorithm: dict[str, Any] = {
            "class_name": "PPO",
            "num_learning_epochs": self.num_learning_epochs,
            "num_mini_batches": self.num_mini_batches,
            "learning_rate": self.learning_rate,
            "schedule": self.schedule,
            "desired_kl": self.desired_kl,
            "clip_param": self.clip_param,
            "entropy_coef": self.entropy_coef,
            "value_loss_coef": self.value_loss_coef,
            "use_clipped_value_loss": self.use_clipped_value_loss,
            "gamma": self.gamma,
            "lam": self.lam,
            "max_grad_norm": self.max_grad_norm,
        }
        if self.symmetry > 0:
            if contract is None:
                raise ValueError("PPOConfig.symmetry > 0 needs the run's contract: runner_cfg(contract)")
            algorithm["symmetry_cfg"] = symmetry_cfg(contract, self.symmetry)
        return {
            "num_steps_per_env": self.num_steps_per_env,
            "save_interval": self.save_interval,
            "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
            "actor": {
                "class_name": "MLPModel",
                "hidden_dims": list(self.actor_hidden),
                "activation": self.activation,
                "obs_normalization": self.obs_normalization,
                "distribution_cfg": {
                    "class_name": "GaussianDistribution",
                    "init_std": self.init_noise_std,
                    "std_type": "scalar",
                },
            },
            "critic": {
                "class_name": "MLPModel",
                "hidden_dims": list(self.critic_hidden),
                "activation": self.activation,
                "obs_normalization": self.obs_normalization,
            },
            "algorithm": algorithm,
            "logger": "tensorboard",
            "check_for_nan": True,
        }


def from_train_config(train_cfg: Any, **overrides: Any) -> PPOConfig:
    """PPO config sharing the differentiable trainer's actor network (and discount) for a fair comparison."""
    learner = getattr(train_cfg, "learner", None)
    base: dict[str, Any] = {}
    if learner is not None:
        base["actor_hidden"] = list(learner.actor_hidden)
        base["critic_hidden"] = list(learner.actor_hidden)
        base["gamma"] = float(learner.gamma)
        base["lam"] = float(learner.lam)
    base.update(overrides)
    return PPOConfig(**base)


def apply_overrides(cfg: PPOConfig, overrides: list[str]) -> PPOConfig:
    """`key=value` overrides (values parsed as YAML scalars/lists), e.g. `entropy_coef=0.005`."""
    import yaml

    names = {f.name: f for f in dataclasses.fields(PPOConfig)}
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"PPO override {item!r} must look like key=value (e.g. learning_rate=5e-4)")
        key, text = item.split("=", 1)
        key = key.strip().removeprefix("ppo.")
        if key not in names:
            raise ValueError(f"unknown PPO config key {key!r}; valid keys: {', '.join(names)}")
        value = yaml.safe_load(text)
        current = getattr(cfg, key)
        if isinstance(current, float) and isinstance(value, int | float):
            value = float(value)
        elif type(current) is not type(value):
            raise ValueError(f"PPO config key {key} expects a {type(current).__name__}, got {value!r}")
        setattr(cfg, key, value)
    return cfg
