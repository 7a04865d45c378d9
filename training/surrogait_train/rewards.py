"""Smooth locomotion rewards for first-order gradients (all terms bounded or quadratic, no cliffs).

Every term is a differentiable function of the (aligned) robot state and the action, so its
value is MuJoCo's and its gradient flows through the surrogate and the leg kinematics:

- velocity tracking  exp(-|v_xy - cmd_xy|^2 / sigma),  exp(-(w_z - cmd_yaw)^2 / sigma)
- posture            |g_xy|^2,  (h - h*)^2,  v_z^2,  |w_xy|^2
- effort             |a_t - a_{t-1}|^2,  |tau|^2,  sum_j max(|tau_j| - f tau_max,j, 0) (torque limits, f = 0.7)
- joint limits       sum_j max(lower_j - q_j, 0) + max(q_j - upper_j, 0) over the soft joint range
                     (legged_gym's dof_pos_limits; targets are clipped to that range, positions can
                     still overshoot it)
- gait (clock-driven dense kinematic targets; training/README.md, Lessons):
    swing height     (z_foot - z_ref(phase))^2, z_ref = r + H sin(pi s) in swing (s: swing progress), r in stance
    stance still     scheduled-stance feet: |v_foot,xy|^2
    foot placement   |p_foot,xy - p_ref,xy(phase)|^2 with the Raibert step length
                     D = v_foot,cmd * T_stance / 2: the foot moves from +D to -D relative to its
                     nominal spot during stance and back during swing.
    support balance  |c_xy|^2, c the centroid of the scheduled stance feet, horizontal: the body over its
                     support (a pace must sway to its stance side; a trot's diagonal passes under the body)
    joint reference  |q - IK(p_ref)|^2: the same clock-driven foot reference (xy above, height
                     lifted by the swing profile) mapped to joint angles by inverse kinematics
                     (detached); a dense joint-space imitation target whose gradient reaches the
                     action through the joint PD model in one step.
Weights are per second (multiplied by the control period), as in legged_gym.
"""

from __future__ import annotations

import torch

from surrogait_core.policy.contract import GaitSpec
from surrogait_core.wire.motor_driver_law import pd_torque
from surrogait_train.config import RewardConfig
from surrogait_train.gaits import GaitBatch
from surrogait_train.kinematics import LegKinematics
from surrogait_train.state import RobotState


def stepping_amplitude(command: torch.Tensor, nominal_feet_b: torch.Tensor, stand_speed_m_s: float) -> torch.Tensor:
    """(N, 1) in [0, 1]: how high the reference lifts the feet for this command. 1 = the gait's full swing; below
    `stand_speed_m_s` of commanded foot speed (|v_xy| + r |yaw rate|, r the feet's mean distance from the base)
    it shrinks in proportion, down to standing on all four feet at a zero command (0 = always step)."""
    if stand_speed_m_s <= 0:
        return torch.ones_like(command[:, :1])
    radius = nominal_feet_b[:, :2].norm(dim=-1).mean()
    speed = command[:, :2].norm(dim=-1, keepdim=True) + radius * command[:, 2:3].abs()
    return (speed / stand_speed_m_s).clamp(0.0, 1.0)


# m: the most a balance step moves a foot: a catch, inside the leg's workspace, whatever the observation says
# (a 0.05 m step answers a 0.25 rad roll at the gain the pace uses; beyond it the robot is falling anyway)
BALANCE_STEP_MAX_M = 0.05
# m: the most the pitch term moves a foot fore or aft: the stance under the centre of mass on a 20° slope
BALANCE_STEP_PITCH_MAX_M = 0.1


