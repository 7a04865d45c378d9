"""Batched Go2 velocity-tracking environment: N robots in MuJoCo, observations via the policy contract.

API (non-differentiable; also what a PPO baseline wraps):

    env = LocomotionEnv(EnvConfig(num_envs=64), RewardConfig(), seed=0, randomization=None)
    env.num_envs, env.obs_size, env.action_size, env.contract, env.max_episode_steps
    obs = env.reset(seed=0)                          # (N, obs_size) float32 torch tensor
    obs, reward, done, info = env.step(actions)      # actions (N, action_size) torch, contract units
        reward (N,), done (N,) bool; info["time_out"] (N,) bool (truncation, not failure),
        info["fell"] (N,) bool, info["terminal_obs"] (N, obs_size) observation before the
        automatic reset of done robots, info["terms"] {name: mean weighted reward term},
        info["lin_vel_error"], info["yaw_rate_error"] (N,) tracking errors; on mixed terrain
        info["terrain_difficulty"] {course: its robots' mean curriculum difficulty}.

Actions map to joint targets exactly as in deployment: targets = offset + scale * clip(a)
(`PolicyContract.action`, SDK order), clipped to the contract's soft joint range. The policy
runs at `physics_dt_s * substeps` (50 Hz by default); the joint PD runs inside every physics step
(see physics.py). Robots that fall or time out are reset in the same call; velocity commands
are resampled every `command_resample_s`. Observations come from `ObservationBuilder(contract)` on torch tensors.

With a `RandomizationConfig` that is enabled, every episode draws its robot's friction, base mass and
centre of mass, motor strength and action delay (randomization.py), the observation gets sensor
noise and the base is kicked every few seconds. `set_variation` / `push_base` impose the same
perturbations by hand (the robustness matrix, surrogait_train.conditions).

The differentiable path (diff_env.SurrogateRollout) calls `_step` with a transition function
that replaces MuJoCo's state values by an aligned surrogate state carrying gradients.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from surrogait_core.policy.contract import CommandRanges, PolicyContract
from surrogait_core.policy.gait import clock_features, leg_phases
from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.policy.observation import BASE_LIN_VEL_TERM, ObservationBuilder
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.terrain import (
    COURSE_END_X,
    COURSE_WIDTH_M,
    TERRAINS,
    X_RANGE,
    Terrain,
    make_terrain,
    set_terrain_heights,
)
from surrogait_core.wire.motor_driver_law import pd_torque
from surrogait_train.config import ConfigError, EnvConfig, RandomizationConfig, RewardConfig
from surrogait_train.gaits import GaitBatch, gait_by_name, named_gait_flags
from surrogait_train.kinematics import LegKinematics
from surrogait_train.model_variants import apply_model_variant
from surrogait_train.physics import build_pd_model, leg_dofs, make_physics, vary_model
from surrogait_train.randomization import (
    RobotVariation,
    observation_noise,
    sample_push,
    sample_push_interval_steps,
    sample_variation,
    untilted_gaits,
    validate,
)
from surrogait_train.rewards import SWING_PROFILES, TORQUE_LIMITS_AT, compute_rewards, gait_reference
from surrogait_train.state import RobotState, robot_state_from_mujoco
from surrogait_train.surrogate import RobotDynamics

# (previous state, joint targets, MuJoCo's new state, foot touch, the robots' dynamics) -> new state
Transition = Callable[[RobotState, torch.Tensor, RobotState, torch.Tensor, RobotDynamics], RobotState]


TERRAIN_LEVELS = tuple(EnvConfig().terrain_levels)  # the default curriculum's difficulties (surrogait_core.terrain)
# m: how far ahead of a foot's centre a riser counts as in its way: the foot's radius (2 cm) and about what a swinging
# foot travels in one control period (1.5 m/s for 20 ms)
RISER_LOOKAHEAD_M = 0.05


def dealt_course_kinds(kinds: list[str], num_robots: int) -> np.ndarray:
    """Mixed terrain: each robot's course kind (an index into TERRAINS), `kinds` dealt in turn ([] = all of them)."""
    kinds = kinds or list(TERRAINS)
    if unknown := [k for k in kinds if k not in TERRAINS]:
        raise ValueError(f"env.terrain_kinds: unknown {', '.join(map(repr, unknown))}; expected some of "
                         f"{', '.join(TERRAINS)}")
    return np.array([TERRAINS.index(k) for k in kinds])[np.arange(num_robots) % len(kinds)]


def curriculum_levels(cfg: EnvConfig) -> tuple[float, ...]:
    """Mixed terrain: the curriculum's difficulties (env.terrain_levels), checked, with the start level against them."""
    levels = tuple(float(d) for d in cfg.terrain_levels)
    if not levels or any(not 0.0 < d <= 1.0 for d in levels) or np.any(np.diff(levels) <= 0):
        raise ValueError(f"env.terrain_levels {list(cfg.terrain_levels)}: expected difficulties in (0, 1], "
                         "easiest first, each harder than the last (e.g. [0.5, 0.6, 0.7, 0.8, 0.9, 1.0])")
    if not 0 <= cfg.terrain_start_level_max < len(levels):
        raise ValueError(f"env.terrain_start_level_max {cfg.terrain_start_level_max}: expected 0.."
                         f"{len(levels) - 1} (an index into the curriculum's levels {list(levels)})")
    return levels


