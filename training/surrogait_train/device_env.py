"""The device-resident locomotion environment: `LocomotionEnv`'s robots, task and API, kept on one device.

`env.backend=mjx env.device=cuda` (or `cpu`, for tests) selects it (devices.make_env). Where the host
environment (env.py) keeps its robots' states in NumPy and copies them to JAX's device and back every
control step, here nothing leaves the device in the steady state:

- the physics state (qpos, qvel) lives on the device; each control step hands it with the joint targets
  to MJX (`MjxPhysics.resident_step`) as JAX arrays that share the torch tensors' memory (DLPack, no
  copy), and takes the new state back the same way;
- the policy-side state, rewards (rewards.compute_rewards), observations (the contract's
  ObservationBuilder), the gait clock and reference, and the surrogate's inputs are torch on the device;
- resets, command sampling, domain randomisation (each robot's variation is a row of parameters the
  physics turns into its model fields on the device: mjx_physics.varied_fields), pushes, observation
  noise and the terrain curriculum are branch-free masked tensor operations drawn from one torch
  generator on the device: no Python decision reads a device value, so no step waits for the device;
- terrain: every course's height grid is a tensor on the device; the ground under the base and the feet
  is a bilinear lookup there (surrogait_core.terrain.Terrain.height_at's), and MJX's height field comes
  from a table of the courses' elevations indexed per robot.

The same physics, task and formulas as the host environment: from the same state with the same actions
both give the same trajectories, rewards and observations (tests/training/test_device_env.py states the
tolerances). Random draws come from a different generator (torch's, not NumPy's), so the two
environments' resets and noise are alike in distribution, not in value; `copy_from(host_env)` starts
this one from a host environment's robots for a side-by-side comparison.

Differences of form: `info["terms"]` and `info["terrain_difficulty"]` hold 0-dim tensors on the device
(float() them once per iteration, not every step); `base_position_w()` returns a tensor;
`info["terminal_obs"]` is always the observation before the automatic reset (the host environment
computes it only when a robot is done).
"""

from __future__ import annotations

import copy
import dataclasses

import jax
import numpy as np
import torch

from surrogait_core.policy.observation import ObservationBuilder
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.terrain import COURSE_END_X, COURSE_WIDTH_M, TERRAINS, X_RANGE, make_terrain, set_terrain_heights
from surrogait_train.config import ConfigError, EnvConfig, RandomizationConfig, RewardConfig
from surrogait_train.devices import env_device, jax_device_name
from surrogait_train.env import (
    LocomotionEnv,
    Transition,
    curriculum_levels,
    dealt_course_kinds,
    gait_command_ranges,
    make_contract,
)
from surrogait_train.gaits import GaitBatch, named_gait_flags
from surrogait_train.kinematics import LegKinematics
from surrogait_train.mjx_physics import MjxPhysics
from surrogait_train.model_variants import apply_model_variant
from surrogait_train.physics import build_pd_model, leg_dofs
from surrogait_train.randomization import RobotVariation, validate
from surrogait_train.rewards import compute_rewards, gait_reference
from surrogait_train.state import RobotState, robot_state_from_qpos
from surrogait_train.surrogate import RobotDynamics

NOISE_TERMS = (  # observation term, RandomizationConfig field with its noise std
    ("base_lin_vel_b", "base_lin_vel_noise_m_s"),
    ("base_ang_vel_b", "gyro_noise_rad_s"),
    ("projected_gravity_b", "gravity_noise"),
    ("joint_pos_rel", "joint_pos_noise_rad"),
    ("joint_vel", "joint_vel_noise_rad_s"),
)


def to_jax(tensor: torch.Tensor) -> jax.Array:
    """A torch tensor as a JAX array on the same device, sharing its memory (DLPack)."""
    return jax.dlpack.from_dlpack(tensor.contiguous())


def to_torch(array: jax.Array) -> torch.Tensor:
    """A JAX array as a torch tensor on the same device, sharing its memory (DLPack). Not to be written in place."""
    return torch.from_dlpack(array)


