"""Training configuration: plain dataclasses, loaded from YAML, overridden with `key=value`.

A config file mirrors `TrainConfig`: top-level sections `env`, `randomization`, `reward`,
`surrogate`, `learner`, plus `seed`, `run_dir` and budgets. Overrides use dotted keys,
e.g. `learner.actor_lr=5e-4 env.num_envs=128 surrogate.variant=srb`; values are parsed as
YAML scalars/lists, so `env.lin_vel_x=[0.3,1.0]` works.
"""

from __future__ import annotations

import dataclasses
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from surrogait_core.terrain import CELL_M


class ConfigError(ValueError):
    """A config file or override is wrong; the message says what and how to fix it."""


@dataclasses.dataclass
class EnvConfig:
    robot: str = "go2"
    num_envs: int = 64
    num_threads: int = 2  # MuJoCo rollout worker threads (backend cpu)
    # The physics: "cpu" (MuJoCo C, `num_threads` threads) or "mjx" (MJX on JAX's device `mjx_device`: "" = JAX's
    # default, a GPU where one is present; "cpu", "gpu", "cuda:1"), in float32 unless `mjx_float64`
    # (surrogait_train/mjx_physics.py).
    backend: str = "cpu"
    mjx_device: str = ""
    mjx_float64: bool = False
    # Where the environment's tensors live (surrogait_train/devices.py): "" = the host environment (NumPy
    # bookkeeping and CPU torch; with backend mjx the robots' states go to JAX's device and back every control
    # step); a torch device ("cpu", "cuda", "cuda:1") with backend mjx = the device-resident environment
    # (surrogait_train/device_env.py): physics state, resets, randomisation, terrain, rewards and observations
    # stay on that device, JAX and torch sharing it through DLPack. backend cpu takes "" or "cpu" only.
    device: str = ""
    physics_dt_s: float = 0.005  # 200 Hz physics
    substeps: int = 4  # physics steps per policy step -> 50 Hz policy
    kp: float | None = None  # joint PD gains; None = robot spec's nominal gains
    kd: float | None = None
    episode_length_s: float = 20.0
    command_resample_s: float = 5.0
    lin_vel_x: list[float] = dataclasses.field(default_factory=lambda: [0.0, 1.0])
    lin_vel_y: list[float] = dataclasses.field(default_factory=lambda: [-0.3, 0.3])
    ang_vel_yaw: list[float] = dataclasses.field(default_factory=lambda: [-0.5, 0.5])
    zero_command_prob: float = 0.1  # share of commands that ask to stand still
    gait: str = "trot"  # a key of surrogait_train.gaits.GAITS
    gait_period_s: float = 0.0  # 0 = the gait's own period; otherwise overrides it (the contract records it)
    gait_swing_height_m: float = 0.0  # 0 = the gait's own swing apex (m above the ground); else overrides it (one gait)
    # The swing's foot path (rewards.SWING_PROFILES): "sine" (height apex·sin(pi s), forward at a constant speed) or
    # "lift_first" (up before forward, forward before down: a blind foot clears a riser over most of its step)
    gait_swing_profile: str = "sine"
    # A multi-gait policy: the gaits (keys of GAITS) it learns at once, each robot its own, their
    # parameters its inputs; [] = one gait, `gait`. Per gait, its range of commanded forward speed (m/s,
    # `gait_lin_vel_x`, in `gaits` order; [] = lin_vel_x for all), and the chance that a robot switches to
    # another gait when its command is resampled (the clock's phase runs on: it learns the switch).
    gaits: list[str] = dataclasses.field(default_factory=list)
    gait_lin_vel_x: list[list[float]] = dataclasses.field(default_factory=list)
    gait_switch_prob: float = 0.0
    # The ground: "flat" (the plain scene) or a course of surrogait_core.terrain (rough, slope, stairs) at
    # `terrain_difficulty` (0..1]; on a course the base height (rewards, falls) is measured from the ground
    # under the base.
    terrain: str = "flat"
    terrain_difficulty: float = 1.0
    terrain_seed: int = 0
    # "mixed" only: robots start at a random curriculum level up to this index of terrain_levels (0: all at
    # the easiest), legged_gym's max_init_terrain_level; a fine-tune restarted from a policy file need not
    # climb the curriculum again from the bottom
    terrain_start_level_max: int = 0
    # "mixed" only: the course kinds (of surrogait_core.terrain.TERRAINS) the robots are dealt in turn; [] = all of
    # them. A stage for one hard course (stairs) keeps some flat robots: [flat, stairs] is half and half.
    terrain_kinds: list[str] = dataclasses.field(default_factory=list)
    # "mixed" only: the curriculum's difficulties, easiest first (legged_gym's terrain rows). A robot that crossed
    # its course moves one level up, one that fell before crossing one down: a step it cannot yet take is a fall and
    # back, so a finer ladder lets a skill grow by what it can nearly do (10 cm stairs: 5, 6, ... 10 cm risers).
    terrain_levels: list[float] = dataclasses.field(default_factory=lambda: [0.25, 0.5, 0.75, 1.0])
    # "mixed" only: robots on a course (not flat ground) are steered along it, legged_gym's heading command: no
    # sideways command, and a yaw rate of this gain (rad/s per rad) times their heading's error from the course's
    # direction, within ang_vel_yaw; flat robots keep every command. 0 = courses get the commands as drawn (a robot
    # told to turn walks off the course's side and never crosses it, so the curriculum cannot raise its level).
    course_heading_gain: float = 0.0
    # m: the height field's grid (surrogait_core.terrain.CELL_M); MuJoCo finds a contact per grid triangle under
    # a foot, so a grid about as fine as the 2 cm feet gives each foot several
    # (bench/investigations/heightfield_contacts.py)
    terrain_cell_m: float = CELL_M
    init_joint_noise_rad: float = 0.05
    # Each episode starts its gait clock at a random phase (a multi-gait robot: a random point of its cycle), so
    # every part of the cycle is met from a fresh start, not only its first steps from standing at phase 0.
    random_start_phase: bool = False
    # m/s of commanded foot speed (|v_xy| + r |yaw rate|) below which the gait's reference swing shrinks in
    # proportion, to standing on four feet at a zero command (rewards.stepping_amplitude); 0 = always step
    stand_speed_m_s: float = 0.0
    # The gait reference's balance step (rewards.balance_step), in the residual actor's reference and the
    # foot_placement reward's: m of sideways foot shift per unit of sin(roll) and per rad/s of roll rate, and the
    # feet moved along the hips' velocity from the yaw-rate error times this many seconds; 0 = open loop
    balance_step_roll_m: float = 0.0
    balance_step_roll_rate_m_s: float = 0.0
    balance_step_yaw_rate_s: float = 0.0
    # m of fore-aft foot shift per unit of sin(pitch) (projected gravity x): with the base's height, the stance
    # centred under the centre of mass along gravity on a slope (rewards.balance_step); 0 = off
    balance_step_pitch_m: float = 0.0
    # The part of sin(pitch) (projected gravity x) that term ignores: the stance answers only the pitch beyond it
    # (gx - clip(gx, -d, d)). A trot pitches a few degrees as it walks on level ground, and the stance stepping to
    # that cost its flat-ground tracking (training log 2026-12-07 (22)); 0 = the whole pitch
    balance_step_pitch_deadband: float = 0.0
    # A multi-gait policy's gaits whose reference takes that fore-aft term ([] = every gait): a bounding or galloping
    # body pitches at every stride on level ground, and the term would step its feet away from under it (training
    # log 2026-12-07 (21)). The exported reference knows each robot's gait from its observed gait parameters.
    balance_step_pitch_gaits: list[str] = dataclasses.field(default_factory=list)
    # Joint targets are clipped to this fraction of each joint's range, shrunk about its centre (legged_gym's
    # soft_dof_pos_limit); the exported contract carries the range and deployment clips to it too. The one
    # place this default is defined.
    soft_joint_range_fraction: float = 0.9
    fall_height_m: float = 0.16  # base origin below this: a fall
    fall_tilt_gz: float = -0.5  # projected gravity z above this (tilt > 60 deg): a fall
    # A named edit of the robot model (surrogait_train.model_variants), e.g. another contact model; "" = as is.
    model_variant: str = ""
    # The state estimator's base velocity (body frame) as the observation's last term, `base_lin_vel_b`: the policy
    # can then see how fast it goes, not only what it was told (a policy without it walks on damped joints at
    # 0.6 of its command, bench/results/damped_joints.md). Appended, so a run may start from a file without it
    # (`--init-from`); deployed, the policy node feeds it from the estimator (the contract's `estimator` source).
    observe_base_lin_vel: bool = False

    @property
    def balance_step_gains(self) -> tuple[float, float, float, float, float]:
        if not 0.0 <= self.balance_step_pitch_deadband < 1.0:
            raise ConfigError("env.balance_step_pitch_deadband is a part of sin(pitch), in [0, 1) (0.087: 5 degrees); "
                              f"got {self.balance_step_pitch_deadband}")
        return (self.balance_step_roll_m, self.balance_step_roll_rate_m_s, self.balance_step_yaw_rate_s,
                self.balance_step_pitch_m, self.balance_step_pitch_deadband)


