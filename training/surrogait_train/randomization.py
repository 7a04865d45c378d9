"""Domain randomisation: the ways a real robot differs from the simulated one, sampled per episode.

`RobotVariation` holds each robot's physical parameters for its current episode (arrays over
robots); `sample_variation` draws them from a `RandomizationConfig`, `RobotVariation.nominal` is
the model as it is. The environment applies a variation to the robot's own MuJoCo model copy
(physics.vary_model), delays its joint targets, and tells the surrogate the mass, gains and delay
(surrogate.RobotDynamics). Observation noise and pushes are per step (`observation_noise`,
`sample_push`). How each parameter enters and why: training/README.md, "Domain randomisation".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from surrogait_core.policy.contract import GaitSpec
from surrogait_train.config import ConfigError, RandomizationConfig
from surrogait_train.gaits import named_gait_flags

MAX_GROUND_TILT_DEG = 30.0  # steeper than any slope a quadruped policy is asked to walk


@dataclasses.dataclass
class RobotVariation:
    friction: np.ndarray  # (N,) foot-ground sliding friction coefficient
    added_base_mass_kg: np.ndarray  # (N,)
    base_com_offset_m: np.ndarray  # (N, 3) body frame
    kp_scale: np.ndarray  # (N,) motor strength: the robot's PD gains are the contract's times these
    kd_scale: np.ndarray  # (N,)
    action_delay_steps: np.ndarray  # (N,) int: physics steps before new joint targets reach the motors
    joint_damping: np.ndarray  # (N,) N m s/rad on every leg joint; NaN: the model's own
    joint_friction_loss: np.ndarray  # (N,) N m; NaN: the model's own
    gravity_dir_w: np.ndarray  # (N, 3) unit gravity direction, world frame: (0, 0, -1) on level ground

    @classmethod
    def nominal(cls, num_robots: int, friction: float) -> RobotVariation:
        n = num_robots
        return cls(
            friction=np.full(n, friction),
            added_base_mass_kg=np.zeros(n),
            base_com_offset_m=np.zeros((n, 3)),
            kp_scale=np.ones(n),
            kd_scale=np.ones(n),
            action_delay_steps=np.zeros(n, dtype=np.int64),
            joint_damping=np.full(n, np.nan),
            joint_friction_loss=np.full(n, np.nan),
            gravity_dir_w=np.tile([0.0, 0.0, -1.0], (n, 1)),
        )

    @property
    def ground_tilted(self) -> bool:
        """Whether any robot's gravity is tilted (a slope, `RandomizationConfig.ground_tilt_deg`)."""
        return bool(self.tilted().any())

    def tilted(self) -> np.ndarray:
        """Which robots' gravity is tilted (N,) bool."""
        return self.gravity_dir_w[:, 2] > -1.0

    def assign(self, rows: np.ndarray, other: RobotVariation) -> None:
        """Overwrite the robots `rows` (bool mask or indices) with `other`'s values (one per selected robot)."""
        for f in dataclasses.fields(self):
            getattr(self, f.name)[rows] = getattr(other, f.name)


def delay_steps(delay_s: np.ndarray | float, physics_dt_s: float) -> np.ndarray:
    """An action delay in whole physics steps (rounded): the resolution at which targets can arrive late."""
    return np.rint(np.asarray(delay_s) / physics_dt_s).astype(np.int64)


def validate(cfg: RandomizationConfig, physics_dt_s: float, substeps: int) -> None:
    """Refuse ranges the environment cannot realise, naming the key and what would work."""
    for name in ("friction", "added_base_mass_kg", "kp_scale", "kd_scale", "action_delay_s", "push_interval_s"):
        lo_hi = getattr(cfg, name)
        if len(lo_hi) != 2 or lo_hi[0] > lo_hi[1]:
            raise ConfigError(f"randomization.{name} must be [low, high] with low <= high, got {lo_hi}")
    for name in ("joint_damping", "joint_friction_loss"):
        lo_hi = getattr(cfg, name)
        if lo_hi and (len(lo_hi) != 2 or not 0 <= lo_hi[0] <= lo_hi[1]):
            raise ConfigError(f"randomization.{name} must be [] (the model's own) or [low, high] with "
                              f"0 <= low <= high, got {lo_hi}")
    if cfg.ground_tilt_deg and (len(cfg.ground_tilt_deg) != 2 or not 0 <= cfg.ground_tilt_deg[0]
                                <= cfg.ground_tilt_deg[1] <= MAX_GROUND_TILT_DEG):
        raise ConfigError(f"randomization.ground_tilt_deg must be [] (level ground) or [low, high] with "
                          f"0 <= low <= high <= {MAX_GROUND_TILT_DEG:g}, got {cfg.ground_tilt_deg}")
    if not 0.0 < cfg.ground_tilt_share <= 1.0:
        raise ConfigError(f"randomization.ground_tilt_share is the share of robots on a slope, in (0, 1]; got "
                          f"{cfg.ground_tilt_share}")
    if cfg.friction[0] <= 0 or cfg.kp_scale[0] <= 0 or cfg.kd_scale[0] < 0:
        raise ConfigError("randomization: friction and kp_scale must stay above 0, kd_scale at or above 0")
    if cfg.push_interval_s[0] <= 0:
        raise ConfigError(f"randomization.push_interval_s must be positive, got {cfg.push_interval_s}")
    control_dt = physics_dt_s * substeps
    if cfg.action_delay_s[0] < 0 or delay_steps(cfg.action_delay_s[1], physics_dt_s) > substeps:
        raise ConfigError(
            f"randomization.action_delay_s {cfg.action_delay_s} must lie in [0, {control_dt:g}] s: targets can be"
            " late by at most one control period (env.physics_dt_s x env.substeps)"
        )