def balance_step(
    projected_gravity_b: torch.Tensor, base_ang_vel_b: torch.Tensor, command: torch.Tensor,
    nominal_feet_b: torch.Tensor, gains: tuple[float, ...], pitch_stance: torch.Tensor | None = None,
) -> torch.Tensor:
    """m: how far each foot's reference moves to catch the body (N, 4, 2), Raibert's foot placement on what the
    policy observes; `gains` = (m per unit sin(roll), m per rad/s of roll rate, s on the yaw-rate error[, m per
    unit sin(pitch)[, the sin(pitch) it ignores]]); `pitch_stance` (N, 1), 1 or 0: the robots whose gait takes the
    fore-aft term (None = all).

    Sideways: on a pace each step stands on one side's two feet and the body, beside that line, falls to the
    other side. The policy observes no body velocity, but the fall about the stance line is a roll: a roll
    phi > 0 lifts the left side (projected gravity y = -sin phi) and a roll rate w_x > 0 moves the body above the
    feet to -y, so both move every foot to -y (the stance feet, pushing on the ground, carry the body back).
    Turning: a yaw rate off the command moves each hip at (w - w_cmd) z x p; each foot goes the same way, as a
    foot is placed along the velocity error (the pace's yaw swings with each step's one-sided push).
    Fore-aft: on a slope the body lies along the ground and gravity leans in its frame (projected gravity x =
    -sin(pitch) facing uphill); the reference's stance, centred under the hips, then holds the centre of mass
    h tan(pitch) behind its feet and the robot tips back down the slope. Moving every foot by pitch_m g_x (pitch_m
    = the base's height: h sin(pitch), 7 cm at 15° for a Go2) centres the stance under the centre of mass along
    gravity; on level ground it is zero. Not for every gait: a bounding or galloping body pitches at every stride on
    level ground, and the term would step its feet away from under it (`env.balance_step_pitch_gaits`).
    """
    roll_m, roll_rate_m_s, yaw_rate_s = gains[:3]
    pitch_m = gains[3] if len(gains) > 3 else 0.0
    pitch_deadband = gains[4] if len(gains) > 4 else 0.0
    sideways = roll_m * projected_gravity_b[:, 1:2] - roll_rate_m_s * base_ang_vel_b[:, 0:1]  # (N, 1)
    yaw_error = base_ang_vel_b[:, 2:3] - command[:, 2:3]  # rad/s, (N, 1)
    dx = -yaw_rate_s * yaw_error * nominal_feet_b[:, 1]
    dy = sideways + yaw_rate_s * yaw_error * nominal_feet_b[:, 0]
    shift = torch.stack([dx, dy], dim=-1).clamp(-BALANCE_STEP_MAX_M, BALANCE_STEP_MAX_M)
    if pitch_m:
        gx = projected_gravity_b[:, 0:1]
        if pitch_deadband:  # the stride's own pitching on level ground is the policy's; a slope's is the stance's
            gx = gx - gx.clamp(-pitch_deadband, pitch_deadband)
        fore_aft = (pitch_m * gx).clamp(-BALANCE_STEP_PITCH_MAX_M, BALANCE_STEP_PITCH_MAX_M)
        if pitch_stance is not None:
            fore_aft = fore_aft * pitch_stance
        shift = shift + torch.stack([fore_aft.expand_as(dx), torch.zeros_like(dy)], dim=-1)
    return shift


SWING_PROFILES = ("sine", "lift_first")  # env.gait_swing_profile
TORQUE_LIMITS_AT = ("period_end", "physics_peak")  # reward.torque_limits_at


def swing_path(s_swing: torch.Tensor, profile: str = "sine") -> tuple[torch.Tensor, torch.Tensor]:
    """(lift in [0, 1] of the apex, forward progress in [0, 1] of the step) at swing progress `s_swing`.

    "sine": lift sin(pi s), progress s. "lift_first": lift sqrt(sin(pi s)), progress smoothstep(s) = 3s^2 - 2s^3.
    Why: a blind foot meets a riser anywhere along its step. On the sine path a foot is above 0.83 of its apex
    over the middle 37 % of the step's length; lifted first, over the middle 70 %: a 12 cm apex clears a 10 cm
    riser about twice as often, and the foot comes down more steeply onto the tread."""
    if profile == "sine":
        return torch.sin(torch.pi * s_swing), s_swing
    if profile == "lift_first":
        return torch.sin(torch.pi * s_swing).clamp(min=0.0).sqrt(), s_swing * s_swing * (3.0 - 2.0 * s_swing)
    raise ValueError(f"unknown swing profile {profile!r}; choose one of {', '.join(SWING_PROFILES)}")


