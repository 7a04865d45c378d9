"""Evaluate an exported ONNX policy in MuJoCo through the deployment path.

Per control step, through the policy node's own `PolicyRunner` (batched): raw terms (SDK order,
body frame; joint positions relative to the contract's default pose) -> `ObservationBuilder` ->
`OnnxPolicy.act` -> joint targets clipped to the contract's soft joint range -> MuJoCo PD physics.
The robot, default pose, soft range, gains, control period and gait come from the ONNX file's
contract; only the physics is ours.

Under an `EvalCondition` (conditions.py: friction, mass, motor strength, delay, pushes, flipping
commands, another contact model) the same episodes run in that perturbed world; the default is
nominal.

Held-out seeds and a fixed command set: command i of `num_episodes` is a deterministic
low-discrepancy point in vx in [0.3, 1.0], |vy| <= 0.3, |yaw rate| <= 0.5. Episodes do not
reset; a fall ends the robot's episode. RMSEs are over every control step after the first
`settle_s` seconds of non-fallen robots (the start from rest is not tracking error).

WALKS = no falls, vx RMSE <= 0.15 m/s, yaw-rate RMSE <= 0.2 rad/s (issue 3's definition), with the
RMSEs of the instantaneous (per control step) body velocities — the strict reading. A trot makes
the yaw rate oscillate at the step frequency, so the JSON also reports, for information only, RMSEs
of velocities averaged over each gait period (`*_rmse_gait_avg`); they never decide WALKS.

WALKS does not ask which gait carries the robot: `gait_match` says whether the feet pair up as the gait's
schedule has them (surrogait_train.gait_pattern; bench/skills.py asks it of every gait it judges).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.terrain import CELL_M, COURSE_END_X
from surrogait_core.wire.motor_driver_law import pd_torque
from surrogait_train.conditions import NOMINAL, EvalCondition
from surrogait_train.config import EnvConfig
from surrogait_train.gait_pattern import LEG_PAIRS, gait_match
from surrogait_train.gaits import GAITS
from surrogait_train.state import RobotState

WALK_VX_RMSE = 0.15
WALK_YAW_RMSE = 0.2
STAND_RMSE_M_S = 0.05  # told to stand (a zero command): |vx| and |vy| RMSE at most this, no fall (issue 34)


def tracking_fraction(vx_rmse: float, yaw_rate_rmse: float) -> float:
    """The worse of vx and yaw-rate RMSE as a fraction of WALKS' bounds (<= 1: tracks as walking asks)."""
    return max(vx_rmse / WALK_VX_RMSE, yaw_rate_rmse / WALK_YAW_RMSE)
EVAL_SEED = 10_000  # training seeds are small integers; evaluation uses its own


# Forward speeds each gait is judged over (m/s): the fast gaits are asked to go fast (issue 14).
GAIT_EVAL_VX: dict[str, tuple[float, float]] = {"bound": (0.5, 1.5), "gallop": (0.5, 1.5)}
DEFAULT_EVAL_VX = (0.3, 1.0)


class UnknownGaitError(ValueError):
    """A gait the policy was not trained for."""

TERRAIN_EVAL_VX = (0.6, 1.0)  # straight over a course: 10 s at 0.6 m/s passes its end (CROSSED_X) with room
CROSSED_X = COURSE_END_X + 0.3  # m: the base this far past the feature's end, so every foot is off it


class CourseJudge:
    """Whose steps still count. A robot's run ends when it falls, or on a course when its base passes the
    finish line (`finish_x`, m) standing: it crossed, and nothing it does afterwards counts. The height field
    ends a few metres past the course, so a fast robot still walking when the episode ends would otherwise
    step off the world's edge and be counted as a fall on the course."""

    def __init__(self, num_robots: int, finish_x: float | None) -> None:
        self.finish_x = finish_x
        self.fell = np.zeros(num_robots, dtype=bool)
        self.crossed = np.zeros(num_robots, dtype=bool)
        self.fall_x = np.full(num_robots, np.nan)  # m: the base's world x when it fell (NaN: it did not)

    @property
    def running(self) -> np.ndarray:
        """(N,) bool: robots still being judged (neither fallen nor finished)."""
        return ~(self.fell | self.crossed)

    def update(self, base_x_w: np.ndarray, fell: np.ndarray) -> None:
        """One step's base positions (world x, m) and falls."""
        running = self.running
        self.fall_x[running & fell] = base_x_w[running & fell]
        self.fell |= running & fell
        if self.finish_x is not None:
            self.crossed |= running & ~fell & (base_x_w >= self.finish_x)


EVAL_VY = (-0.3, 0.3)  # m/s
EVAL_YAW = (-0.5, 0.5)  # rad/s