@dataclasses.dataclass
class RandomizationConfig:
    """Per-episode domain randomisation (training/README.md, "Domain randomisation"). Off unless `enabled`.

    Ranges are [low, high], sampled uniformly per robot at every episode start; noise terms are the
    standard deviation of zero-mean Gaussian noise added to the policy's observation every step.
    """

    enabled: bool = False
    friction: list[float] = dataclasses.field(default_factory=lambda: [0.2, 1.5])  # foot-ground sliding
    added_base_mass_kg: list[float] = dataclasses.field(default_factory=lambda: [-1.0, 3.0])
    base_com_offset_m: float = 0.03  # each axis uniform in [-x, x]
    kp_scale: list[float] = dataclasses.field(default_factory=lambda: [0.8, 1.2])  # motor strength
    kd_scale: list[float] = dataclasses.field(default_factory=lambda: [0.8, 1.2])
    action_delay_s: list[float] = dataclasses.field(default_factory=lambda: [0.0, 0.02])  # physics-step resolution
    # The leg joints' passive terms, N m s/rad and N m; [] = the robot model's own (damping 0.1, friction loss 0.2).
    # Public models of these robots differ here more than anywhere: damping 0.1 (unitree_mujoco) to 2 (MuJoCo
    # Menagerie), friction loss 0-0.2; a policy trained on one falls behind its commands on the other.
    joint_damping: list[float] = dataclasses.field(default_factory=list)
    joint_friction_loss: list[float] = dataclasses.field(default_factory=list)
    # deg: a slope under every robot, as gravity tilted by an angle uniform in [low, high] towards a uniformly drawn
    # heading (flat ground only). On a plane this is the physics of an endless slope, met every step from every
    # direction, where a course's ramp is a few seconds of an episode. [] = level ground. A tilt past the foot's
    # friction angle (atan of `friction`'s low end) slides whatever the policy does.
    ground_tilt_deg: list[float] = dataclasses.field(default_factory=list)
    # A multi-gait policy's gaits that get those slopes ([] = every gait): a robot in another gait stands on level
    # ground, and a robot on a slope switches only to one of these (the bound and the gallop are not asked to climb)
    ground_tilt_gaits: list[str] = dataclasses.field(default_factory=list)
    # The share of those robots drawn onto a slope each episode; the others walk on level ground. Every robot tilted
    # (1.0), a slope stage never walks on the level, and the multi-gait trot lost its flat-ground tracking there
    # (training log 2026-12-07 (22))
    ground_tilt_share: float = 1.0
    joint_pos_noise_rad: float = 0.01
    joint_vel_noise_rad_s: float = 0.5
    gyro_noise_rad_s: float = 0.1
    gravity_noise: float = 0.03  # on the unit projected-gravity vector
    base_lin_vel_noise_m_s: float = 0.05  # the estimator's velocity error
    push_interval_s: list[float] = dataclasses.field(default_factory=lambda: [5.0, 10.0])
    push_velocity_m_s: float = 0.6  # horizontal base-velocity kick, uniform in a disc of this radius


