"""Where training runs: the environment's and the learner's torch devices, chosen once in the config.

- `env.device` "" (the default): the host environment (env.py), NumPy bookkeeping and CPU torch, on either
  physics backend. A torch device name ("cpu", "cuda", "cuda:1") with `env.backend=mjx`: the device-resident
  environment (device_env.py) on that device, its MJX physics on JAX's device of the same kind and index.
- `learner.device` "": the environment's device. SHAC differentiates through the environment's step, so its
  learner must be where the environment is; PPO's learner may sit elsewhere (its adapter then copies every
  step's observations and actions across).

A device that is asked for and absent is refused with what was asked, what exists and what to do.
"""

from __future__ import annotations

import torch

from surrogait_train.config import ConfigError, EnvConfig, RandomizationConfig, RewardConfig, TrainConfig


def torch_device(name: str, key: str) -> torch.device:
    """The torch device `name` of config key `key`; a ConfigError when it does not exist here."""
    try:
        device = torch.device(name)
    except RuntimeError as e:
        raise ConfigError(f"{key}={name!r} is not a device name ({e}); use cpu, cuda or cuda:N") from None
    if device.type == "cpu":
        return device
    if device.type != "cuda":
        raise ConfigError(f"{key}={name!r}: only cpu and cuda[:N] devices are supported")
    if not torch.cuda.is_available():
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU-only"
        raise ConfigError(
            f"{key}={name!r}: torch finds no CUDA device on this machine (torch {torch.__version__}, a {build} "
            f"build; devices here: cpu). Train on the CPU ({key}=cpu, or leave it empty), or run on a machine "
            "with an NVIDIA GPU and its driver, a CUDA build of torch and JAX with CUDA (the training image's "
            "CUDA variant: docker build -f docker/train.Dockerfile --build-arg CUDA=1)"
        )
    count = torch.cuda.device_count()
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index >= count:
        raise ConfigError(f"{key}={name!r}: this machine has {count} CUDA device(s), cuda:0 to cuda:{count - 1}")
    return torch.device("cuda", index)


def device_resident(env_cfg: EnvConfig) -> bool:
    """True where `env_cfg` asks for the device-resident environment (device_env.py)."""
    if env_cfg.device in ("", "cpu") and env_cfg.backend == "cpu":
        return False
    if env_cfg.device and env_cfg.backend != "mjx":
        raise ConfigError(
            f"env.device={env_cfg.device!r} needs env.backend=mjx: the cpu backend (MuJoCo C) steps the robots in "
            "host memory; leave env.device empty for it, or set env.backend=mjx"
        )
    return bool(env_cfg.device)


def env_device(env_cfg: EnvConfig) -> torch.device:
    """The torch device of the environment's tensors: env.device's, or the CPU for the host environment."""
    return torch_device(env_cfg.device, "env.device") if device_resident(env_cfg) else torch.device("cpu")


def jax_device_name(device: torch.device) -> str:
    """The JAX device (mjx_physics's naming) that holds the same memory as torch's `device`."""
    return "cpu" if device.type == "cpu" else f"gpu:{device.index or 0}"


def learner_device(cfg: TrainConfig, same_as_env: bool = True) -> torch.device:
    """learner.device ("" = the environment's). With `same_as_env` (SHAC) another device than the environment's
    is refused."""
    env = env_device(cfg.env)
    if not cfg.learner.device:
        return env
    device = torch_device(cfg.learner.device, "learner.device")
    if same_as_env and device != env:
        raise ConfigError(
            f"learner.device={cfg.learner.device!r} but the environment's tensors are on {env} (env.device="
            f"{cfg.env.device!r}): SHAC's gradients run through the environment's step, so both need one device. "
            f"Set env.device={cfg.learner.device} with env.backend=mjx (the device-resident environment), or "
            "leave learner.device empty"
        )
    return device


def make_env(
    env_cfg: EnvConfig,
    reward_cfg: RewardConfig | None = None,
    seed: int = 0,
    randomization: RandomizationConfig | None = None,
):
    """The environment `env_cfg` asks for: the host `LocomotionEnv` or the device-resident one."""
    if device_resident(env_cfg):
        from surrogait_train.device_env import DeviceLocomotionEnv

        return DeviceLocomotionEnv(env_cfg, reward_cfg, seed=seed, randomization=randomization)
    from surrogait_train.env import LocomotionEnv

    return LocomotionEnv(env_cfg, reward_cfg, seed=seed, randomization=randomization)