def command_set(num: int, vx=DEFAULT_EVAL_VX, vy=EVAL_VY, yaw=EVAL_YAW) -> np.ndarray:
    """Fixed, spread-out commands (a Halton-like sequence with bases 2, 3, 5)."""

    def radical_inverse(i: int, base: int) -> float:
        f, r = 1.0, 0.0
        while i > 0:
            f /= base
            r += f * (i % base)
            i //= base
        return r

    u = np.array([[radical_inverse(i + 1, b) for b in (2, 3, 5)] for i in range(num)])
    lo = np.array([vx[0], vy[0], yaw[0]])
    hi = np.array([vx[1], vy[1], yaw[1]])
    return lo + u * (hi - lo)


@dataclasses.dataclass
class EvalResult:
    policy: str
    condition: str
    gait: str
    terrain: str
    crossed_rate: float | None  # on a terrain course: the share of robots that crossed it without falling
    episodes: int
    episode_s: float
    fall_rate: float
    vx_rmse: float
    vy_rmse: float
    yaw_rate_rmse: float
    vx_rmse_gait_avg: float
    yaw_rate_rmse_gait_avg: float
    cost_of_transport: float
    foot_slip_m_s: float
    soft_range_excess_rad: float  # largest excursion of a joint outside the contract's soft range (0: never)
    soft_range_excess_joint: str  # the joint of that excursion ("" if none)
    walks: bool
    commands: list[list[float]]
    per_episode_vx_rmse: list[float]
    fell: list[bool]
    # how the feet pair up against the gait's schedule (surrogait_train.gait_pattern): 1 = as scheduled; NaN: no
    # robot judged; meaningless at a zero command, where the reference stands
    gait_match: float = math.nan
    # per episode, the base's world x (m) where it fell, None if it did not: on a course, where (the feature starts
    # at surrogait_core.terrain.COURSE_START_X; the slope climbs for 0.4 of its length, then a plateau, then down)
    fall_x_m: list[float | None] = dataclasses.field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2)


def eval_env_config(contract, num_robots: int, episode_s: float, num_threads: int = 1, **world) -> EnvConfig:
    """The environment an evaluation walks a policy file in: the file's robot, gains and control period (4 physics
    substeps), its gait, episodes a second longer than judged, small start noise; `world`: EnvConfig fields of the
    world (terrain, model_variant, ...)."""
    substeps = 4
    return EnvConfig(robot=contract.robot, num_envs=num_robots, num_threads=num_threads,
                     physics_dt_s=contract.control_dt_s / substeps, substeps=substeps, kp=list(contract.kp),
                     kd=list(contract.kd), gait=contract.gait.name if contract.gait.name in GAITS else "trot",
                     episode_length_s=episode_s + 1.0, init_joint_noise_rad=0.02, **world)


def has_fallen(state, env_cfg: EnvConfig) -> np.ndarray:
    """(N,) bool: the environment's fall rule (base too low over the ground, or tilted past fall_tilt_gz)."""
    return (state.base_height.numpy() < env_cfg.fall_height_m) | (
        state.projected_gravity_b.numpy()[:, 2] > env_cfg.fall_tilt_gz)


@dataclasses.dataclass(frozen=True)
class RolloutStep:
    """One control period of a `PolicyRollout`."""

    t: int  # control periods before this one
    commands: np.ndarray  # (N, 3) vx, vy (m/s), yaw rate (rad/s): what the policy was told this period
    joint_targets: np.ndarray  # (N, 12) rad, SDK order: what it answered
    before: RobotState  # the state it answered
    state: RobotState  # the state after the period (the base height over the ground under the base)
    touch: torch.Tensor  # (N, 4) N: the feet's touch sensors
    fell: np.ndarray  # (N,) the environment's fall rule on `state`