@dataclasses.dataclass
class RewardConfig:
    """Weights (per second of simulated time) and kernel widths of the smooth reward terms."""

    track_lin_vel: float = 1.5
    track_ang_vel: float = 0.75
    tracking_sigma: float = 0.25
    lin_vel_z: float = -1.0
    ang_vel_xy: float = -0.05
    orientation: float = -5.0
    base_height: float = -30.0
    base_height_target_m: float = 0.30
    action_rate: float = -0.01
    torque: float = -2e-4
    # Joint torques past this fraction of each motor's limit, summed (N m; legged_gym's torque_limits): keeps the
    # gait's peaks clear of the safety monitor's torque rule, whose false damp on a robot is a fall (issue 34)
    torque_limits: float = 0.0
    soft_torque_limit_fraction: float = 0.7
    # Which torque that term reads: "period_end", the PD law on the state each control period ends in; or
    # "physics_peak", each joint's largest PD torque over the period's physics steps (a landing's impact included,
    # which the period's end does not see and the monitor's estimated-torque rule does), its gradient through the
    # targets as the PD law's, also past the motor's limit where the value stops
    torque_limits_at: str = "period_end"
    swing_height: float = -40.0  # squared error of foot height to the clock's swing profile
    # squared shortfall of a swinging foot below that profile (0 above it, 0 in stance): what a blind policy can
    # meet on uneven ground, where swing_height asks each foot to land on ground it cannot see
    swing_clearance: float = 0.0
    stance_foot_vel: float = -0.5  # squared horizontal foot velocity on scheduled stance legs
    foot_placement: float = -5.0  # squared error of foot xy to the Raibert-style reference
    joint_ref: float = 0.0  # squared error of joint angles to the IK of the clock's foot reference
    # squared horizontal distance (m^2) of the base from the centroid of the scheduled stance feet: the body over
    # its support, which a pace (on one side's legs at a time) must sway to, and a trot's diagonal gives for free
    support_balance: float = 0.0
    joint_pos_limits: float = -10.0  # rad by which joints are outside the soft joint range, summed (legged_gym)
    alive: float = 0.5
    # Once, on the step a robot falls (not scaled by dt). The critic's value after a fall is 0, so where the
    # penalties outweigh the rewards (rough ground: -0.02 per step) falling ends a losing episode and the critic
    # learns to steer the policy into falls; this keeps a fall worse than walking on.
    fall: float = 0.0


