"""The torque law of a Go2 motor driver, the one place it is written.

The simulator applies it (at the physics rate, or once per LowCmd), the safety monitor judges a
command by the torque it makes the drivers produce, and fault analysis replays it. All arrays are
in SDK motor order.
"""

from __future__ import annotations

import numpy as np

from surrogait_core.wire.go2_wire import MODE_SERVO, POS_STOP_F, VEL_STOP_F, MotorCommands

# DDS carries the sentinels as float32 (2.146e9 becomes 2145999872.0): compare with a margin.
POS_SENTINEL_MIN = 0.99 * POS_STOP_F
VEL_SENTINEL_MIN = 0.99 * VEL_STOP_F


def pd_torques(cmd: MotorCommands | None, joint_pos: np.ndarray, joint_vel: np.ndarray,
               torque_limit: np.ndarray | None = None) -> np.ndarray:
    """Motor torques (N·m): tau = kp·(q* − q) + kd·(dq* − dq) + tau_ff, clipped to `torque_limit` if given.

    As on the robot's drivers: a motor in stop mode (mode != servo) gives no torque; a position
    target at the "no position" sentinel drops the kp term, a velocity target at the "no velocity"
    sentinel drops the kd term. No command yet (None) means the motors are passive. Unclipped
    (`torque_limit` None) it is what the command asks for, before the driver saturates.
    """
    if cmd is None:
        return np.zeros_like(joint_pos, dtype=np.float64)
    has_pos = np.abs(cmd.q) < POS_SENTINEL_MIN
    has_vel = np.abs(cmd.dq) < VEL_SENTINEL_MIN
    pos_term = np.where(has_pos, cmd.kp * (np.where(has_pos, cmd.q, 0.0) - joint_pos), 0.0)
    vel_term = np.where(has_vel, cmd.kd * (np.where(has_vel, cmd.dq, 0.0) - joint_vel), 0.0)
    tau = pos_term + vel_term + cmd.tau
    if torque_limit is not None:
        tau = np.clip(tau, -torque_limit, torque_limit)
    return np.where(cmd.mode == MODE_SERVO, tau, 0.0)