def sample_variation(cfg: RandomizationConfig, rng: np.random.Generator, k: int, physics_dt_s: float) -> RobotVariation:
    """Draw `k` robots' episode parameters, each uniform in its configured range."""
    com = cfg.base_com_offset_m
    variation = RobotVariation(
        friction=rng.uniform(*cfg.friction, size=k),
        added_base_mass_kg=rng.uniform(*cfg.added_base_mass_kg, size=k),
        base_com_offset_m=rng.uniform(-com, com, size=(k, 3)),
        kp_scale=rng.uniform(*cfg.kp_scale, size=k),
        kd_scale=rng.uniform(*cfg.kd_scale, size=k),
        action_delay_steps=delay_steps(rng.uniform(*cfg.action_delay_s, size=k), physics_dt_s),
        joint_damping=np.full(k, np.nan),
        joint_friction_loss=np.full(k, np.nan),
        gravity_dir_w=np.tile([0.0, 0.0, -1.0], (k, 1)),
    )
    # drawn after the others and only when asked for, so configs without them keep their random streams
    if cfg.joint_damping:
        variation.joint_damping = rng.uniform(*cfg.joint_damping, size=k)
    if cfg.joint_friction_loss:
        variation.joint_friction_loss = rng.uniform(*cfg.joint_friction_loss, size=k)
    if cfg.ground_tilt_deg:
        variation.gravity_dir_w = tilted_gravity(rng.uniform(*np.radians(cfg.ground_tilt_deg), size=k),
                                                 rng.uniform(0, 2 * np.pi, size=k))
        if cfg.ground_tilt_share < 1.0:
            variation.gravity_dir_w[rng.random(k) >= cfg.ground_tilt_share] = (0.0, 0.0, -1.0)
    return variation


def untilted_gaits(cfg: RandomizationConfig, gaits: Sequence[GaitSpec]) -> np.ndarray:
    """The indices (into a multi-gait contract's `gaits`) of the gaits `cfg.ground_tilt_gaits` leaves on level
    ground; empty when every gait gets the slopes. ConfigError for a name the policy does not have."""
    return np.flatnonzero(~named_gait_flags("randomization.ground_tilt_gaits", cfg.ground_tilt_gaits, gaits))


def tilted_gravity(tilt_rad: np.ndarray, downhill_heading_rad: np.ndarray) -> np.ndarray:
    """Unit gravity directions (k, 3), world frame, for level ground that acts as a slope of `tilt_rad` falling
    away towards the world heading `downhill_heading_rad` (0: +x): gravity leans that way by the tilt."""
    s = np.sin(tilt_rad)
    return np.stack([s * np.cos(downhill_heading_rad), s * np.sin(downhill_heading_rad), -np.cos(tilt_rad)], -1)


def observation_noise(
    cfg: RandomizationConfig, rng: np.random.Generator, n: int, num_joints: int
) -> dict[str, np.ndarray]:
    """Zero-mean sensor noise for one step of `n` robots, keyed by observation term (contract names)."""
    sigma = {
        "base_lin_vel_b": (cfg.base_lin_vel_noise_m_s, 3),
        "base_ang_vel_b": (cfg.gyro_noise_rad_s, 3),
        "projected_gravity_b": (cfg.gravity_noise, 3),
        "joint_pos_rel": (cfg.joint_pos_noise_rad, num_joints),
        "joint_vel": (cfg.joint_vel_noise_rad_s, num_joints),
    }
    return {name: rng.normal(0.0, std, size=(n, size)) for name, (std, size) in sigma.items() if std > 0}


def sample_push_interval_steps(cfg: RandomizationConfig, rng: np.random.Generator, k: int, control_dt: float):
    """Control steps until each of `k` robots' next push."""
    return np.maximum(1, np.rint(rng.uniform(*cfg.push_interval_s, size=k) / control_dt)).astype(np.int64)


def sample_push(cfg: RandomizationConfig, rng: np.random.Generator, k: int) -> np.ndarray:
    """Horizontal base-velocity kicks (k, 3), world frame, m/s: uniform in a disc of radius push_velocity_m_s."""
    angle = rng.uniform(0, 2 * np.pi, size=k)
    speed = cfg.push_velocity_m_s * np.sqrt(rng.uniform(0, 1, size=k))
    return np.stack([speed * np.cos(angle), speed * np.sin(angle), np.zeros(k)], -1)