@dataclasses.dataclass
class SurrogateConfig:
    # "noslip" (stance-foot constraint), "gauss" (noslip, its prior weighted by the base's inertia), "srb" (stance
    # forces), "joint" (legs only); surrogate.py has the equations
    variant: str = "noslip"
    gradient_decay: float = 0.6  # per-step decay g of carried gradients (docs/architecture.md, "The paper")
    joint_inertia: float = 0.0  # effective joint inertia of the PD model, kg m^2; 0 = MuJoCo mass-matrix diagonal
    noslip_damping: float = 0.1  # regulariser of the no-slip least squares
    contact_threshold_n: float = 1.0  # touch force (N) counted as full contact
    # A gradient through contact: the contact weights keep MuJoCo's value, but take the gradient of a smooth step in
    # each foot's height above the ground, 1 at rest on it and 1/2 this far (m) above it; 0 = detached (no gradient
    # says "lifting this foot changes what holds the body")
    contact_gradient_width_m: float = 0.0
    # A riser as a contact: a foot below the top of a riser just ahead of it (on a course) takes, in gradient only, a
    # contact weight that falls by 1 for every this many metres it is lifted, so "lift the foot" reaches the base's
    # velocity the blocked foot holds back. MuJoCo's touch sensor already counts the riser's push in value. 0 = off
    riser_contact_width_m: float = 0.0


