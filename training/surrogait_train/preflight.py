"""Pre-flight: fly a policy through the session it is about to walk, against the safety monitor's own limits.

A policy can pass `eval` (no falls, velocity tracked) and still be damped in deployment: the safety
monitor latches on the first sample of a calf past its rated speed, a command asking a hip for 1.5
times its torque, or the base tilted past 0.6 rad. Those peaks last a few milliseconds, between
control steps. So the pre-flight runs the session (a list of timed velocity commands, e.g. the demo's)
on a batch of robots through the policy node's own path (its command slew, `PolicyRunner` + onnxruntime,
targets clipped to the contract's soft range) at the motor drivers' 2 ms PD step, and measures every rule
(joint speed, commanded torque, motor saturation, tilt, a joint past its soft range towards the position fault)
at every physics step, as a fraction of the monitor's threshold (`default_thresholds`, the same
function the monitor uses). A policy is cleared when no robot falls and every peak stays under
`PREFLIGHT_CEILING` of its threshold: the margin covers what the trainer's MuJoCo does not model
(the rehearsal's timing, a real robot).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from surrogait_core.policy.command_input import COMMAND_SLEW_RATE, slewed
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_core.wire.motor_driver_law import pd_torque
from surrogait_train.conditions import EvalCondition
from surrogait_train.config import EnvConfig
from surrogait_train.evaluate import tracking_fraction
from surrogait_train.state import robot_state_from_mujoco
from surrogait_train.symmetry import left_right_imbalance

PREFLIGHT_CEILING = 0.9  # of each threshold
# Of the way from a joint's soft limit to its position fault: the band is narrow (the Go1's calf: 0.07 rad), and a
# Go1 demo policy that went 0.80 of it here overshot the whole band in the rehearsal and was damped
# (docs/training-log.md, 2026-12-05 (6))
PREFLIGHT_POSITION_CEILING = 0.5
PREFLIGHT_SEED = 40_000  # its own seed, apart from training's and eval's
DRIVER_PD_DT_S = 0.002  # the Go2's and Go1's motor drivers close their PD loop at >= 500 Hz


@dataclasses.dataclass(frozen=True)
class SessionStep:
    """Hold this velocity command (vx m/s, vy m/s, yaw rate rad/s; body frame) for `duration_s`."""

    duration_s: float
    command: tuple[float, float, float]


@dataclasses.dataclass
class PreflightResult:
    policy: str
    robots: int
    session_s: float
    falls: int
    # each rule's worst sample over every robot and physics step, as a fraction of the monitor's threshold
    joint_speed: float
    joint_speed_joint: str
    joint_speed_by_joint: dict[str, float]  # every joint's peak speed as a fraction of its threshold
    joint_speed_rms_by_joint: dict[str, float]  # rad/s, every joint's RMS speed after the first second
    commanded_torque: float
    commanded_torque_joint: str
    motor_saturation: float  # the longest run of a motor at its estimated-torque threshold / the time it may last
    tilt: float
    vx_rmse: float  # m/s, over the session after its first second, robots that did not fall
    yaw_rate_rmse: float = 0.0  # rad/s, the same samples
    # how far a joint went past its soft limit (where the targets are clipped) towards the monitor's joint-position
    # fault bound, as a fraction of that distance (0: it stayed in its soft range)
    joint_position: float = 0.0
    joint_position_joint: str = ""
    ceiling: float = PREFLIGHT_CEILING

    @property
    def worst(self) -> float:
        return max(self.joint_speed, self.commanded_torque, self.motor_saturation, self.tilt, self.joint_position)

    @property
    def left_right_imbalance(self) -> tuple[float, str]:
        """The largest ratio of RMS joint speeds between a joint and its mirror twin (1 = a symmetric gait), and
        the faster joint (surrogait_train.symmetry)."""
        return left_right_imbalance(self.joint_speed_rms_by_joint)

    @property
    def tracking(self) -> float:
        """The worse of vx and yaw-rate RMSE as a fraction of the eval's WALKS bound (<= 1: tracks as walking
        asks). A policy that holds its speed but spins is not a good tracker."""
        return tracking_fraction(self.vx_rmse, self.yaw_rate_rmse)

    @property
    def cleared(self) -> bool:
        return self.falls == 0 and self.worst <= self.ceiling and self.joint_position <= PREFLIGHT_POSITION_CEILING

    def summary(self) -> str:
        verdict = "cleared" if self.cleared else "NOT cleared"
        past_soft = f" ({self.joint_position_joint})" if self.joint_position else ""
        return (f"{verdict}: falls {self.falls}/{self.robots}, of the monitor's thresholds: joint speed "
                f"{self.joint_speed:.2f} ({self.joint_speed_joint}), commanded torque {self.commanded_torque:.2f} "
                f"({self.commanded_torque_joint}), motor saturation {self.motor_saturation:.2f}, tilt {self.tilt:.2f}, "
                f"joint position {self.joint_position:.2f}{past_soft}; "
                f"vx RMSE {self.vx_rmse:.3f} m/s, yaw-rate RMSE {self.yaw_rate_rmse:.3f} rad/s")

    def as_dict(self) -> dict:
        ratio, joint = self.left_right_imbalance
        return {**dataclasses.asdict(self), "worst": self.worst, "cleared": self.cleared,
                "left_right_imbalance": ratio, "left_right_imbalance_joint": joint}


def preflight(
    onnx_path: Path | str,
    session: Sequence[SessionStep],
    robots: int = 16,
    seed: int = PREFLIGHT_SEED,
    num_threads: int = 2,
    action_delay_s: float = 0.0,
    command_slew_rate: tuple[float, float, float] = COMMAND_SLEW_RATE,
) -> PreflightResult:
    """Walk `robots` robots through `session` from a standing start and measure the monitor's rules.

    `action_delay_s`: new joint targets reach the motors this late (2 ms steps), as the deployment's
    sense-to-actuate latency makes them. `command_slew_rate`: the session's commands are followed as the policy
    node follows the operator's (`CommandSlewLimiter`; zeros: at once)."""
    from surrogait_train.env import LocomotionEnv

    policy = OnnxPolicy(onnx_path)
    contract = policy.contract
    substeps = max(1, int(round(contract.control_dt_s / DRIVER_PD_DT_S)))
    env = LocomotionEnv(EnvConfig(
        robot=contract.robot, num_envs=robots, num_threads=num_threads, backend="cpu",
        physics_dt_s=contract.control_dt_s / substeps, substeps=substeps, kp=list(contract.kp), kd=list(contract.kd),
        gait=contract.gait.name, episode_length_s=sum(s.duration_s for s in session) + 1.0, init_joint_noise_rad=0.02,
    ), seed=seed)  # fmt: skip
    if action_delay_s > 0:
        env.set_variation(EvalCondition("delay", action_delay_s=action_delay_s).variation(
            robots, env.foot_friction(), env.cfg.physics_dt_s))
    th = default_thresholds(env.spec, contract)
    kp, kd = np.asarray(contract.kp, dtype=np.float64), np.asarray(contract.kd, dtype=np.float64)
    speed_limit = th.joint_vel_fraction * th.joint_vel_limit
    torque_cmd_limit = th.commanded_torque_factor * th.joint_torque_limit
    saturated_at = th.tau_est_fraction * th.joint_torque_limit
    # A target is clipped to the soft range, yet the joint can overshoot it (a stance leg straightening under load):
    # the monitor faults a joint one joint_pos_fault_fraction of the way from its soft limit to its stop.
    fault_lo, fault_hi = th.joint_pos_fault_limits()
    soft_lo, soft_hi = th.soft_joint_pos_limits()
    band_lo, band_hi = np.maximum(soft_lo - fault_lo, 1e-6), np.maximum(fault_hi - soft_hi, 1e-6)
    position = np.zeros(12)
    runner = PolicyRunner(policy)
    runner.reset(num_robots=robots)
    env.reset(seed=seed, randomize_episode_start=False)
    # as the policy node follows them: slewed from a standstill (a step to a stop felled whole batches)
    commands = slewed(np.concatenate([np.tile(s.command, (int(round(s.duration_s / contract.control_dt_s)), 1))
                                      for s in session]), contract.control_dt_s, command_slew_rate)  # fmt: skip
    settle = int(round(1.0 / contract.control_dt_s))
    alive = np.ones(robots, dtype=bool)
    speed = np.zeros(12)
    torque_cmd = np.zeros(12)
    saturated_s = np.zeros((robots, 12))
    longest_saturated_s = 0.0
    tilt = 0.0
    vx_err2, yaw_err2, vx_count = 0.0, 0.0, 0
    speed2_sum, speed_count = np.zeros(12), 0
    state = env.state
    for t, cmd in enumerate(commands):
        terms = runner.terms(
            state.base_ang_vel_b.numpy(), state.projected_gravity_b.numpy(), state.joint_pos.numpy(),
            state.joint_vel.numpy(), np.tile(cmd, (robots, 1)), np.full(robots, t * contract.control_dt_s),
            state.base_lin_vel_b.numpy(),
        )  # fmt: skip
        targets = runner.act(terms).joint_targets.astype(np.float64)
        state, _ = env.advance_physics(targets)
        sub = env.physics.substep_states  # (N, S, nstate)
        sub_state = robot_state_from_mujoco(sub.reshape(-1, sub.shape[-1]), env.physics.layout, env.spec.sdk_from_model)
        q = sub_state.joint_pos.double().numpy().reshape(robots, substeps, 12)
        dq = sub_state.joint_vel.double().numpy().reshape(robots, substeps, 12)
        quat = sub[:, :, env.physics.layout.qpos][:, :, 3:7]
        live = alive[:, None, None]
        speed = np.maximum(speed, np.max(np.where(live, np.abs(dq) / speed_limit, 0.0), axis=(0, 1)))
        past_soft = np.maximum((soft_lo - q) / band_lo, (q - soft_hi) / band_hi)
        position = np.maximum(position, np.max(np.where(live, np.maximum(past_soft, 0.0), 0.0), axis=(0, 1)))
        # the monitor judges each LowCmd's kp·(q*−q) − kd·dq with the newest LowState; the q the drivers see
        # at each PD step stands in for it
        tau_cmd = pd_torque(kp, kd, targets[:, None, :], q, dq)
        torque_cmd = np.maximum(torque_cmd, np.max(np.where(live, np.abs(tau_cmd) / torque_cmd_limit, 0.0),
                                                   axis=(0, 1)))
        tau = pd_torque(kp, kd, targets[:, None, :], q, dq, torque_limit=th.joint_torque_limit)  # what they deliver
        for k in range(substeps):
            saturated_s = np.where(np.abs(tau[:, k]) >= saturated_at, saturated_s + DRIVER_PD_DT_S, 0.0)
            longest_saturated_s = max(longest_saturated_s, float(np.max(saturated_s[alive], initial=0.0)))
        w, x, y, z = np.moveaxis(quat[alive], -1, 0)
        roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
        pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1, 1))
        tilt = max(tilt, float(np.max(np.maximum(np.abs(roll) / th.max_roll_rad, np.abs(pitch) / th.max_pitch_rad),
                                      initial=0.0)))
        fell = (state.base_height.numpy() < env.cfg.fall_height_m) | (
            state.projected_gravity_b.numpy()[:, 2] > env.cfg.fall_tilt_gz)
        alive &= ~fell
        if t >= settle:
            speed2_sum += np.sum(dq[alive] ** 2, axis=(0, 1))
            speed_count += int(alive.sum()) * substeps
            err = state.base_lin_vel_b.numpy()[alive, 0] - cmd[0]
            vx_err2 += float(np.sum(err**2))
            yaw_err2 += float(np.sum((state.base_ang_vel_b.numpy()[alive, 2] - cmd[2]) ** 2))
            vx_count += int(alive.sum())
    env.close()
    names = contract.joint_names
    return PreflightResult(
        policy=str(onnx_path), robots=robots, session_s=len(commands) * contract.control_dt_s,
        falls=int((~alive).sum()),
        joint_speed=float(speed.max()), joint_speed_joint=names[int(speed.argmax())],
        joint_speed_by_joint={name: round(float(v), 3) for name, v in zip(names, speed, strict=True)},
        joint_speed_rms_by_joint={name: round(float(v), 3)
                                  for name, v in zip(names, np.sqrt(speed2_sum / max(speed_count, 1)), strict=True)},
        commanded_torque=float(torque_cmd.max()), commanded_torque_joint=names[int(torque_cmd.argmax())],
        motor_saturation=longest_saturated_s / th.tau_est_persist_s, tilt=tilt,
        vx_rmse=float(np.sqrt(vx_err2 / max(vx_count, 1))), yaw_rate_rmse=float(np.sqrt(yaw_err2 / max(vx_count, 1))),
        joint_position=float(position.max()),
        joint_position_joint=names[int(position.argmax())] if position.any() else "",
    )  # fmt: skip


def best_cleared(
    candidates: Sequence[Path], session: Sequence[SessionStep], robots: int = 16, report=None
) -> tuple[int, list[PreflightResult]]:
    """Pre-flight every candidate; returns the index of the cleared one that tracks the command best
    (the lowest `tracking`: vx and yaw rate against the eval's bounds), or, when none is cleared, of the one
    that came closest (fewest falls, then the lowest worst peak), and every result.
    `report(i, result)` follows each flight.
    """
    results: list[PreflightResult] = []
    for i, path in enumerate(candidates):
        results.append(preflight(path, session, robots=robots))
        if report is not None:
            report(i, results[-1])
    cleared = [i for i, r in enumerate(results) if r.cleared]
    if cleared:
        return min(cleared, key=lambda i: results[i].tracking), results
    return min(range(len(results)), key=lambda i: (results[i].falls, results[i].worst)), results