class PolicyRollout:
    """A policy file walking a batch of robots the way the robot runs it: the deployment's PolicyRunner (the
    contract's observation, onnxruntime, its clip and soft joint range) stepping MuJoCo one control period at a
    time, under an evaluation condition, in one of its gaits, on a course. `steps(commands)` yields each period;
    the eval (`evaluate_policy`) and the investigations in bench/ judge what it yields."""

    def __init__(self, onnx_path: Path | str, num_robots: int, episode_s: float, *, seed: int = EVAL_SEED,
                 num_threads: int = 2, condition: EvalCondition = NOMINAL, gait: str | None = None,
                 terrain: str = "flat", terrain_difficulty: float = 1.0, terrain_cell_m: float = CELL_M):
        from surrogait_train.env import LocomotionEnv

        self.policy = OnnxPolicy(onnx_path)
        self.contract = self.policy.contract
        self.condition = condition
        self.env_cfg = eval_env_config(self.contract, num_robots, episode_s, num_threads,
                                       model_variant=condition.model_variant, terrain=terrain,
                                       terrain_difficulty=terrain_difficulty, terrain_cell_m=terrain_cell_m)
        self.env = LocomotionEnv(self.env_cfg, seed=seed)  # only its physics, resets and state are used
        variation = condition.variation(num_robots, self.env.foot_friction(), self.env_cfg.physics_dt_s)
        if variation is not None:
            self.env.set_variation(variation)
        self.runner = PolicyRunner(self.policy)  # the deployment path, on a batch of robots
        self.runner.reset(num_robots=num_robots)
        if gait is not None:
            try:
                self.runner.set_gait(gait)
            except KeyError as e:
                raise UnknownGaitError(f"{onnx_path}: {e.args[0]}") from None
        self.env.reset(seed=seed, randomize_episode_start=False)
        gains = self.env.robot_dynamics()  # each robot's gains as its physics has them (the condition's motors)
        self.kp, self.kd = gains.kp.double().numpy(), gains.kd.double().numpy()
        self.num_robots = num_robots
        self.num_steps = int(round(episode_s / self.contract.control_dt_s))

    def steps(self, commands: np.ndarray) -> Iterator[RolloutStep]:
        """Every control period of the episode, `commands` (N, 3) as the condition changes them over time."""
        dt, n = self.contract.control_dt_s, self.num_robots
        state = self.env.state
        for t in range(self.num_steps):
            cmds_t = self.condition.commands_at(commands, t * dt)
            terms = self.runner.terms(
                state.base_ang_vel_b.numpy(), state.projected_gravity_b.numpy(), state.joint_pos.numpy(),
                state.joint_vel.numpy(), cmds_t, np.full(n, t * dt), state.base_lin_vel_b.numpy(),
            )  # fmt: skip
            targets = self.runner.act(terms).joint_targets
            kick = self.condition.push_at_step(t, dt)
            if kick:
                self.env.push_base(np.arange(n), np.tile([0.0, kick, 0.0], (n, 1)))
            before = state
            state, touch = self.env.advance_physics(targets)
            yield RolloutStep(t, cmds_t, targets, before, state, touch, has_fallen(state, self.env_cfg))

    def close(self) -> None:
        self.env.close()