@dataclasses.dataclass
class LearnerConfig:
    horizon: int = 24
    gamma: float = 0.99
    lam: float = 0.95
    actor_lr: float = 5e-4
    critic_lr: float = 1e-3
    lr_decay: bool = False  # SHAC: learning rates fall linearly to 10 % over TrainConfig.max_iterations, then stay
    actor_hidden: list[int] = dataclasses.field(default_factory=lambda: [256, 128, 64])
    critic_hidden: list[int] = dataclasses.field(default_factory=lambda: [128, 128])
    critic_iterations: int = 8
    critic_minibatches: int = 4
    target_critic_alpha: float = 0.2  # SHAC: target <- alpha*target + (1-alpha)*critic
    # Torch threads for the actor backward and the critic updates. The rollout keeps TrainConfig.torch_threads
    # (1) so that MuJoCo's workers have the cores; the updates have no physics running beside them, and their
    # matrix products are large enough to split across cores.
    update_threads: int = 2
    grad_norm: float = 1.0
    # An actor update whose gradient norm exceeds this multiple of the running mean is skipped (0 = never):
    # gradients through contact occasionally explode, and Adam would turn a spike's direction into a full step.
    grad_spike_factor: float = 5.0
    # A spike also shortens the gradient's reach in time: the per-step gradient decay g (surrogate.gradient_decay)
    # is multiplied by this factor (down to min_gradient_decay) and grows back by 1 % per accepted update. Once
    # the policy's closed-loop gain times g exceeds 1, gradients through the window grow geometrically and
    # their direction is noise; a smaller g keeps them informative (1 = off).
    spike_decay_factor: float = 0.8
    min_gradient_decay: float = 0.2
    action_noise_std: float = 0.05  # exploration noise on actions (detached)
    # Linear anneal of that noise to this std over TrainConfig.max_iterations (then it stays); < 0 = no anneal
    action_noise_final_std: float = -1.0
    # Share of the actor's update direction taken from a zeroth-order (likelihood-ratio) gradient of the same
    # window, the rest from the first-order one through the surrogate (0 = first-order only, SHAC): each gradient is
    # normalised, mixed, and given the first-order one's norm. The likelihood ratio needs the exploration noise
    # (action_noise_std > 0); its advantages are the window's GAE on the target critic (surrogait_train.shac).
    zeroth_order_weight: float = 0.0
    # A residual policy on the clock-driven kinematic gait reference (surrogait_train.reference): the action is
    # the reference's plus the network's, and the exported graph carries both
    residual_reference: bool = False
    obs_norm_min_std: float = 0.1  # floor of the observation normaliser's std (docs/architecture.md, "The paper")
    imitation_iterations: int = 0  # warm start: windows of regression onto the clock-driven reference action
    imitation_lr: float = 3e-3
    # weight of the left-right mirror loss: mean squared (action units) pi(mirror(o)) - mirror(pi(o)) over the
    # window's observations (surrogait_train.symmetry); 0 = off
    symmetry: float = 0.0
    # iterations at a run's start that train the critic alone: a run started from an exported policy
    # (`--init-from POLICY.onnx`) has an untrained critic, whose values would otherwise steer the actor
    critic_warmup_iterations: int = 0
    # The torch device of the networks and their updates: "" = the environment's (env.device; cpu for the host
    # environment). SHAC's rollout graph runs through the environment, so it needs the environment's device.
    device: str = ""


