"""The safety rules: pure functions from one observation to the limits it violates.

Each rule returns a list of `Violation`s (empty when all is well), never raises on bad
numbers (NaN/inf are themselves a violation) and knows nothing of time, latching or ROS;
`SafetyMonitor` decides when each rule applies. Arrays are in SDK joint order.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from surrogait_core.safety.thresholds import SafetyThresholds
from surrogait_core.wire.go2_wire import ESTOP_KEYS, MODE_SERVO, MotorCommands
from surrogait_core.wire.motor_driver_law import pd_torques

JOINT_NAMES = tuple(f"{leg}_{j}" for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh", "calf"))


@dataclasses.dataclass(frozen=True)
class Violation:
    cause: str  # stable identifier, e.g. "joint_velocity"
    detail: str  # one human-readable sentence with the numbers
    values: dict[str, Any] = dataclasses.field(default_factory=dict)


def _worst(excess: np.ndarray) -> int:
    return int(np.argmax(excess))


def _nonfinite(named: Iterable[tuple[str, Any]]) -> list[str]:
    return [name for name, x in named if not np.all(np.isfinite(np.asarray(x, dtype=np.float64)))]


# --- robot state (rt/lowstate) ------------------------------------------------------------


def check_state_finite(quat_wxyz, gyro_b, accel_b, joint_pos, joint_vel, joint_tau_est) -> list[Violation]:
    bad = _nonfinite(
        [("quat_wxyz", quat_wxyz), ("gyro_b", gyro_b), ("accel_b", accel_b), ("joint_pos", joint_pos),
         ("joint_vel", joint_vel), ("joint_tau_est", joint_tau_est)]
    )
    if not bad:
        return []
    return [Violation("state_not_finite", f"NaN/inf in lowstate field(s) {', '.join(bad)}", {"fields": bad})]


def check_joint_position(joint_pos: np.ndarray, th: SafetyThresholds) -> list[Violation]:
    """Joints past their fault limit, between the soft range of the policy's contract and the hard
    range (only meaningful while the robot is driven upright)."""
    lower, upper = th.joint_pos_fault_limits()
    excess = np.maximum(lower - joint_pos, joint_pos - upper)
    if not np.any(excess > 0):
        return []
    i = _worst(excess)
    return [Violation(
        "joint_position_limit",
        f"{JOINT_NAMES[i]} at {joint_pos[i]:.3f} rad is outside [{lower[i]:.3f}, {upper[i]:.3f}], past its soft "
        f"range towards its stops [{th.joint_pos_lower[i]:.3f}, {th.joint_pos_upper[i]:.3f}]",
        {"joint": JOINT_NAMES[i], "q": float(joint_pos[i]), "fault_lower": float(lower[i]),
         "fault_upper": float(upper[i]), "lower": float(th.joint_pos_lower[i]), "upper": float(th.joint_pos_upper[i])},
    )]


def check_joint_velocity(joint_vel: np.ndarray, th: SafetyThresholds) -> list[Violation]:
    limit = th.joint_vel_fraction * th.joint_vel_limit
    excess = np.abs(joint_vel) - limit
    if not np.any(excess > 0):
        return []
    i = _worst(excess / limit)
    return [Violation(
        "joint_velocity",
        f"{JOINT_NAMES[i]} at {joint_vel[i]:.2f} rad/s exceeds {limit[i]:.2f} rad/s",
        {"joint": JOINT_NAMES[i], "dq": float(joint_vel[i]), "limit": float(limit[i])},
    )]


def check_estimated_torque(joint_tau_est: np.ndarray, th: SafetyThresholds) -> list[Violation]:
    """Motors at or near their torque limit (the monitor requires it to persist before acting)."""
    limit = th.tau_est_fraction * th.joint_torque_limit
    excess = np.abs(joint_tau_est) - limit
    if not np.any(excess >= 0):
        return []
    i = _worst(excess / limit)
    return [Violation(
        "estimated_torque",
        f"{JOINT_NAMES[i]} estimated torque {joint_tau_est[i]:.1f} N·m at/above {limit[i]:.1f} N·m",
        {"joint": JOINT_NAMES[i], "tau_est": float(joint_tau_est[i]), "limit": float(limit[i])},
    )]


def roll_pitch(quat_wxyz: np.ndarray) -> tuple[float, float]:
    """Roll and pitch (rad, ZYX Euler) of the base from its IMU quaternion (w, x, y, z)."""
    w, x, y, z = (float(v) for v in quat_wxyz)
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    return roll, pitch


def check_attitude(quat_wxyz: np.ndarray, th: SafetyThresholds) -> list[Violation]:
    roll, pitch = roll_pitch(quat_wxyz)
    if abs(roll) <= th.max_roll_rad and abs(pitch) <= th.max_pitch_rad:
        return []
    return [Violation(
        "base_tilt",
        f"base roll {roll:.2f} rad / pitch {pitch:.2f} rad beyond {th.max_roll_rad} / {th.max_pitch_rad} rad",
        {"roll": roll, "pitch": pitch, "max_roll": th.max_roll_rad, "max_pitch": th.max_pitch_rad},
    )]


def check_base_height(base_height_m: float, source: str, th: SafetyThresholds) -> list[Violation]:
    if not math.isfinite(base_height_m):
        return [Violation("base_height_not_finite", f"base height from {source} is {base_height_m}",
                          {"source": source})]
    if base_height_m >= th.min_base_height_m:
        return []
    return [Violation(
        "base_too_low",
        f"base height {base_height_m:.3f} m ({source}) below {th.min_base_height_m:.3f} m",
        {"height": base_height_m, "min": th.min_base_height_m, "source": source},
    )]


def check_gamepad_estop(keys: frozenset[str]) -> list[Violation]:
    if not ESTOP_KEYS <= keys:
        return []
    return [Violation("estop_gamepad", f"gamepad e-stop chord {'+'.join(sorted(ESTOP_KEYS))} pressed",
                      {"keys": sorted(keys)})]


# --- commands on the wire (rt/lowcmd) -----------------------------------------------------


def driven(cmd: MotorCommands) -> np.ndarray:
    """Motors a command drives with stiffness (servo mode, kp > 0)."""
    return (cmd.mode == MODE_SERVO) & (cmd.kp > 0.0)


def check_command_finite(cmd: MotorCommands) -> list[Violation]:
    servo = cmd.mode == MODE_SERVO
    fields = [("q", cmd.q[servo]), ("dq", cmd.dq[servo]), ("kp", cmd.kp), ("kd", cmd.kd), ("tau", cmd.tau[servo])]
    bad = _nonfinite(fields)
    if not bad:
        return []
    return [Violation("command_not_finite", f"NaN/inf in LowCmd field(s) {', '.join(bad)}", {"fields": bad})]


def commanded_torque(cmd: MotorCommands, joint_pos: np.ndarray, joint_vel: np.ndarray) -> np.ndarray:
    """The torque each motor driver computes now, before it saturates (the drivers' own law)."""
    return pd_torques(cmd, joint_pos, joint_vel)


def check_commanded_torque(cmd: MotorCommands, joint_pos, joint_vel, th: SafetyThresholds) -> list[Violation]:
    if not np.any(driven(cmd)):
        return []
    tau = commanded_torque(cmd, joint_pos, joint_vel)
    limit = th.commanded_torque_factor * th.joint_torque_limit
    excess = np.abs(tau) - limit
    if not np.any(excess > 0):
        return []
    i = _worst(excess / limit)
    return [Violation(
        "commanded_torque",
        f"{JOINT_NAMES[i]} commanded torque {tau[i]:.1f} N·m exceeds {limit[i]:.1f} N·m",
        {"joint": JOINT_NAMES[i], "tau_cmd": float(tau[i]), "limit": float(limit[i]),
         "q_target": float(cmd.q[i]), "q": float(joint_pos[i]), "kp": float(cmd.kp[i])},
    )]


def check_command_targets(cmd: MotorCommands, th: SafetyThresholds) -> list[Violation]:
    """Stiff position targets outside the joint's range (± margin)."""
    on = driven(cmd)
    low = np.where(on, (th.joint_pos_lower - th.target_limit_margin_rad) - cmd.q, -np.inf)
    high = np.where(on, cmd.q - (th.joint_pos_upper + th.target_limit_margin_rad), -np.inf)
    excess = np.maximum(low, high)
    if not np.any(excess > 0):
        return []
    i = _worst(excess)
    return [Violation(
        "command_target_limit",
        f"{JOINT_NAMES[i]} target {cmd.q[i]:.3f} rad outside [{th.joint_pos_lower[i]:.3f}, "
        f"{th.joint_pos_upper[i]:.3f}]",
        {"joint": JOINT_NAMES[i], "q_target": float(cmd.q[i]), "lower": float(th.joint_pos_lower[i]),
         "upper": float(th.joint_pos_upper[i])},
    )]


def check_command_jump(cmd: MotorCommands, prev: MotorCommands, dt_s: float, th: SafetyThresholds) -> list[Violation]:
    """A stiff target moving faster than the joint can follow since the previous stiff command."""
    both = driven(cmd) & driven(prev)
    if not np.any(both):
        return []
    # Two commands closer than a control period (e.g. two writers) still get a full period's allowance.
    allowed = th.target_jump_factor * th.joint_vel_limit * max(dt_s, th.control_period_s)
    excess = np.where(both, np.abs(cmd.q - prev.q) - allowed, -np.inf)
    if not np.any(excess > 0):
        return []
    i = _worst(excess / allowed)
    return [Violation(
        "command_target_jump",
        f"{JOINT_NAMES[i]} target jumped {cmd.q[i] - prev.q[i]:+.3f} rad in {dt_s * 1e3:.1f} ms "
        f"(allowed {allowed[i]:.3f} rad)",
        {"joint": JOINT_NAMES[i], "q_target": float(cmd.q[i]), "q_target_prev": float(prev.q[i]),
         "dt_s": dt_s, "allowed": float(allowed[i])},
    )]