def evaluate_policy(
    onnx_path: Path | str,
    num_episodes: int = 32,
    episode_s: float = 10.0,
    seed: int = EVAL_SEED,
    settle_s: float = 1.0,
    num_threads: int = 2,
    commands: np.ndarray | None = None,
    condition: EvalCondition = NOMINAL,
    gait: str | None = None,
    terrain: str = "flat",
    terrain_difficulty: float = 1.0,
    terrain_cell_m: float = CELL_M,
) -> EvalResult:
    """`gait`: one of a multi-gait policy's gaits (default: its contract's `gait`); its commands span
    GAIT_EVAL_VX's forward speeds for that gait. `terrain`: a course of surrogait_core.terrain, walked
    straight ahead (vy and yaw rate 0, vx from TERRAIN_EVAL_VX or the gait's); `crossed_rate` is the share
    of robots whose base passed the course's end standing. `terrain_difficulty` and `terrain_cell_m`: the
    course's level and height-field grid (surrogait_core.terrain.make_terrain)."""
    rollout = PolicyRollout(onnx_path, num_episodes, episode_s, seed=seed, num_threads=num_threads,
                            condition=condition, gait=gait, terrain=terrain, terrain_difficulty=terrain_difficulty,
                            terrain_cell_m=terrain_cell_m)
    contract, env, runner = rollout.contract, rollout.env, rollout.runner
    if commands is not None:
        cmds = np.asarray(commands, dtype=np.float64)
    elif terrain != "flat":
        cmds = command_set(num_episodes, vx=GAIT_EVAL_VX.get(runner.gait.name, TERRAIN_EVAL_VX), vy=(0, 0), yaw=(0, 0))
    else:
        cmds = command_set(num_episodes, vx=GAIT_EVAL_VX.get(runner.gait.name, DEFAULT_EVAL_VX))
    judge = CourseJudge(num_episodes, None if terrain == "flat" else CROSSED_X)
    n = num_episodes
    steps = rollout.num_steps
    settle = int(round(settle_s / contract.control_dt_s))
    errors = np.zeros((steps, n, 3))
    valid = np.zeros((steps, n), dtype=bool)
    energy = np.zeros(n)
    distance = np.zeros(n)
    slip_sum = np.zeros(n)
    slip_count = np.zeros(n)
    same_state = np.zeros(len(LEG_PAIRS))  # per leg pair: judged robot-steps with both feet in the same state
    judged_steps = 0
    soft_lower, soft_upper = runner.soft_joint_pos_lower, runner.soft_joint_pos_upper
    excess = np.zeros(contract.action_size)  # per joint, over judged robots and all steps
    for step in rollout.steps(cmds):
        t, cmds_t, targets, state = step.t, step.commands, step.joint_targets, step.state
        st = {k: v.numpy().astype(np.float64) for k, v in vars(state).items()}
        judge.update(env.base_position_w()[:, 0], step.fell)
        judged = judge.running  # neither fallen nor past the finish
        outside = np.maximum(soft_lower - st["joint_pos"], st["joint_pos"] - soft_upper)
        excess = np.maximum(excess, np.max(outside[judged], axis=0, initial=0.0))
        # power: |tau * dq| summed over joints, tau from the motor drivers' law and torque limits
        tau = pd_torque(rollout.kp, rollout.kd, targets, st["joint_pos"], st["joint_vel"],
                        torque_limit=env.spec.joint_torque_limit)
        v_b, w_b = st["base_lin_vel_b"], st["base_ang_vel_b"]
        if t >= settle:
            err = np.stack([v_b[:, 0] - cmds_t[:, 0], v_b[:, 1] - cmds_t[:, 1], w_b[:, 2] - cmds_t[:, 2]], -1)
            errors[t], valid[t] = err, judged
            energy[judged] += (np.abs(tau * st["joint_vel"]).sum(-1) * contract.control_dt_s)[judged]
            distance[judged] += (np.linalg.norm(v_b[:, :2], axis=-1) * contract.control_dt_s)[judged]
            with torch.no_grad():
                feet_b, jac = env.kinematics(state.joint_pos)
                rel = env.kinematics.foot_velocities(jac, state.joint_vel).numpy()
            feet_vel = v_b[:, None] + np.cross(w_b[:, None], feet_b.numpy()) + rel
            up = -st["projected_gravity_b"][:, None]
            horiz = feet_vel - (feet_vel * up).sum(-1, keepdims=True) * up
            in_contact = step.touch.numpy() > 1.0
            slip_sum += np.where(judged[:, None] & in_contact, np.linalg.norm(horiz, axis=-1), 0).sum(-1)
            slip_count += (judged[:, None] & in_contact).sum(-1)
            same_state += [(in_contact[judged, i] == in_contact[judged, j]).sum() for i, j in LEG_PAIRS]
            judged_steps += int(judged.sum())
    rollout.close()
    rmse = np.sqrt((errors[valid] ** 2).mean(0)) if valid.any() else np.full(3, np.inf)
    per_ep = np.sqrt((errors[..., 0] ** 2 * valid).sum(0) / np.maximum(valid.sum(0), 1))
    # gait-period averages (information only): windows of one period fully inside the valid steps
    window = max(1, int(round(runner.gait.period_s / contract.control_dt_s)))
    usable = (steps - settle) // window * window
    err_w = errors[settle : settle + usable].reshape(-1, window, n, 3).mean(1)
    ok_w = valid[settle : settle + usable].reshape(-1, window, n).all(1)
    rmse_w = np.sqrt((err_w[ok_w] ** 2).mean(0)) if ok_w.any() else np.full(3, np.inf)
    cot = float(energy.sum() / max(env.spec.total_mass_kg * 9.81 * distance.sum(), 1e-9))
    fall_rate = float(judge.fell.mean())
    walks = bool(fall_rate == 0.0 and rmse[0] <= WALK_VX_RMSE and rmse[2] <= WALK_YAW_RMSE)
    return EvalResult(
        policy=str(onnx_path),
        condition=condition.name,
        gait=runner.gait.name,
        terrain=terrain,
        crossed_rate=None if terrain == "flat" else float(judge.crossed.mean()),
        episodes=n,
        episode_s=episode_s,
        fall_rate=fall_rate,
        vx_rmse=float(rmse[0]),
        vy_rmse=float(rmse[1]),
        yaw_rate_rmse=float(rmse[2]),
        vx_rmse_gait_avg=float(rmse_w[0]),
        yaw_rate_rmse_gait_avg=float(rmse_w[2]),
        cost_of_transport=cot,
        foot_slip_m_s=float(slip_sum.sum() / max(slip_count.sum(), 1)),
        soft_range_excess_rad=float(excess.max()),
        soft_range_excess_joint=contract.joint_names[int(excess.argmax())] if excess.max() > 0 else "",
        walks=walks,
        commands=cmds.round(4).tolist(),
        per_episode_vx_rmse=per_ep.round(4).tolist(),
        fell=judge.fell.tolist(),
        gait_match=gait_match(same_state / judged_steps, runner.gait) if judged_steps else math.nan,
        fall_x_m=[None if np.isnan(x) else round(float(x), 3) for x in judge.fall_x],
    )