class DeviceLocomotionEnv:
    """N robots on one device; `LocomotionEnv`'s API (see the module docstring for the differences of form)."""

    def __init__(
        self,
        cfg: EnvConfig,
        reward_cfg: RewardConfig | None = None,
        seed: int = 0,
        randomization: RandomizationConfig | None = None,
    ):
        if cfg.backend != "mjx":
            raise ConfigError(f"the device-resident environment steps MJX: env.backend=mjx, not {cfg.backend!r}")
        self.cfg = cfg
        self.device = env_device(cfg)
        if cfg.mjx_device:
            raise ConfigError(f"env.mjx_device={cfg.mjx_device!r} with env.device={cfg.device!r}: the device-resident "
                              "environment's physics runs on env.device; leave env.mjx_device empty")
        self.randomization = randomization if randomization is not None and randomization.enabled else None
        if self.randomization is not None:
            validate(self.randomization, cfg.physics_dt_s, cfg.substeps)
            if self.randomization.ground_tilt_deg:
                raise ConfigError("randomization.ground_tilt_deg: the device-resident environment has level ground "
                                  "only (one gravity for every robot); tilt the ground with env.backend=cpu")
        if cfg.course_heading_gain:
            raise ConfigError("env.course_heading_gain: the device-resident environment does not steer robots along "
                              "their courses yet; use env.backend=cpu")
        self.reward_cfg = reward_cfg or RewardConfig()
        self.spec = load_robot_spec(cfg.robot)
        self.contract = make_contract(cfg)
        self.gait = self.contract.gait
        self.multi_gait = bool(self.contract.gaits)
        self.builder = ObservationBuilder(self.contract)
        self.num_envs = n = cfg.num_envs
        self.obs_size = self.contract.obs_size
        self.action_size = self.contract.action_size
        self.control_dt = self.contract.control_dt_s
        self.max_episode_steps = int(round(cfg.episode_length_s / self.control_dt))
        self.resample_steps = max(1, int(round(cfg.command_resample_s / self.control_dt)))
        dev = self.device
        f32 = lambda x: torch.tensor(np.asarray(x), dtype=torch.float32, device=dev)  # noqa: E731
        self.kp, self.kd = f32(self.contract.kp), f32(self.contract.kd)

        if cfg.terrain not in ("mixed", *TERRAINS):
            raise ValueError(f"env.terrain {cfg.terrain!r}: expected one of {', '.join(TERRAINS)} or mixed")
        if self.reward_cfg.torque_limits_at != "period_end":
            raise ValueError(f"reward.torque_limits_at={self.reward_cfg.torque_limits_at}: the device-resident "
                             "environment charges the torque at each period's end only (period_end); the "
                             "physics steps' peak needs the CPU environment (env.backend=cpu)")
        self.terrain_levels = curriculum_levels(cfg)
        self.mixed_terrain = cfg.terrain == "mixed"
        # the courses, in the order of their rows in the tables: (kind, level) for mixed terrain, else the one
        if cfg.terrain == "flat":
            courses = []
        elif self.mixed_terrain:
            courses = [make_terrain(kind, cfg.terrain_seed + level, difficulty, cfg.terrain_cell_m)
                       for kind in TERRAINS for level, difficulty in enumerate(self.terrain_levels)]
        else:
            courses = [make_terrain(cfg.terrain, cfg.terrain_seed, cfg.terrain_difficulty, cfg.terrain_cell_m)]
        self.terrain = courses[0] if courses else None  # the model's own layout (as LocomotionEnv's `terrain`)
        layout = make_terrain("flat", cfg.terrain_seed, 1.0, cfg.terrain_cell_m) if self.mixed_terrain else self.terrain
        self.model = build_pd_model(
            self.spec, np.asarray(self.contract.kp), np.asarray(self.contract.kd), cfg.physics_dt_s, layout
        )
        apply_model_variant(cfg.model_variant, self.model)
        self.physics = MjxPhysics(self.model, cfg.substeps, jax_device_name(dev), cfg.mjx_float64)
        self.dtype = torch.float64 if cfg.mjx_float64 else torch.float32  # the physics state's
        self.physics.set_nominal_gains(self.kp.double().cpu().numpy(), self.kd.double().cpu().numpy())
        if courses:
            self._course_heights = torch.tensor(np.stack([c.heights for c in courses]), dtype=torch.float64, device=dev)
            scratch = copy.copy(self.model)
            elevations = []
            for course in courses:
                set_terrain_heights(scratch, course)
                elevations.append(scratch.hfield_data.copy())
            self.physics.set_course_table(np.stack(elevations))
        self.kinematics = LegKinematics(self.model).to(dev)
        self.action_scale = f32(self.contract.action.scale)
        self.action_offset = f32(self.contract.action.offset)
        self.torque_limit = f32(self.spec.joint_torque_limit)
        self.default_joint_pos = f32(self.contract.default_joint_pos)
        self.soft_joint_pos_lower = f32(self.contract.soft_joint_pos_lower)
        self.soft_joint_pos_upper = f32(self.contract.soft_joint_pos_upper)
        with torch.no_grad():
            self.nominal_feet_b = self.kinematics(self.default_joint_pos)[0]  # (4, 3)
        self.total_mass_kg = self.spec.total_mass_kg
        # constants of the step, on the device once (a tensor made from host data every step would be a copy)
        self._sdk_from_model = torch.as_tensor(self.spec.sdk_from_model, device=dev)
        self._standing_qpos = torch.tensor(self.spec.standing_qpos, dtype=self.dtype, device=dev)
        self._default_targets = torch.tensor(self.spec.default_joint_pos, dtype=self.dtype, device=dev)
        gaits = self.contract.gaits or (self.gait,)
        table = [[g.period_s, g.duty_factor, g.swing_height_m, *g.phase_offsets] for g in gaits]
        self._gait_table = torch.tensor(table, dtype=torch.float64, device=dev)  # (G, 7)
        self._gait_table_f32 = self._gait_table.float()
        flags = named_gait_flags("env.balance_step_pitch_gaits", cfg.balance_step_pitch_gaits, self.contract.gaits)
        # (G, 1): the gaits whose reference takes the pitch term (LocomotionEnv.pitch_stance); None: every gait's
        self._pitch_stance_flags = (None if flags.all() else
                                    torch.tensor(flags, dtype=torch.float32, device=dev).unsqueeze(-1))
        self._gait_vx = torch.tensor(gait_command_ranges(cfg), dtype=torch.float64, device=dev)  # (G, 2)
        self._command_low = torch.tensor([cfg.lin_vel_x[0], cfg.lin_vel_y[0], cfg.ang_vel_yaw[0]], device=dev)
        self._command_high = torch.tensor([cfg.lin_vel_x[1], cfg.lin_vel_y[1], cfg.ang_vel_yaw[1]], device=dev)
        self._terrain_levels = torch.tensor(self.terrain_levels, dtype=torch.float64, device=dev)
        r = self.randomization
        self._noise = [(term, getattr(r, key)) for term, key in NOISE_TERMS if getattr(r, key) > 0] if r else []
        # robots per course kind (mixed terrain: env.terrain_kinds dealt in turn), for the curriculum's per-kind means
        kinds = dealt_course_kinds(cfg.terrain_kinds, n)
        self._kinds_present = [(k, name) for k, name in enumerate(TERRAINS) if (kinds == k).any()]
        self._kind_counts = torch.tensor(np.bincount(kinds, minlength=len(TERRAINS)), dtype=torch.float64, device=dev)

        self.generator = torch.Generator(device=dev).manual_seed(seed)
        self.qpos = self._standing_qpos.expand(n, -1).clone()  # (N, nq) the physics' state, model order
        self.qvel = torch.zeros(n, self.model.nv, dtype=self.dtype, device=dev)
        self.episode_step = torch.zeros(n, dtype=torch.int64, device=dev)
        self.commands = torch.zeros(n, 3, device=dev)
        self.last_action = torch.zeros(n, self.action_size, device=dev)
        self.state: RobotState | None = None
        self.held_targets = self._default_targets.expand(n, -1).clone()
        # gravity straight down for every robot, made once: a tensor from host data each step would be a transfer
        self._level_gravity = torch.tensor([0.0, 0.0, -1.0], dtype=self.dtype, device=self.device).repeat(n, 1)
        self.variation = self._nominal_variation()
        self._variation_params: torch.Tensor | None = None  # (N, 9) mjx_physics.VARIATION_PARAMS
        self._delay = torch.zeros(n, dtype=torch.int32, device=dev)
        self._varied = self.randomization is not None  # whether the physics takes per-robot variations
        # whether the surrogate is told the leg joints' passive terms (where they are randomised), and the nominal ones
        r = self.randomization
        self._passive = bool(r is not None and (r.joint_damping or r.joint_friction_loss))
        legs = leg_dofs(self.model)
        self._nominal_passive = (float(self.model.dof_damping[legs].mean()),
                                 float(self.model.dof_frictionloss[legs].mean()))
        self._apply_variation()
        self.next_push_step = torch.full((n,), np.iinfo(np.int64).max, dtype=torch.int64, device=dev)
        self.gait_index = torch.zeros(n, dtype=torch.int64, device=dev)
        self.gait_phase = torch.zeros(n, dtype=torch.float64, device=dev)
        self.start_phase = torch.zeros(n, dtype=torch.float64, device=dev)  # cycles (EnvConfig.random_start_phase)
        self.terrain_kind = torch.as_tensor(kinds, device=dev)
        self.terrain_level = torch.zeros(n, dtype=torch.int64, device=dev)
        if self.mixed_terrain and cfg.terrain_start_level_max > 0:
            self.terrain_level = self._randint(cfg.terrain_start_level_max + 1, n)
        self.crossed = torch.zeros(n, dtype=torch.bool, device=dev)

    # ----------------------------------------------------------------- public API (LocomotionEnv's)
    def reset(self, seed: int | None = None, randomize_episode_start: bool = True) -> torch.Tensor:
        if seed is not None:
            self.generator.manual_seed(seed)
        everyone = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self._reset_where(everyone, ~everyone)
        if randomize_episode_start:  # stagger time-outs so resets do not all happen at once
            slots = self._randint(self.max_episode_steps // self.resample_steps, self.num_envs)
            self.episode_step = slots * self.resample_steps
        self.state = self._sim_state()
        return self.observation(self.state, self.last_action)

    def step(self, actions: torch.Tensor):
        with torch.no_grad():
            return self._step(actions, None)

    def phases(self, steps_ahead: int = 0) -> torch.Tensor:
        """Gait phase of every leg (N, 4) at the current time of each episode (plus `steps_ahead` steps)."""
        return self._leg_phases(steps_ahead).float()

    def _leg_phases(self, steps_ahead: int = 0) -> torch.Tensor:
        """The phases in float64 (the clock's features are computed from these, as LocomotionEnv's)."""
        if self.multi_gait:
            gait = self._gait_table[self.gait_index]
            cycles = self.gait_phase + steps_ahead * self.control_dt / gait[:, 0]
            return torch.remainder(cycles[:, None] + gait[:, 3:7], 1.0)
        gait = self._gait_table[0]
        time_s = (self.episode_step + steps_ahead).double() * self.control_dt + self.start_phase * gait[0]
        return torch.remainder(time_s[:, None] / gait[0] + gait[3:7], 1.0)

    def gait_batch(self) -> GaitBatch:
        """Each robot's gait (a multi-gait policy's)."""
        t = self._gait_table_f32[self.gait_index]
        return GaitBatch(period_s=t[:, 0:1], duty_factor=t[:, 1:2], phase_offsets=t[:, 3:7], swing_height_m=t[:, 2:3])

    def _reward_gait(self):
        return self.gait_batch() if self.multi_gait else self.gait

    def raw_terms(self, state: RobotState, last_action: torch.Tensor) -> dict[str, torch.Tensor]:
        """Raw observation terms (contract names, SDK order, body frame) before scaling."""
        angle = 2.0 * torch.pi * self._leg_phases()  # surrogait_core.policy.gait.clock_features
        clock = torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1).float()
        extra = {"gait_params": self.gait_batch().features()} if self.multi_gait else {}
        return {
            **extra,
            "base_lin_vel_b": state.base_lin_vel_b,
            "base_ang_vel_b": state.base_ang_vel_b,
            "projected_gravity_b": state.projected_gravity_b,
            "command": self.commands,
            "joint_pos_rel": state.joint_pos - self.default_joint_pos,
            "joint_vel": state.joint_vel,
            "last_action": last_action,
            "gait_clock": clock,
        }

    def observation(self, state: RobotState, last_action: torch.Tensor,
                    noise: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """The contract's observation; with randomisation, plus sensor noise (`noise`, or a fresh draw)."""
        terms = self.raw_terms(state, last_action)
        if self.randomization is not None:  # detached, so gradients pass through unchanged
            noise = self.observation_noise() if noise is None else noise
            for name, value in noise.items():
                terms[name] = terms[name] + value
        return self.builder.build(terms)

    def observation_noise(self) -> dict[str, torch.Tensor]:
        """One step's zero-mean sensor noise for every robot, keyed by observation term (randomization.py's)."""
        sizes = {"joint_pos_rel": self.action_size, "joint_vel": self.action_size}
        return {name: std * torch.randn(self.num_envs, sizes.get(name, 3), generator=self.generator,
                                        device=self.device) for name, std in self._noise}

    def appended_obs_stats(self, first_term: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance over the robots, as they are now, of the observation's terms from `first_term` on."""
        start = sum(t.size for t in self.contract.observation[:first_term])
        obs = self.builder.build(self.raw_terms(self.state, torch.zeros_like(self.last_action)))[:, start:]
        return obs.mean(0), obs.var(0, unbiased=False)

    def set_variation(self, variation: RobotVariation) -> None:
        """Give every robot these physical parameters (NumPy or torch, N rows) from now on."""
        if bool((torch.as_tensor(variation.gravity_dir_w)[:, 2] > -1.0).any()):
            raise ValueError("the device-resident environment has level ground only: a tilted gravity needs "
                             "env.backend=cpu")
        self.variation = RobotVariation(**{
            f.name: torch.as_tensor(getattr(variation, f.name)).to(
                self.device, torch.int64 if f.name == "action_delay_steps" else self.dtype, copy=True)
            for f in dataclasses.fields(RobotVariation)
        })  # fmt: skip
        self._varied = True
        self._passive = self._passive or not bool(
            torch.isnan(self.variation.joint_damping).all() and torch.isnan(self.variation.joint_friction_loss).all())
        self._apply_variation()

    def push_base(self, rows: torch.Tensor | np.ndarray, velocity_b: torch.Tensor | np.ndarray) -> None:
        """Kick the bases of robots `rows` (a mask over the robots): add `velocity_b` (k, 3), m/s, heading frame."""
        mask = torch.as_tensor(np.asarray(rows) if isinstance(rows, np.ndarray) else rows, device=self.device)
        full = torch.zeros(self.num_envs, 3, dtype=self.dtype, device=self.device)
        full[mask] = torch.as_tensor(np.asarray(velocity_b), dtype=self.dtype, device=self.device)
        self._kick(mask, full)

    def robot_dynamics(self) -> RobotDynamics:
        """What the surrogate needs to know of each robot for the coming step (LocomotionEnv.robot_dynamics)."""
        v = self.variation
        passive = {}
        if self._passive:  # the leg joints' passive terms, where varied (LocomotionEnv.robot_dynamics)
            damping, friction_loss = self._nominal_passive
            passive = {
                "joint_damping": torch.where(v.joint_damping.isnan(), damping, v.joint_damping).float().unsqueeze(-1),
                "joint_friction_loss": torch.where(v.joint_friction_loss.isnan(), friction_loss,
                                                   v.joint_friction_loss).float().unsqueeze(-1),
            }  # fmt: skip
        return RobotDynamics(
            kp=self.kp * v.kp_scale.float().unsqueeze(-1),
            kd=self.kd * v.kd_scale.float().unsqueeze(-1),
            added_mass_kg=v.added_base_mass_kg.float(),
            delay_substeps=v.action_delay_steps,
            held_targets=self.held_targets.float(),
            ground_under_feet_m=self.foot_ground_offset(self.state),
            **passive,
        )

    @torch.no_grad()
    def reference_action(self) -> torch.Tensor:
        """LocomotionEnv.reference_action: the IK of the clock's foot reference one control step ahead (N, 12)."""
        ref_xy, ref_height, _ = gait_reference(
            self._reward_gait(), self.phases(steps_ahead=1), self.commands, self.nominal_feet_b,
            self.spec.foot_radius_m, self.cfg.stand_speed_m_s, swing_profile=self.cfg.gait_swing_profile,
        )  # fmt: skip
        z = self.nominal_feet_b[:, 2] + ref_height - self.spec.foot_radius_m
        q_ref = self.kinematics.inverse(torch.cat([ref_xy, z.unsqueeze(-1)], dim=-1), self.default_joint_pos)
        return (q_ref - self.action_offset) / self.action_scale

    joint_targets = LocomotionEnv.joint_targets
    foot_friction = LocomotionEnv.foot_friction

    def close(self) -> None:
        self.physics.close()

    def rng_state(self) -> torch.Tensor:
        """The state of this environment's random generator (a checkpoint's)."""
        return self.generator.get_state()

    def set_rng_state(self, state) -> None:
        self.generator.set_state(state)

    def base_position_w(self) -> torch.Tensor:
        """Each robot's base position in the world (N, 3), m."""
        return self.qpos[:, 0:3].clone()

    def ground_height(self) -> torch.Tensor:
        """The ground's height (m) under each robot's base, on its own course."""
        return self._ground_at(self.qpos[:, 0].double(), self.qpos[:, 1].double()).float()

    @torch.no_grad()
    def foot_ground_offset(self, state: RobotState) -> torch.Tensor | None:
        """(N, 4) the ground under each foot minus the ground under the base (m); None on flat ground."""
        if self.terrain is None:
            return None
        qpos = self.qpos.double()
        pos, quat = qpos[:, None, 0:3], qpos[:, None, 3:7]
        feet_b = self.kinematics(state.joint_pos)[0].double()  # (N, 4, 3)
        u = quat[..., 1:].expand_as(feet_b)
        t = 2.0 * torch.cross(u, feet_b, dim=-1)
        feet_w = pos + feet_b + quat[..., :1] * t + torch.cross(u, t, dim=-1)  # R(q) p + base position
        base = self._ground_at(qpos[:, 0], qpos[:, 1])
        return (self._ground_at(feet_w[..., 0], feet_w[..., 1]) - base[:, None]).float()

    def copy_from(self, host: LocomotionEnv) -> None:
        """Take over a host environment's robots as they are now (state, commands, clocks, variations, courses):
        the two then step alike (side-by-side tests and benches). Copies from the host: not for the hot path."""
        layout = host.physics.layout
        as_dev = lambda x, dtype: torch.tensor(np.asarray(x), dtype=dtype, device=self.device)  # noqa: E731  (a copy)
        self.qpos = as_dev(host._mj_state[:, layout.qpos], self.dtype)
        self.qvel = as_dev(host._mj_state[:, layout.qvel], self.dtype)
        self.episode_step = as_dev(host.episode_step, torch.int64)
        self.commands = host.commands.detach().to(self.device, torch.float32, copy=True)
        self.last_action = host.last_action.detach().to(self.device, torch.float32, copy=True)
        self.held_targets = as_dev(host.held_targets, self.dtype)
        self.next_push_step = as_dev(host.next_push_step, torch.int64)
        self.gait_index = as_dev(host.gait_index, torch.int64)
        self.gait_phase = as_dev(host.gait_phase, torch.float64)
        self.start_phase = as_dev(host.start_phase, torch.float64)
        self.terrain_kind = as_dev(host.terrain_kind, torch.int64)
        self.terrain_level = as_dev(host.terrain_level, torch.int64)
        self.crossed = as_dev(host.crossed, torch.bool)
        if self._varied or host.randomization is not None or host.physics.models is not None:
            self.set_variation(host.variation)
        self.state = self._sim_state()

    # ----------------------------------------------------------------- internals
    def _randint(self, high: int, n: int) -> torch.Tensor:
        return torch.randint(0, high, (n,), generator=self.generator, device=self.device)

    def _uniform(self, low, high, shape: tuple[int, ...], dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """Uniform draws in [low, high) (numbers or tensors that broadcast against `shape`)."""
        u = torch.rand(shape, generator=self.generator, device=self.device, dtype=dtype)
        return low + (high - low) * u

    def _nominal_variation(self) -> RobotVariation:
        n, dev, dtype = self.num_envs, self.device, self.dtype
        return RobotVariation(
            friction=torch.full((n,), self.foot_friction(), dtype=dtype, device=dev),
            added_base_mass_kg=torch.zeros(n, dtype=dtype, device=dev),
            base_com_offset_m=torch.zeros(n, 3, dtype=dtype, device=dev),
            kp_scale=torch.ones(n, dtype=dtype, device=dev),
            kd_scale=torch.ones(n, dtype=dtype, device=dev),
            action_delay_steps=torch.zeros(n, dtype=torch.int64, device=dev),
            joint_damping=torch.full((n,), torch.nan, dtype=dtype, device=dev),
            joint_friction_loss=torch.full((n,), torch.nan, dtype=dtype, device=dev),
            gravity_dir_w=self._level_gravity,
        )

    def _sample_variation(self) -> RobotVariation:
        """randomization.sample_variation, for every robot, on the device."""
        r, n, dtype = self.randomization, self.num_envs, self.dtype
        delay_s = self._uniform(*r.action_delay_s, (n,))
        return RobotVariation(
            friction=self._uniform(*r.friction, (n,), dtype),
            added_base_mass_kg=self._uniform(*r.added_base_mass_kg, (n,), dtype),
            base_com_offset_m=self._uniform(-r.base_com_offset_m, r.base_com_offset_m, (n, 3), dtype),
            kp_scale=self._uniform(*r.kp_scale, (n,), dtype),
            kd_scale=self._uniform(*r.kd_scale, (n,), dtype),
            action_delay_steps=torch.round(delay_s / self.cfg.physics_dt_s).to(torch.int64),
            joint_damping=self._uniform(*r.joint_damping, (n,), dtype) if r.joint_damping
            else torch.full((n,), torch.nan, dtype=dtype, device=self.device),
            joint_friction_loss=self._uniform(*r.joint_friction_loss, (n,), dtype) if r.joint_friction_loss
            else torch.full((n,), torch.nan, dtype=dtype, device=self.device),
            gravity_dir_w=self._level_gravity,
        )

    def variation_params(self) -> torch.Tensor:
        """Each robot's row of mjx_physics.VARIATION_PARAMS (N, 9): its variation as the physics takes it."""
        v = self.variation
        return torch.cat([v.friction[:, None], v.added_base_mass_kg[:, None], v.base_com_offset_m,
                          v.kp_scale[:, None], v.kd_scale[:, None], v.joint_damping[:, None],
                          v.joint_friction_loss[:, None]], dim=1).to(self.dtype)

    def _apply_variation(self) -> None:
        """The physics' per-robot inputs from `self.variation` (kept until the variation changes)."""
        self._delay = self.variation.action_delay_steps.to(torch.int32)
        if self._varied:
            self._variation_params = self.variation_params()

    def _push_intervals(self) -> torch.Tensor:
        """randomization.sample_push_interval_steps for every robot."""
        steps = torch.round(self._uniform(*self.randomization.push_interval_s, (self.num_envs,)) / self.control_dt)
        return steps.clamp(min=1).to(torch.int64)

    def _push_due_robots(self) -> None:
        """Kick the robots whose push is due (randomization.sample_push), and draw their next push."""
        due = self.episode_step >= self.next_push_step
        n, r = self.num_envs, self.randomization
        angle = self._uniform(0.0, 2 * np.pi, (n,), self.dtype)
        speed = r.push_velocity_m_s * torch.sqrt(self._uniform(0.0, 1.0, (n,), self.dtype))
        kick = torch.stack([speed * torch.cos(angle), speed * torch.sin(angle), torch.zeros_like(angle)], -1)
        self._kick(due, kick)
        self.next_push_step = torch.where(due, self.episode_step + self._push_intervals(), self.next_push_step)

    def _kick(self, mask: torch.Tensor, velocity_b: torch.Tensor) -> None:
        """Add heading-frame velocities (N, 3) to the bases of the robots in `mask` (LocomotionEnv.push_base)."""
        w, x, y, z = self.qpos[:, 3:7].unbind(-1)
        yaw = torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        c, s = torch.cos(yaw), torch.sin(yaw)
        v = velocity_b.to(self.dtype)
        world = torch.stack([c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1], v[:, 2]], -1)
        kicked = torch.cat([self.qvel[:, 0:3] + world, self.qvel[:, 3:]], dim=1)
        self.qvel = torch.where(mask[:, None], kicked, self.qvel)

    def _course(self) -> torch.Tensor:
        """Each robot's row of the course tables (N,)."""
        if not self.mixed_terrain:
            return torch.zeros_like(self.terrain_kind)
        return self.terrain_kind * len(self.terrain_levels) + self.terrain_level

    def _ground_at(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Ground heights (m, float64) at world points (x, y) of shape (N, ...): row i on robot i's course;
        surrogait_core.terrain.Terrain.height_at's bilinear lookup, on the device."""
        grid = self.terrain
        count, ny, nx = self._course_heights.shape
        fx = ((x - grid.x0) / grid.cell_m).clamp(0, nx - 1)
        fy = ((y - grid.y0) / grid.cell_m).clamp(0, ny - 1)
        ix, iy = fx.to(torch.int64).clamp(max=nx - 2), fy.to(torch.int64).clamp(max=ny - 2)
        tx, ty = fx - ix, fy - iy
        flat = self._course_heights.reshape(count, ny * nx)
        course = self._course().reshape(-1, *([1] * (x.dim() - 1))).expand_as(ix)
        h = lambda dy, dx: flat[course, (iy + dy) * nx + ix + dx]  # noqa: E731
        return (1 - ty) * ((1 - tx) * h(0, 0) + tx * h(0, 1)) + ty * ((1 - tx) * h(1, 0) + tx * h(1, 1))

    def _terrain_difficulty(self) -> dict[str, torch.Tensor]:
        """Each course kind's robots' mean curriculum difficulty (0-dim tensors)."""
        difficulty = self._terrain_levels[self.terrain_level]
        sums = torch.zeros(len(TERRAINS), dtype=torch.float64, device=self.device).index_add_(
            0, self.terrain_kind, difficulty)
        means = sums / self._kind_counts.clamp(min=1)
        return {name: means[k] for k, name in self._kinds_present}

    def _sim_state(self) -> RobotState:
        state = robot_state_from_qpos(self.qpos, self.qvel, self._sdk_from_model)
        if self.terrain is not None:  # the height above the ground under the base, not above z = 0
            state = dataclasses.replace(state, base_height=state.base_height - self.ground_height())
        return state

    def advance_physics(self, joint_targets: torch.Tensor) -> tuple[RobotState, torch.Tensor]:
        """Step MJX one policy period towards new joint targets (N, 12) on the device; returns the new state and
        foot touch (N, 4). A robot with an action delay of d physics steps holds its previous targets for the
        first d."""
        targets = joint_targets.detach().to(self.dtype)
        variation = to_jax(self._variation_params) if self._varied else None
        course = to_jax(self._course().to(torch.int32)) if self.terrain is not None and self.mixed_terrain else None
        qpos, qvel, touch = self.physics.resident_step(
            to_jax(self.qpos), to_jax(self.qvel), to_jax(targets), to_jax(self.held_targets), to_jax(self._delay),
            variation, course,
        )  # fmt: skip
        self.qpos, self.qvel = to_torch(qpos), to_torch(qvel)
        self.held_targets = targets
        return self._sim_state(), to_torch(touch).to(torch.float32, copy=True)

    def _step(self, actions: torch.Tensor, transition: Transition | None):
        clip = self.contract.action.clip
        actions = actions.clamp(-clip, clip)
        targets = self.joint_targets(actions)
        prev = self.state
        if self.randomization is not None:
            self._push_due_robots()  # a kick during this period: the policy sees its effect, not the kick
        dynamics = self.robot_dynamics() if transition is not None else None
        sim, touch = self.advance_physics(targets)
        state = sim if transition is None else transition(prev, targets, sim, touch, dynamics)
        self.episode_step = self.episode_step + 1
        if self.mixed_terrain:
            self.crossed = self.crossed | (self.qpos[:, 0] >= COURSE_END_X)
        if self.multi_gait:
            self.gait_phase = self.gait_phase + self.control_dt / self._gait_table[self.gait_index, 0]

        reward, terms = compute_rewards(
            state, actions, self.last_action, targets, self.commands, self.phases(), self._reward_gait(),
            self.kinematics, self.nominal_feet_b, self.spec.foot_radius_m, self.kp, self.kd, self.torque_limit,
            self.default_joint_pos, (self.soft_joint_pos_lower, self.soft_joint_pos_upper), self.reward_cfg,
            self.control_dt, self.foot_ground_offset(state), self.cfg.stand_speed_m_s, term_means_on_host=False,
            balance_step_gains=self.cfg.balance_step_gains, swing_profile=self.cfg.gait_swing_profile,
            pitch_stance=None if self._pitch_stance_flags is None else self._pitch_stance_flags[self.gait_index],
        )  # fmt: skip
        fell = (sim.base_height < self.cfg.fall_height_m) | (sim.projected_gravity_b[:, 2] > self.cfg.fall_tilt_gz)
        if self.reward_cfg.fall != 0.0:
            reward = reward + self.reward_cfg.fall * fell.float()
            terms["fall"] = self.reward_cfg.fall * fell.float().mean()
        time_out = (self.episode_step >= self.max_episode_steps) & ~fell
        if self.terrain is not None:  # near the course's edges or end: a new episode, before it walks off
            x, y = self.qpos[:, 0], self.qpos[:, 1]
            off = (x > X_RANGE[1] - 1.0) | (y.abs() > COURSE_WIDTH_M / 2 - 0.3)
            time_out = time_out | (off & ~fell)
        done = fell | time_out
        noise = self.observation_noise() if self.randomization is not None else None
        with torch.no_grad():
            lin_err = (self.commands[:, :2] - sim.base_lin_vel_b[:, :2]).norm(dim=-1)
            yaw_err = (self.commands[:, 2] - sim.base_ang_vel_b[:, 2]).abs()
            terminal_obs = self.observation(state.detach(), actions.detach(), noise)  # before the automatic reset
        info = {
            "fell": fell,
            "time_out": time_out,
            "terminal_obs": terminal_obs,
            "terms": terms,
            "lin_vel_error": lin_err,
            "yaw_rate_error": yaw_err,
            "touch": touch,
        }
        self.last_action = actions
        resample = (torch.remainder(self.episode_step, self.resample_steps) == 0) & ~done
        if self.multi_gait and self.cfg.gait_switch_prob > 0:
            switch = resample & (torch.rand(self.num_envs, generator=self.generator, device=self.device)
                                 < self.cfg.gait_switch_prob)
            self.gait_index = torch.where(switch, self._randint(len(self.contract.gaits), self.num_envs),
                                          self.gait_index)
        if self.mixed_terrain:  # legged_gym's curriculum: up after crossing, down after a fall short of it
            info["terrain_difficulty"] = self._terrain_difficulty()  # how far up each course's robots are
            up = (done & self.crossed).long()
            down = (done & fell & ~self.crossed).long()
            self.terrain_level = (self.terrain_level + up - down).clamp(0, len(self.terrain_levels) - 1)
        self._reset_where(done, resample)
        state = state.where(done, self._sim_state())
        self.state = state
        obs = self.observation(state, self.last_action, noise)
        return obs, reward, done, info

    def _reset_where(self, rows: torch.Tensor, resample: torch.Tensor) -> None:
        """New episodes for the robots in `rows` (N,) bool, and new commands for those and the ones in `resample`.

        Every draw is made for every robot and kept where the mask says: the same work whoever resets, and no
        decision on the host."""
        n, cfg = self.num_envs, self.cfg
        r1 = rows[:, None]
        noise = self._uniform(-1.0, 1.0, (n, 12), self.dtype) * cfg.init_joint_noise_rad
        fresh_qpos = torch.cat([self._standing_qpos[:7].expand(n, -1), self._standing_qpos[7:] + noise], dim=1)
        self.qpos = torch.where(r1, fresh_qpos, self.qpos)
        self.qvel = torch.where(r1, torch.zeros_like(self.qvel), self.qvel)
        self.episode_step = torch.where(rows, torch.zeros_like(self.episode_step), self.episode_step)
        self.held_targets = torch.where(r1, self._default_targets, self.held_targets)
        if cfg.random_start_phase:
            fresh_phase = torch.rand(n, generator=self.generator, device=self.device, dtype=torch.float64)
            self.start_phase = torch.where(rows, fresh_phase, self.start_phase)
        if self.multi_gait:
            self.gait_index = torch.where(rows, self._randint(len(self.contract.gaits), n), self.gait_index)
            self.gait_phase = torch.where(rows, self.start_phase, self.gait_phase)
        if self.mixed_terrain:
            self.crossed = self.crossed & ~rows
        if self.randomization is not None:
            fresh = self._sample_variation()
            self.variation = RobotVariation(**{
                f.name: torch.where(rows.view(-1, *[1] * (getattr(fresh, f.name).dim() - 1)),
                                    getattr(fresh, f.name), getattr(self.variation, f.name))
                for f in dataclasses.fields(RobotVariation)
            })  # fmt: skip
            self._apply_variation()
            self.next_push_step = torch.where(rows, self._push_intervals(), self.next_push_step)
        # not in place: last_action may be part of the autograd graph of a differentiable rollout
        self.last_action = torch.where(r1, 0.0, self.last_action)
        self.commands = torch.where((rows | resample)[:, None], self._sample_commands(), self.commands)

    def _sample_commands(self) -> torch.Tensor:
        """LocomotionEnv._sample_commands for every robot: uniform in the ranges (a multi-gait robot's forward
        speed in its gait's range), and zero for a share `zero_command_prob`."""
        n = self.num_envs
        cmd = self._uniform(self._command_low.double(), self._command_high.double(), (n, 3))
        if self.multi_gait:
            vx = self._gait_vx[self.gait_index]
            cmd = torch.cat([self._uniform(vx[:, 0], vx[:, 1], (n,))[:, None], cmd[:, 1:]], dim=1)
        still = torch.rand(n, generator=self.generator, device=self.device) < self.cfg.zero_command_prob
        return torch.where(still[:, None], 0.0, cmd).float()