@dataclasses.dataclass
class TrainConfig:
    seed: int = 0
    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    randomization: RandomizationConfig = dataclasses.field(default_factory=RandomizationConfig)
    reward: RewardConfig = dataclasses.field(default_factory=RewardConfig)
    surrogate: SurrogateConfig = dataclasses.field(default_factory=SurrogateConfig)
    learner: LearnerConfig = dataclasses.field(default_factory=LearnerConfig)
    max_iterations: int = 2000
    budget_s: float = 0.0  # wall-clock limit; 0 = none
    checkpoint_every: int = 25
    log_every: int = 1
    torch_threads: int = 1  # torch threads of the rollout (beside MuJoCo's workers); updates: learner.update_threads


SECTIONS = {
    "env": EnvConfig,
    "randomization": RandomizationConfig,
    "reward": RewardConfig,
    "surrogate": SurrogateConfig,
    "learner": LearnerConfig,
}


def default_config_path(name: str = "go2_trot") -> Path:
    return Path(str(resources.files("surrogait_train") / "configs" / f"{name}.yaml"))


def _field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def from_dict(raw: dict[str, Any], source: str = "<dict>") -> TrainConfig:
    cfg = TrainConfig()
    for key, value in (raw or {}).items():
        _set(cfg, key, value, source)
    return cfg


def _set(cfg: TrainConfig, key: str, value: Any, source: str) -> None:
    if key in SECTIONS:
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: section {key!r} must be a mapping")
        for sub, v in value.items():
            _set(cfg, f"{key}.{sub}", v, source)
        return
    parts = key.split(".")
    if len(parts) == 1:
        target, name, allowed = cfg, parts[0], _field_names(TrainConfig)
    elif len(parts) == 2 and parts[0] in SECTIONS:
        target, name, allowed = getattr(cfg, parts[0]), parts[1], _field_names(SECTIONS[parts[0]])
    else:
        raise ConfigError(f"{source}: unknown config key {key!r}; sections are {sorted(SECTIONS)}")
    if name not in allowed or name in SECTIONS:
        raise ConfigError(f"{source}: unknown config key {key!r}; valid keys here: {', '.join(allowed)}")
    current = getattr(target, name)
    if isinstance(current, int | float) and not isinstance(current, bool) and isinstance(value, str):
        try:  # YAML 1.1 reads "1e-3" as a string
            value = float(value)
        except ValueError:
            pass
    if current is not None and value is not None:
        if isinstance(current, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
        elif isinstance(current, int | float) and not isinstance(value, int | float):
            raise ConfigError(f"{source}: {key} must be a number, got {value!r}")
        elif isinstance(current, int) and not isinstance(current, bool) and isinstance(value, float):
            if not value.is_integer():
                raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
            value = int(value)
        elif isinstance(current, float):
            value = float(value)
        elif isinstance(current, list) and not isinstance(value, list):
            raise ConfigError(f"{source}: {key} must be a list, got {value!r}")
        elif isinstance(current, str) and not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
    setattr(target, name, value)


def apply_overrides(cfg: TrainConfig, overrides: list[str]) -> TrainConfig:
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} must look like key=value (e.g. learner.actor_lr=5e-4)")
        key, text = item.split("=", 1)
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"override {item!r}: cannot parse the value ({e})") from None
        _set(cfg, key.strip(), value, "override")
    return cfg


def load_config(path: Path | str | None = None, overrides: list[str] | None = None) -> TrainConfig:
    """Read a YAML config (default: the shipped go2_trot.yaml) and apply `key=value` overrides."""
    path = Path(path) if path is not None else default_config_path()
    if not path.is_file():
        raise ConfigError(f"config file {path} not found; pass an existing YAML file (e.g. {default_config_path()})")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({e})") from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping of sections")
    cfg = from_dict(raw or {}, str(path))
    return apply_overrides(cfg, overrides or [])


def to_dict(cfg: TrainConfig) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def dump_yaml(cfg: TrainConfig) -> str:
    return yaml.safe_dump(to_dict(cfg), sort_keys=False)
