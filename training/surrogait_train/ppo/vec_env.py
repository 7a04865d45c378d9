"""rsl_rl `VecEnv` adapter around the differentiable trainer's batched MuJoCo environment.

PPO must see exactly what the differentiable-simulation learner sees: the same robots, the
same contract observations, the same reward terms and gait clock. So this adapter adds no
task logic of its own; it only changes the *shape* of the interface:

- observations become a `TensorDict` with one group, `"policy"` (the contract's observation
  vector, as the deployed policy will receive it), used by both actor and critic;
- the reward and done flags become detached float tensors of shape (num_envs,);
- `extras["time_outs"]` marks resets caused by the episode time limit, so PPO bootstraps
  those instead of treating them as failures;
- `extras["log"]` forwards the environment's diagnostics (scalars, and means of per-robot
  values such as tracking errors and falls, kept as tensors so that no step waits for a GPU)
  to rsl_rl's logger;
- everything it hands rsl_rl is on the learner's `device`, the actions it hands the environment on the
  environment's (a copy each way per step where the two differ; none where they are one device).

PPO collects samples under `torch.inference_mode()`, so the surrogate's gradient graph is
never built while PPO steps the environment.
"""

from __future__ import annotations

from typing import Any

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

# Names an environment may use in its step info for "reset because the episode ran out of time".
_TIMEOUT_KEYS = ("time_outs", "timeouts", "time_out", "timeout", "truncated")


class RslRlVecEnv(VecEnv):
    """Presents a `LocomotionEnv`-like environment as an rsl_rl `VecEnv`.

    The wrapped environment (`surrogait_train.env.LocomotionEnv`) has `num_envs`, `obs_size`,
    `action_size`, `max_episode_steps`, `reset(seed) -> obs` and
    `step(actions) -> (obs, reward, done, info)` with torch tensors; it resets finished robots
    inside `step` (the returned observation of a reset robot is its new episode's first) and
    marks truncations in `info["time_out"]`.
    """

    def __init__(self, env: Any, seed: int = 0, max_episode_length: int | None = None, cfg: Any = None,
                 device: torch.device | str = "cpu"):
        self.env = env
        self.num_envs = int(env.num_envs)
        self.num_actions = int(env.action_size)
        self.num_obs = int(env.obs_size)
        self.device = torch.device(device)  # the learner's
        self.env_device = torch.device(getattr(env, "device", "cpu"))
        self.cfg = cfg if cfg is not None else getattr(env, "cfg", {})
        self.max_episode_length = int(max_episode_length or _episode_length_steps(env))
        # Steps since each robot's last reset, counted here so the adapter does not depend on
        # the environment's private counters (rsl_rl may overwrite it for randomised starts).
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self.env_steps = 0  # total robot-steps taken through this adapter: the sample budget
        self._obs = self._as_obs(env.reset(seed))

    def get_observations(self) -> TensorDict:
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        if actions.shape != (self.num_envs, self.num_actions):
            raise ValueError(
                f"actions have shape {tuple(actions.shape)}, "
                f"the environment expects ({self.num_envs}, {self.num_actions})"
            )
        obs, reward, done, info = self.env.step(actions.detach().to(self.env_device, torch.float32))
        self.env_steps += self.num_envs
        done = _flat(done).to(self.device, torch.bool)
        self.episode_length_buf += 1
        self.episode_length_buf[done] = 0
        self._obs = self._as_obs(obs)
        time_outs = _time_outs(info, done, self.num_envs).to(self.device)
        extras: dict[str, Any] = {"time_outs": time_outs, "log": _scalar_log(info)}
        return self._obs, _flat(reward).to(self.device, torch.float32), done.to(torch.long), extras

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()

    def _as_obs(self, obs: torch.Tensor) -> TensorDict:
        obs = torch.as_tensor(obs).detach().to(self.device, torch.float32)
        if obs.shape != (self.num_envs, self.num_obs):
            raise ValueError(
                f"environment returned observations of shape {tuple(obs.shape)}, "
                f"expected ({self.num_envs}, {self.num_obs})"
            )
        return TensorDict({"policy": obs}, batch_size=[self.num_envs])


def _flat(x: Any) -> torch.Tensor:
    return torch.as_tensor(x).detach().reshape(-1)


def _episode_length_steps(env: Any) -> int:
    """The environment's episode limit in policy steps, from its config."""
    for name in ("max_episode_length", "episode_length_steps", "max_episode_steps"):
        value = getattr(env, name, None)
        if value is not None:
            return int(value)
    cfg = getattr(env, "cfg", None)
    env_cfg = getattr(cfg, "env", cfg)
    length_s = getattr(env_cfg, "episode_length_s", None)
    control_dt = getattr(getattr(env, "contract", None), "control_dt_s", None)
    if length_s is None or control_dt is None:
        raise ValueError("cannot tell the episode length: pass max_episode_length= to RslRlVecEnv")
    return int(round(length_s / control_dt))


def _time_outs(info: dict, done: torch.Tensor, num_envs: int) -> torch.Tensor:
    """Which resets were time-limit truncations (not falls); zeros if the environment does not say."""
    for key in _TIMEOUT_KEYS:
        if key in info:
            return (_flat(info[key]).to(done.device, torch.bool) & done).to(torch.float32)
    return torch.zeros(num_envs, dtype=torch.float32, device=done.device)


def _scalar_log(info: dict) -> dict[str, float | torch.Tensor]:
    """Scalar diagnostics from the step info, namespaced for rsl_rl's logger ("/" keys are logged as-is)."""
    log: dict[str, float | torch.Tensor] = {}
    for key, value in info.items():
        if key in _TIMEOUT_KEYS:
            continue
        if isinstance(value, dict):  # e.g. the env's per-term reward means
            log.update({k.replace("Env/", f"Env/{key}/", 1): v for k, v in _scalar_log(value).items()})
        elif isinstance(value, int | float):
            log[f"Env/{key}"] = float(value)
        elif isinstance(value, torch.Tensor) and value.dim() <= 1:  # per-robot values: their mean (0-dim)
            log[f"Env/{key}"] = value.detach().float().mean()
    return log