def gait_reference(
    gait: GaitSpec | GaitBatch, phases: torch.Tensor, command: torch.Tensor, nominal_feet_b: torch.Tensor,
    foot_radius_m: float, stand_speed_m_s: float = 0.0, balance_shift_m: torch.Tensor | None = None,
    swing_profile: str = "sine",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Reference foot xy (N, 4, 2), height above floor (N, 4) and stance mask (N, 4) for the clock phases
    (one gait for every robot, or each robot's own: `GaitBatch`); with `stand_speed_m_s` the swing shrinks to
    standing at a zero command (`stepping_amplitude`); `balance_shift_m` (N, 4, 2) moves the feet
    (`balance_step`); `swing_profile` shapes the swing's path (`swing_path`)."""
    d = gait.duty_factor
    stance = phases < d
    s_stance = (phases / d).clamp(0, 1)
    s_swing = ((phases - d) / (1 - d)).clamp(0, 1)
    lift, progress = swing_path(s_swing, swing_profile)
    apex = gait.swing_height_m * stepping_amplitude(command, nominal_feet_b, stand_speed_m_s)
    height = foot_radius_m + torch.where(stance, torch.zeros_like(phases), apex * lift)
    # planar velocity each foot must travel at in stance: v_cmd + w_cmd x p_nominal
    px, py = nominal_feet_b[:, 0], nominal_feet_b[:, 1]
    vx = command[:, 0:1] - command[:, 2:3] * py
    vy = command[:, 1:2] + command[:, 2:3] * px
    stance_time = d * gait.period_s  # s; (N, 1) for a GaitBatch
    if isinstance(stance_time, torch.Tensor):
        stance_time = stance_time.unsqueeze(-1)
    half_step = 0.5 * stance_time * torch.stack([vx, vy], dim=-1)  # (N, 4, 2)
    ramp = torch.where(stance, 1 - 2 * s_stance, -1 + 2 * progress).unsqueeze(-1)
    xy = nominal_feet_b[:, :2] + ramp * half_step
    if balance_shift_m is not None:
        xy = xy + balance_shift_m
    return xy, height, stance


def soft_range_violation(joint_pos: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor) -> torch.Tensor:
    """rad by which joints are outside [lower, upper], summed over the joints (N,): 0 inside the range."""
    return ((lower - joint_pos).clamp(min=0) + (joint_pos - upper).clamp(min=0)).sum(-1)


def peak_torque(kp: torch.Tensor, kd: torch.Tensor, joint_targets: torch.Tensor, joint_pos: torch.Tensor,
                joint_vel: torch.Tensor, torque_limit: torch.Tensor) -> torch.Tensor:
    """The PD torque (N m) at a physics step's joint state: its value as the motor delivers it (at most the limit),
    its gradient the unclipped law's, kp per radian of target, so a peak at the limit still says which way is less."""
    asked = pd_torque(kp, kd, joint_targets, joint_pos, joint_vel)
    return asked - (asked - asked.clamp(-torque_limit, torque_limit)).detach()


def compute_rewards(
    state: RobotState,
    action: torch.Tensor,
    last_action: torch.Tensor,
    joint_targets: torch.Tensor,
    command: torch.Tensor,
    phases: torch.Tensor,
    gait: GaitSpec | GaitBatch,
    kinematics: LegKinematics,
    nominal_feet_b: torch.Tensor,
    foot_radius_m: float,
    kp: torch.Tensor,  # (12,) or (N, 12), N m/rad
    kd: torch.Tensor,
    torque_limit: torch.Tensor,
    default_joint_pos: torch.Tensor,
    soft_joint_pos_range: tuple[torch.Tensor, torch.Tensor],
    cfg: RewardConfig,
    dt: float,
    foot_ground_offset: torch.Tensor | None = None,
    stand_speed_m_s: float = 0.0,
    term_means_on_host: bool = True,
    balance_step_gains: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0),
    swing_profile: str = "sine",
    peak_joint_state: tuple[torch.Tensor, torch.Tensor] | None = None,
    pitch_stance: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Total reward (N,) and, for logging, each weighted term's mean over the robots: floats, or with
    `term_means_on_host=False` 0-dim tensors where the robots are (no device-to-host copy every step).

    `peak_joint_state` (joint_pos, joint_vel), each (N, 12): each joint's state at the physics step of its largest
    PD torque in the period (`reward.torque_limits_at` "physics_peak"); torque_limits then reads the torque there.
    `pitch_stance` (N, 1): the robots whose gait's reference takes the balance step's fore-aft term (`balance_step`).
    """
    g = state.projected_gravity_b
    v, w = state.base_lin_vel_b, state.base_ang_vel_b
    feet_b, jac = kinematics(state.joint_pos)
    feet_vel_rel = kinematics.foot_velocities(jac, state.joint_vel)
    up = -g.unsqueeze(1)  # world up in the body frame
    foot_height = state.base_height.unsqueeze(-1) + (feet_b * up).sum(-1)
    if foot_ground_offset is not None:  # on terrain: each foot above the ground under it, not under the base
        foot_height = foot_height - foot_ground_offset
    feet_vel = v.unsqueeze(1) + torch.cross(w.unsqueeze(1).expand_as(feet_b), feet_b, dim=-1) + feet_vel_rel
    feet_vel_h = feet_vel - (feet_vel * up).sum(-1, keepdim=True) * up
    # the reference the residual actor steps to, its balance step included (`reference.GaitReference`)
    shift = (balance_step(g, w, command, nominal_feet_b, balance_step_gains, pitch_stance)
             if any(balance_step_gains) else None)
    ref_xy, ref_height, stance = gait_reference(gait, phases, command, nominal_feet_b, foot_radius_m,
                                                stand_speed_m_s, shift, swing_profile)
    if cfg.joint_ref != 0.0:
        ref_feet = torch.cat([ref_xy, (nominal_feet_b[:, 2] + ref_height - foot_radius_m).unsqueeze(-1)], dim=-1)
        joint_ref = kinematics.inverse(ref_feet, default_joint_pos)
        joint_ref_err = ((state.joint_pos - joint_ref) ** 2).sum(-1)
    else:
        joint_ref_err = torch.zeros_like(state.base_height)
    torque = pd_torque(kp, kd, joint_targets, state.joint_pos, state.joint_vel, torque_limit=torque_limit)
    limits_torque = torque if peak_joint_state is None else peak_torque(kp, kd, joint_targets, *peak_joint_state,
                                                                         torque_limit)
    if cfg.support_balance != 0.0:
        # the stance feet's centroid, horizontal in the body frame (feet_b tilted by the base's roll and pitch)
        weights = stance.float().unsqueeze(-1)
        centroid = (weights * feet_b).sum(1) / weights.sum(1).clamp(min=1.0)
        horizontal = centroid - (centroid * up.squeeze(1)).sum(-1, keepdim=True) * up.squeeze(1)
        support_err = (horizontal**2).sum(-1) * (stance.any(-1)).float()
    else:
        support_err = torch.zeros_like(state.base_height)

    outside_soft_range = soft_range_violation(state.joint_pos, *soft_joint_pos_range)
    lin_err = ((command[:, :2] - v[:, :2]) ** 2).sum(-1)
    yaw_err = (command[:, 2] - w[:, 2]) ** 2
    terms = {
        "track_lin_vel": cfg.track_lin_vel * torch.exp(-lin_err / cfg.tracking_sigma),
        "track_ang_vel": cfg.track_ang_vel * torch.exp(-yaw_err / cfg.tracking_sigma),
        "lin_vel_z": cfg.lin_vel_z * (v * (-g)).sum(-1) ** 2,
        "ang_vel_xy": cfg.ang_vel_xy * (w[:, :2] ** 2).sum(-1),
        "orientation": cfg.orientation * (g[:, :2] ** 2).sum(-1),
        "base_height": cfg.base_height * (state.base_height - cfg.base_height_target_m) ** 2,
        "action_rate": cfg.action_rate * ((action - last_action) ** 2).sum(-1),
        "torque": cfg.torque * (torque**2).sum(-1),
        "torque_limits": cfg.torque_limits * (limits_torque.abs() - cfg.soft_torque_limit_fraction * torque_limit)
        .clamp(min=0).sum(-1),
        "swing_height": cfg.swing_height * ((foot_height - ref_height) ** 2).sum(-1),
        "swing_clearance": cfg.swing_clearance * (~stance * (ref_height - foot_height).clamp(min=0) ** 2).sum(-1),
        "stance_foot_vel": cfg.stance_foot_vel * (stance * (feet_vel_h**2).sum(-1)).sum(-1),
        "foot_placement": cfg.foot_placement * ((feet_b[..., :2] - ref_xy) ** 2).sum(-1).sum(-1),
        "joint_ref": cfg.joint_ref * joint_ref_err,
        "support_balance": cfg.support_balance * support_err,
        "joint_pos_limits": cfg.joint_pos_limits * outside_soft_range,
        "alive": cfg.alive * torch.ones_like(lin_err),
    }
    weighted = torch.stack(list(terms.values())) * dt  # (terms, N): one op per step, not one per term
    means = weighted.detach().mean(1)
    return weighted.sum(0), dict(zip(terms, means.tolist() if term_means_on_host else means.unbind(), strict=True))