def gait_command_ranges(cfg: EnvConfig) -> list[tuple[float, float]]:
    """Each gait's commanded forward-speed range (m/s), in `cfg.gaits` order (lin_vel_x where not given)."""
    if not cfg.gaits:
        return [tuple(cfg.lin_vel_x)]
    ranges = [tuple(r) for r in cfg.gait_lin_vel_x] or [tuple(cfg.lin_vel_x)] * len(cfg.gaits)
    if len(ranges) != len(cfg.gaits) or any(len(r) != 2 or r[0] > r[1] for r in ranges):
        raise ValueError(f"env.gait_lin_vel_x needs one [low, high] per gait of env.gaits {cfg.gaits}, got "
                         f"{cfg.gait_lin_vel_x}")
    return ranges


def make_contract(cfg: EnvConfig) -> PolicyContract:
    spec = load_robot_spec(cfg.robot)
    vx = gait_command_ranges(cfg)  # a multi-gait policy's contract takes the union of its gaits' ranges
    lin_vel_x = (float(min(r[0] for r in vx)), float(max(r[1] for r in vx)))
    ranges = CommandRanges(lin_vel_x, tuple(cfg.lin_vel_y), tuple(cfg.ang_vel_yaw))
    gait = gait_by_name(cfg.gait)
    if cfg.gait_period_s > 0:
        gait = dataclasses.replace(gait, period_s=cfg.gait_period_s)
    if cfg.gait_swing_height_m > 0:
        gait = dataclasses.replace(gait, swing_height_m=cfg.gait_swing_height_m)
    contract = make_locomotion_contract(
        spec,
        gaits=[gait_by_name(name) for name in cfg.gaits],
        gait=gait,
        command_ranges=ranges,
        control_dt_s=cfg.physics_dt_s * cfg.substeps,
        kp=cfg.kp,
        kd=cfg.kd,
        soft_joint_range_fraction=cfg.soft_joint_range_fraction,
    )
    if cfg.observe_base_lin_vel:
        contract = dataclasses.replace(contract, observation=(*contract.observation, BASE_LIN_VEL_TERM))
    return contract


