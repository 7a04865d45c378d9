"""The torque law of a Go2 motor driver, the one place it is written.

The simulator applies it (at the physics rate, or once per LowCmd), the safety monitor judges a
command by the torque it makes the drivers produce, fault analysis replays it, and the trainer's
evaluation, pre-flight and rewards compute the torque the robot's motors make with it (`pd_torque`).
All arrays are in SDK motor order.
"""

from __future__ import annotations

import numpy as np

from surrogait_core.wire.go2_wire import MODE_SERVO, POS_STOP_F, VEL_STOP_F, MotorCommands

# DDS carries the sentinels as float32 (2.146e9 becomes 2145999872.0): compare with a margin.
POS_SENTINEL_MIN = 0.99 * POS_STOP_F
VEL_SENTINEL_MIN = 0.99 * VEL_STOP_F


def pd_torque(kp, kd, joint_targets, joint_pos, joint_vel, joint_vel_targets=0.0, tau_ff=0.0, torque_limit=None):
    """tau = kp·(q* − q) + kd·(dq* − dq) + tau_ff, clipped to ±`torque_limit` if given: the law in servo mode.

    Elementwise on numpy arrays or torch tensors alike (broadcast; gradients flow through torch's), so the
    trainer's batched robots use the very law the drivers run. Unclipped it is what a command asks for.
    """
    tau = kp * (joint_targets - joint_pos) + kd * (joint_vel_targets - joint_vel) + tau_ff
    return tau if torque_limit is None else tau.clip(-torque_limit, torque_limit)


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
    # a sentinel drops its term (gain, target and measurement all zero there, whatever the others hold)
    kp, q_target, q = (np.where(has_pos, x, 0.0) for x in (cmd.kp, cmd.q, joint_pos))
    kd, dq_target, dq = (np.where(has_vel, x, 0.0) for x in (cmd.kd, cmd.dq, joint_vel))
    tau = pd_torque(kp, kd, q_target, q, dq, dq_target, cmd.tau, torque_limit)
    return np.where(cmd.mode == MODE_SERVO, tau, 0.0)