class LocomotionEnv:
    def __init__(
        self,
        cfg: EnvConfig,
        reward_cfg: RewardConfig | None = None,
        seed: int = 0,
        randomization: RandomizationConfig | None = None,
    ):
        self.cfg = cfg
        self.randomization = randomization if randomization is not None and randomization.enabled else None
        if self.randomization is not None:
            validate(self.randomization, cfg.physics_dt_s, cfg.substeps)
            if self.randomization.ground_tilt_deg and cfg.terrain != "flat":
                raise ConfigError(f"randomization.ground_tilt_deg tilts level ground; with env.terrain={cfg.terrain!r} "
                                  "the course has its own slopes: leave one of them out")
        self.reward_cfg = reward_cfg or RewardConfig()
        self.spec = load_robot_spec(cfg.robot)
        self.contract = make_contract(cfg)
        self.gait = self.contract.gait
        # Multi-gait: each robot's gait (index into contract.gaits) and its clock's phase (cycles), which
        # runs on at the gait's own rate, across switches.
        self.multi_gait = bool(self.contract.gaits)
        if self.randomization is not None:
            self._untilted_gaits = untilted_gaits(self.randomization, self.contract.gaits)
        # (G,) 1 for the gaits whose reference takes the balance step's pitch term (EnvConfig.balance_step_pitch_gaits)
        self._pitch_stance_flags = named_gait_flags("env.balance_step_pitch_gaits", cfg.balance_step_pitch_gaits,
                                                    self.contract.gaits).astype(np.float32)
        self._gait_periods = np.array([g.period_s for g in self.contract.gaits])  # (G,) s
        self._gait_offsets = np.array([g.phase_offsets for g in self.contract.gaits]).reshape(-1, 4)  # (G, 4)
        self.gait_vx_ranges = np.array(gait_command_ranges(cfg))
        self.builder = ObservationBuilder(self.contract)
        self.num_envs = cfg.num_envs
        self.obs_size = self.contract.obs_size
        self.action_size = self.contract.action_size
        self.control_dt = self.contract.control_dt_s
        self.max_episode_steps = int(round(cfg.episode_length_s / self.control_dt))
        self.resample_steps = max(1, int(round(cfg.command_resample_s / self.control_dt)))
        self.kp = torch.tensor(self.contract.kp, dtype=torch.float32)  # (12,) per joint, SDK order
        self.kd = torch.tensor(self.contract.kd, dtype=torch.float32)

        # "mixed": every robot its own course (kind and curriculum level) on its own model copy; the flat
        # course only lays out the height field's grid.
        if cfg.terrain not in ("mixed", *TERRAINS):
            raise ValueError(f"env.terrain {cfg.terrain!r}: expected one of {', '.join(TERRAINS)} or mixed")
        if cfg.gait_swing_profile not in SWING_PROFILES:
            raise ValueError(f"env.gait_swing_profile {cfg.gait_swing_profile!r}: expected one of "
                             f"{', '.join(SWING_PROFILES)}")
        if self.reward_cfg.torque_limits_at not in TORQUE_LIMITS_AT:
            raise ValueError(f"reward.torque_limits_at {self.reward_cfg.torque_limits_at!r}: expected one of "
                             f"{', '.join(TORQUE_LIMITS_AT)}")
        self.mixed_terrain = cfg.terrain == "mixed"
        if cfg.terrain == "flat":
            self.terrain = None
        else:
            self.terrain = make_terrain("flat" if self.mixed_terrain else cfg.terrain, cfg.terrain_seed,
                                        1.0 if self.mixed_terrain else cfg.terrain_difficulty, cfg.terrain_cell_m)
        self.model = build_pd_model(
            self.spec, np.asarray(self.contract.kp), np.asarray(self.contract.kd), cfg.physics_dt_s, self.terrain
        )
        apply_model_variant(cfg.model_variant, self.model)
        self.physics = make_physics(self.model, cfg)
        self.charges_physics_peak = self.reward_cfg.torque_limits_at == "physics_peak"
        if self.charges_physics_peak and not hasattr(self.physics, "substep_controls"):
            raise ValueError(f"reward.torque_limits_at=physics_peak reads every physics step's state, which "
                             f"env.backend={cfg.backend} does not keep: use env.backend=cpu")
        self.kinematics = LegKinematics(self.model)
        self.action_scale = torch.tensor(self.contract.action.scale, dtype=torch.float32)
        self.action_offset = torch.tensor(self.contract.action.offset, dtype=torch.float32)
        self.torque_limit = torch.tensor(self.spec.joint_torque_limit, dtype=torch.float32)
        self.default_joint_pos = torch.tensor(self.contract.default_joint_pos, dtype=torch.float32)
        self.soft_joint_pos_lower = torch.tensor(self.contract.soft_joint_pos_lower, dtype=torch.float32)
        self.soft_joint_pos_upper = torch.tensor(self.contract.soft_joint_pos_upper, dtype=torch.float32)
        with torch.no_grad():
            self.nominal_feet_b = self.kinematics(self.default_joint_pos)[0]  # (4, 3)
        self.total_mass_kg = self.spec.total_mass_kg

        self.rng = np.random.default_rng(seed)
        n = self.num_envs
        self._mj_state = np.zeros((n, self.physics.layout.size))
        self.episode_step = np.zeros(n, dtype=np.int64)
        self.commands = torch.zeros(n, 3)
        self.last_action = torch.zeros(n, self.action_size)
        self.state: RobotState | None = None
        self.variation = RobotVariation.nominal(n, self.foot_friction())
        self.held_targets = np.tile(self.spec.default_joint_pos, (n, 1))  # what the motors track until new ones arrive
        self.next_push_step = np.full(n, np.iinfo(np.int64).max)
        self.gait_index = np.zeros(n, dtype=np.int64)
        self.gait_phase = np.zeros(n)
        self.start_phase = np.zeros(n)  # cycles: where each episode's clock starts (EnvConfig.random_start_phase)
        # Mixed terrain: each robot's course kind (index into TERRAINS) and curriculum level (index into
        # self.terrain_levels), the course its model holds now, and whether it crossed in this episode.
        self.terrain_kind = dealt_course_kinds(cfg.terrain_kinds, n)
        self.terrain_levels = curriculum_levels(cfg)
        levels = np.zeros(n, dtype=np.int64)
        if self.mixed_terrain and cfg.terrain_start_level_max > 0:
            levels = self.rng.integers(0, cfg.terrain_start_level_max + 1, n)
        self._set_terrain_levels(levels)
        self._model_course: list[tuple[int, int] | None] = [None] * n
        self._courses: dict[tuple[int, int], Terrain] = {}
        self.crossed = np.zeros(n, dtype=bool)
        # robots steered along their course (EnvConfig.course_heading_gain); fixed, as each robot's course kind is
        on_course = self.terrain_kind != TERRAINS.index("flat")
        self.steered = self.mixed_terrain & on_course & (cfg.course_heading_gain > 0)
        if self.mixed_terrain:
            self.physics.own_models(n)
        if self.randomization is not None:
            self.physics.own_models(n)

    # ----------------------------------------------------------------- public API
    def reset(self, seed: int | None = None, randomize_episode_start: bool = True) -> torch.Tensor:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        everyone = np.ones(self.num_envs, dtype=bool)
        self._reset_rows(everyone)
        if randomize_episode_start:  # stagger time-outs so resets do not all happen at once
            self.episode_step[:] = self.rng.integers(0, self.max_episode_steps // self.resample_steps, self.num_envs)
            self.episode_step *= self.resample_steps
        self.state = self._sim_state()
        return self.observation(self.state, self.last_action)

    def step(self, actions: torch.Tensor):
        with torch.no_grad():
            return self._step(actions, None)

    def phases(self, steps_ahead: int = 0) -> torch.Tensor:
        """Gait phase of every leg (N, 4) at the current time of each episode (plus `steps_ahead` steps)."""
        return torch.as_tensor(self._leg_phases(steps_ahead), dtype=torch.float32)

    def _leg_phases(self, steps_ahead: int = 0) -> np.ndarray:
        if self.multi_gait:
            cycles = self.gait_phase + steps_ahead * self.control_dt / self._gait_periods[self.gait_index]
            return np.mod(cycles[:, None] + self._gait_offsets[self.gait_index], 1.0)
        time_s = (self.episode_step + steps_ahead) * self.control_dt + self.start_phase * self.gait.period_s
        return leg_phases(self.gait, time_s)

    def gait_batch(self) -> GaitBatch:
        """Each robot's gait (a multi-gait policy's)."""
        return GaitBatch.of(self.contract.gaits, self.gait_index)

    def pitch_stance(self) -> torch.Tensor | None:
        """(N, 1): the robots whose gait's reference takes the pitch term; None when every gait's does."""
        if not self.multi_gait or self._pitch_stance_flags.all():
            return None
        return torch.as_tensor(self._pitch_stance_flags[self.gait_index]).unsqueeze(-1)

    def _reward_gait(self):
        return self.gait_batch() if self.multi_gait else self.gait

    def raw_terms(self, state: RobotState, last_action: torch.Tensor) -> dict[str, torch.Tensor]:
        """Raw observation terms (contract names, SDK order, body frame) before scaling."""
        clock = torch.as_tensor(clock_features(self._leg_phases()), dtype=torch.float32)
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

    def observation(self, state: RobotState, last_action: torch.Tensor) -> torch.Tensor:
        terms = self.raw_terms(state, last_action)
        if self.randomization is not None:  # sensor noise: detached, so gradients pass through unchanged
            noise = observation_noise(self.randomization, self.rng, self.num_envs, self.action_size)
            for name, value in noise.items():
                terms[name] = terms[name] + torch.as_tensor(value, dtype=torch.float32)
        return self.builder.build(terms)

    def appended_obs_stats(self, first_term: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance over the robots, as they are now, of the observation's terms from `first_term` on."""
        start = sum(t.size for t in self.contract.observation[:first_term])
        obs = self.builder.build(self.raw_terms(self.state, torch.zeros(self.num_envs, self.action_size)))[:, start:]
        return obs.mean(0), obs.var(0, unbiased=False)

    def set_variation(self, variation: RobotVariation) -> None:
        """Give every robot these physical parameters from now on (robustness tests; training samples its own)."""
        self.physics.own_models(self.num_envs)
        self.variation = variation
        self._apply_variation(np.arange(self.num_envs))

    def push_base(self, rows: np.ndarray, velocity_b: np.ndarray) -> None:
        """Kick the bases of robots `rows`: add `velocity_b` (k, 3), m/s, heading frame (x forward, y left, z up).

        The heading frame is the body frame turned level (yaw only), so a lateral kick stays horizontal.
        """
        qpos = self._mj_state[rows][:, self.physics.layout.qpos]
        w, x, y, z = qpos[:, 3:7].T
        yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        c, s = np.cos(yaw), np.sin(yaw)
        v = np.asarray(velocity_b, dtype=np.float64)
        world = np.stack([c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1], v[:, 2]], -1)
        vel = self.physics.layout.qvel
        self._mj_state[rows, vel.start : vel.start + 3] += world

    def robot_dynamics(self) -> RobotDynamics:
        """What the surrogate needs to know of each robot for the coming step (after a reset): its gains, added mass,
        delay, held targets and, on a course, the ground under each foot (the contact gradient's clearance)."""
        v = self.variation
        as_t = lambda x: torch.as_tensor(x, dtype=torch.float32)  # noqa: E731
        passive = {}
        if not (np.isnan(v.joint_damping).all() and np.isnan(v.joint_friction_loss).all()):
            # the surrogate models the leg joints' passive terms only where they are varied (the nominal model's
            # small ones are left out of its gradients, as they always were)
            legs = leg_dofs(self.model)
            damping = np.where(np.isnan(v.joint_damping), self.model.dof_damping[legs].mean(), v.joint_damping)
            friction_loss = np.where(np.isnan(v.joint_friction_loss), self.model.dof_frictionloss[legs].mean(),
                                     v.joint_friction_loss)
            passive = {"joint_damping": as_t(damping).unsqueeze(-1),
                       "joint_friction_loss": as_t(friction_loss).unsqueeze(-1)}
        ground_under_feet, ground_ahead_of_feet = self._ground_near_feet(self.state)
        return RobotDynamics(
            kp=self.kp * as_t(v.kp_scale).unsqueeze(-1),
            kd=self.kd * as_t(v.kd_scale).unsqueeze(-1),
            added_mass_kg=as_t(v.added_base_mass_kg),
            delay_substeps=torch.as_tensor(v.action_delay_steps),
            held_targets=as_t(self.held_targets),
            ground_under_feet_m=ground_under_feet,
            ground_ahead_of_feet_m=ground_ahead_of_feet,
            **passive,
        )

    @torch.no_grad()
    def reference_action(self) -> torch.Tensor:
        """The action whose joint targets are the IK of the clock's foot reference one control step ahead (N, 12).

        Open-loop kinematic trot/pace/... for the current commands; used to warm-start the actor by
        imitation (training/README.md, Lessons) and by the `joint_ref` reward.
        """
        phases = self.phases(steps_ahead=1)
        ref_xy, ref_height, _ = gait_reference(
            self._reward_gait(), phases, self.commands, self.nominal_feet_b, self.spec.foot_radius_m,
            self.cfg.stand_speed_m_s, swing_profile=self.cfg.gait_swing_profile,
        )
        z = self.nominal_feet_b[:, 2] + ref_height - self.spec.foot_radius_m
        q_ref = self.kinematics.inverse(torch.cat([ref_xy, z.unsqueeze(-1)], dim=-1), self.default_joint_pos)
        return (q_ref - self.action_offset) / self.action_scale

    def joint_targets(self, actions: torch.Tensor) -> torch.Tensor:
        """Joint targets (rad, SDK order) as deployment's PolicyRunner makes them: inside the soft joint range.

        A clipped target carries no gradient to its action, as it has no effect on the robot.
        """
        clip = self.contract.action.clip
        targets = self.action_offset + self.action_scale * actions.clamp(-clip, clip)
        return targets.clamp(self.soft_joint_pos_lower, self.soft_joint_pos_upper)

    def close(self) -> None:
        self.physics.close()

    def rng_state(self) -> dict:
        """The state of this environment's random generator (a checkpoint's)."""
        return self.rng.bit_generator.state

    def set_rng_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state

    # ----------------------------------------------------------------- internals
    def _sim_state(self) -> RobotState:
        if self.variation.ground_tilted:
            # A slope on level ground: gravity leans, the ground stays z = 0. The base height, as on a course, is
            # measured along gravity (vertical) to the ground: the plane's normal distance over cos(tilt).
            down = self.variation.gravity_dir_w
            state = robot_state_from_mujoco(self._mj_state, self.physics.layout, self.spec.sdk_from_model, down)
            cos_tilt = torch.as_tensor(-down[:, 2], dtype=torch.float32)
            return dataclasses.replace(state, base_height=state.base_height / cos_tilt)
        state = robot_state_from_mujoco(self._mj_state, self.physics.layout, self.spec.sdk_from_model)
        if self.terrain is not None:  # the height above the ground under the base, not above z = 0
            state = dataclasses.replace(state, base_height=state.base_height - self.ground_height())
        return state

    def ground_height(self) -> torch.Tensor:
        """The ground's height (m) under each robot's base, on its own course."""
        x, y = self.base_position_w()[:, :2].T
        return torch.as_tensor(self._ground_at(x, y), dtype=torch.float32)

    def _ground_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Ground heights (m) at world points (x, y) of shape (N, ...): row i on robot i's course."""
        if not self.mixed_terrain:
            return self.terrain.height_at(x, y)
        ground = np.zeros_like(x, dtype=np.float64)
        for course in set(zip(self.terrain_kind, self.terrain_level, strict=True)):
            rows = (self.terrain_kind == course[0]) & (self.terrain_level == course[1])
            ground[rows] = self._course(*course).height_at(x[rows], y[rows])
        return ground

    @torch.no_grad()
    def foot_ground_offset(self, state: RobotState) -> torch.Tensor | None:
        """(N, 4) the ground under each foot minus the ground under the base (m), measured along gravity; None on
        level ground with gravity straight down. The swing-height reward measures each foot from the ground under it,
        a riser's height (or a slope's rise across the stance) off otherwise."""
        return self._ground_near_feet(state, ahead_m=0.0)[0]

    @torch.no_grad()
    def foot_ground_ahead(self, state: RobotState) -> torch.Tensor | None:
        """(N, 4) the highest ground from under each foot to `RISER_LOOKAHEAD_M` ahead of it along the base's heading,
        minus the ground under the base (m); None where `foot_ground_offset` is. A riser a foot is about to meet is
        part of it: the surrogate's riser contact (`surrogate.riser_contact_width_m`) blocks a foot below its top."""
        return self._ground_near_feet(state)[1]

    @torch.no_grad()
    def _ground_near_feet(
        self, state: RobotState, ahead_m: float = RISER_LOOKAHEAD_M
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(`foot_ground_offset`, `foot_ground_ahead`) in one pass over the feet (no second when `ahead_m` is 0)."""
        tilted = self.variation.ground_tilted
        if self.terrain is None and not tilted:
            return None, None
        qpos = self._mj_state[:, self.physics.layout.qpos]
        pos, quat = qpos[:, None, 0:3], qpos[:, None, 3:7]
        feet_b = self.kinematics(state.joint_pos)[0].double().numpy()  # (N, 4, 3)
        u = np.broadcast_to(quat[..., 1:], feet_b.shape)
        t = 2.0 * np.cross(u, feet_b)
        feet_rel_w = feet_b + quat[..., :1] * t + np.cross(u, t)  # R(q) p
        if tilted:
            # the reward measures a foot at base height + its offset along -gravity; on the tilted plane the ground
            # under it (along gravity) lies off that by the offset's rise along the plane's normal over cos(tilt)
            down = self.variation.gravity_dir_w[:, None, :]
            along_up = -(feet_rel_w * down).sum(-1)
            under = torch.as_tensor(along_up - feet_rel_w[..., 2] / -down[..., 2], dtype=torch.float32)
            return under, (under if ahead_m else None)  # a plane has no riser: ahead of a foot is under it
        feet_w = pos + feet_rel_w
        base = self._ground_at(qpos[:, 0], qpos[:, 1])[:, None]
        under = torch.as_tensor(self._ground_at(feet_w[..., 0], feet_w[..., 1]) - base, dtype=torch.float32)
        if not ahead_m:
            return under, None
        # sampled a height-field cell apart along the heading, the highest kept
        w, x, y, z = qpos[:, 3:7].T
        yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        reach = np.linspace(0.0, ahead_m, int(np.ceil(ahead_m / self.cfg.terrain_cell_m)) + 1)
        ahead_x = feet_w[..., 0, None] + np.cos(yaw)[:, None, None] * reach
        ahead_y = feet_w[..., 1, None] + np.sin(yaw)[:, None, None] * reach
        ahead = self._ground_at(ahead_x, ahead_y).max(-1) - base
        return under, torch.as_tensor(ahead, dtype=torch.float32)

    def _course(self, kind: int, level: int) -> Terrain:
        key = (int(kind), int(level))
        if key not in self._courses:
            self._courses[key] = make_terrain(
                TERRAINS[key[0]], self.cfg.terrain_seed + key[1], self.terrain_levels[key[1]], self.cfg.terrain_cell_m
            )
        return self._courses[key]

    def _update_curriculum(self, rows: np.ndarray, fell: np.ndarray) -> None:
        """legged_gym's terrain curriculum: a robot that crossed its course gets a harder one, a robot that
        fell before crossing an easier one."""
        up = rows & self.crossed
        down = rows & fell & ~self.crossed
        self._set_terrain_levels(np.clip(self.terrain_level + up - down, 0, len(self.terrain_levels) - 1))

    def _set_terrain_levels(self, levels: np.ndarray) -> None:
        """Each robot's curriculum level, and each course's mean difficulty (the step info's, PPO's log)."""
        self.terrain_level = levels
        difficulty = np.asarray(self.terrain_levels)[levels]
        self.terrain_difficulty = {name: float(difficulty[self.terrain_kind == k].mean())
                                   for k, name in enumerate(TERRAINS) if (self.terrain_kind == k).any()}

    def base_position_w(self) -> np.ndarray:
        """Each robot's base position in the world (N, 3), m."""
        return self._mj_state[:, self.physics.layout.qpos][:, 0:3].copy()

    def advance_physics(self, joint_targets: np.ndarray) -> tuple[RobotState, torch.Tensor]:
        """Step MuJoCo one policy period towards new joint targets; returns the new state and foot touch (N, 4).

        A robot with an action delay of d physics steps holds its previous targets for the first d.
        """
        self._mj_state, touch = self.physics.step(
            self._mj_state, joint_targets, self.held_targets, self.variation.action_delay_steps
        )
        self.held_targets = np.array(joint_targets, dtype=np.float64)
        return self._sim_state(), torch.as_tensor(touch, dtype=torch.float32)

    def peak_joint_state(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Each joint's position and velocity (N, 12; SDK order) at the physics step of the last period where its
        PD torque was largest in magnitude (with the targets that step held: a delayed robot's earlier ones)."""
        states, targets = self.physics.substep_states, self.physics.substep_controls  # (N, S, ·)
        layout, sdk = self.physics.layout, self.spec.sdk_from_model
        q = states[..., layout.qpos][..., 7:][..., sdk]
        dq = states[..., layout.qvel][..., 6:][..., sdk]
        torque = pd_torque(self.kp.double().numpy(), self.kd.double().numpy(), targets, q, dq)
        peak = np.abs(torque).argmax(axis=1)[:, None, :]  # (N, 1, 12): the substep
        at_peak = lambda x: torch.as_tensor(np.take_along_axis(x, peak, axis=1)[:, 0], dtype=torch.float32)  # noqa: E731
        return at_peak(q), at_peak(dq)

    def foot_friction(self) -> float:
        """The sliding friction of a foot-ground contact in the model as built.

        MuJoCo takes a contact's friction from the geom of higher priority (the feet's), else the larger one.
        """
        top = self.model.geom_priority == self.model.geom_priority.max()
        return float(self.model.geom_friction[top, 0].max())

    def _apply_variation(self, rows: np.ndarray) -> None:
        v, models = self.variation, self.physics.models
        kp, kd = self.kp.double().numpy(), self.kd.double().numpy()
        for i in rows:
            vary_model(
                models[i], self.model, v.friction[i], v.added_base_mass_kg[i], v.base_com_offset_m[i],
                kp * v.kp_scale[i], kd * v.kd_scale[i], v.joint_damping[i], v.joint_friction_loss[i],
                v.gravity_dir_w[i],
            )  # fmt: skip
        self.physics.models_changed(rows)

    def _push_due_robots(self) -> None:
        due = self.episode_step >= self.next_push_step
        if due.any():
            k = int(due.sum())
            self.push_base(due, sample_push(self.randomization, self.rng, k))
            self.next_push_step[due] = self.episode_step[due] + sample_push_interval_steps(
                self.randomization, self.rng, k, self.control_dt
            )

    def _step(self, actions: torch.Tensor, transition: Transition | None):
        clip = self.contract.action.clip
        actions = actions.clamp(-clip, clip)
        targets = self.joint_targets(actions)
        prev = self.state
        if self.randomization is not None:
            self._push_due_robots()  # a kick during this period: the policy sees its effect, not the kick
        dynamics = self.robot_dynamics() if transition is not None else None
        sim, touch = self.advance_physics(targets.detach().double().numpy())
        state = sim if transition is None else transition(prev, targets, sim, touch, dynamics)
        self.episode_step += 1
        if self.mixed_terrain:
            self.crossed |= self.base_position_w()[:, 0] >= COURSE_END_X
        if self.steered.any():
            self._steer_along_courses()
        if self.multi_gait:
            self.gait_phase += self.control_dt / self._gait_periods[self.gait_index]

        phases = self.phases()
        reward, terms = compute_rewards(
            state, actions, self.last_action, targets, self.commands, phases, self._reward_gait(), self.kinematics,
            self.nominal_feet_b, self.spec.foot_radius_m, self.kp, self.kd, self.torque_limit, self.default_joint_pos,
            (self.soft_joint_pos_lower, self.soft_joint_pos_upper), self.reward_cfg,
            self.control_dt, self.foot_ground_offset(state), self.cfg.stand_speed_m_s,
            balance_step_gains=self.cfg.balance_step_gains, swing_profile=self.cfg.gait_swing_profile,
            peak_joint_state=self.peak_joint_state() if self.charges_physics_peak else None,
            pitch_stance=self.pitch_stance(),
        )  # fmt: skip
        fell = (sim.base_height < self.cfg.fall_height_m) | (sim.projected_gravity_b[:, 2] > self.cfg.fall_tilt_gz)
        if self.reward_cfg.fall != 0.0:
            reward = reward + self.reward_cfg.fall * fell.float()
            terms["fall"] = self.reward_cfg.fall * float(fell.float().mean())
        time_out = torch.as_tensor(self.episode_step >= self.max_episode_steps) & ~fell
        if self.terrain is not None:  # near the course's edges or end: a new episode, before it walks off
            x, y = self.base_position_w()[:, :2].T
            off = (x > X_RANGE[1] - 1.0) | (np.abs(y) > COURSE_WIDTH_M / 2 - 0.3)
            time_out = time_out | (torch.as_tensor(off) & ~fell)
        done = fell | time_out
        with torch.no_grad():
            lin_err = (self.commands[:, :2] - sim.base_lin_vel_b[:, :2]).norm(dim=-1)
            yaw_err = (self.commands[:, 2] - sim.base_ang_vel_b[:, 2]).abs()
            any_done = bool(done.any())
            # the observation before the automatic reset; without resets it equals the returned obs
            terminal_obs = self.observation(state.detach(), actions.detach()) if any_done else None
        info = {
            "fell": fell,
            "time_out": time_out,
            "terminal_obs": terminal_obs,
            "terms": terms,
            "lin_vel_error": lin_err,
            "yaw_rate_error": yaw_err,
            "touch": touch,
        }
        if self.mixed_terrain:  # how far up the curriculum each course's robots are (PPO logs it per course)
            info["terrain_difficulty"] = self.terrain_difficulty
        self.last_action = actions
        done_np = done.numpy()
        resample = (self.episode_step % self.resample_steps == 0) & ~done_np
        if resample.any():
            if self.multi_gait and self.cfg.gait_switch_prob > 0:
                switch = resample & (self.rng.random(self.num_envs) < self.cfg.gait_switch_prob)
                previous = self.gait_index.copy()
                self.gait_index[switch] = self.rng.integers(0, len(self.contract.gaits), int(switch.sum()))
                if self.randomization is not None and self._untilted_gaits.size:
                    # a robot on a slope stays in a gait that climbs
                    stay = self.variation.tilted() & np.isin(self.gait_index, self._untilted_gaits)
                    self.gait_index[stay] = previous[stay]
            self._sample_commands(resample)
        if done_np.any():
            if self.mixed_terrain:
                self._update_curriculum(done_np, fell.numpy())
            self._reset_rows(done_np)
            fresh = self._sim_state()
            state = state.where(done, fresh)
        self.state = state
        obs = self.observation(state, self.last_action)
        info["terminal_obs"] = terminal_obs if any_done else obs.detach()
        return obs, reward, done, info

    def _sample_commands(self, rows: np.ndarray) -> None:
        k = int(rows.sum())
        lo = np.array([self.cfg.lin_vel_x[0], self.cfg.lin_vel_y[0], self.cfg.ang_vel_yaw[0]])
        hi = np.array([self.cfg.lin_vel_x[1], self.cfg.lin_vel_y[1], self.cfg.ang_vel_yaw[1]])
        cmd = self.rng.uniform(lo, hi, size=(k, 3))
        if self.multi_gait:  # each robot's forward speed from its gait's range (bounds and gallops go fast)
            vx = self.gait_vx_ranges[self.gait_index[rows]]
            cmd[:, 0] = self.rng.uniform(vx[:, 0], vx[:, 1])
        cmd[self.steered[rows], 1] = 0.0  # straight along the course; the yaw rate follows the heading every step
        cmd[self.rng.random(k) < self.cfg.zero_command_prob] = 0.0
        self.commands[torch.as_tensor(rows)] = torch.as_tensor(cmd, dtype=torch.float32)

    def _steer_along_courses(self) -> None:
        """legged_gym's heading command for the robots on a course: a yaw rate that turns each back to the course's
        direction (+x), in proportion to its heading error, within the yaw-rate command's range. A robot told to stand
        still is left standing."""
        rows = self.steered & (self.commands[:, 0] != 0.0).numpy()
        w, x, y, z = self._mj_state[rows][:, self.physics.layout.qpos][:, 3:7].T
        heading = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))  # rad, 0 along the course
        yaw_rate = np.clip(-self.cfg.course_heading_gain * heading, *self.cfg.ang_vel_yaw)
        self.commands[torch.as_tensor(rows), 2] = torch.as_tensor(yaw_rate, dtype=torch.float32)

    def _reset_rows(self, rows: np.ndarray) -> None:
        k = int(rows.sum())
        qpos = np.tile(self.spec.standing_qpos, (k, 1))
        qpos[:, 7:] += self.rng.uniform(-1, 1, size=(k, 12)) * self.cfg.init_joint_noise_rad
        qvel = np.zeros((k, self.model.nv))
        self._mj_state[rows] = self.physics.state_from_qpos(qpos, qvel)
        self.episode_step[rows] = 0
        self.held_targets[rows] = self.spec.default_joint_pos
        if self.cfg.random_start_phase:
            self.start_phase[rows] = self.rng.random(k)
        if self.multi_gait:
            self.gait_index[rows] = self.rng.integers(0, len(self.contract.gaits), k)
            self.gait_phase[rows] = self.start_phase[rows]
        if self.mixed_terrain:
            self.crossed[rows] = False
            models = self.physics.models
            for i in np.flatnonzero(rows):
                course = (int(self.terrain_kind[i]), int(self.terrain_level[i]))
                if self._model_course[i] != course:
                    set_terrain_heights(models[i], self._course(*course))
                    self._model_course[i] = course
            self.physics.models_changed(rows)
        if self.randomization is not None:
            dt = self.cfg.physics_dt_s
            variation = sample_variation(self.randomization, self.rng, k, dt)
            if self.multi_gait and self._untilted_gaits.size:
                level = np.isin(self.gait_index[rows], self._untilted_gaits)
                variation.gravity_dir_w[level] = (0.0, 0.0, -1.0)
            self.variation.assign(rows, variation)
            self._apply_variation(np.flatnonzero(rows))
            self.next_push_step[rows] = sample_push_interval_steps(self.randomization, self.rng, k, self.control_dt)
        # not in place: last_action may be part of the autograd graph of a differentiable rollout
        self.last_action = torch.where(torch.as_tensor(rows).unsqueeze(-1), 0.0, self.last_action)
        self._sample_commands(rows)
