"""Builders of decoded wire samples for the safety unit tests (no DDS, no ROS)."""

from __future__ import annotations

import numpy as np

from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire.go2_wire import MODE_SERVO, Gamepad, LowStateView, MotorCommands

SPEC = load_robot_spec("go2")
# A policy contract as the trainer exports it (its soft joint range), for thresholds built as the node does.


def trained_soft_range_fraction() -> float:
    """The trainer's soft joint range fraction; where the trainer is not installed (the deployment-only
    environment of `make test-jazzy`), the one the shipped policy carries in its contract."""
    try:
        from surrogait_train.config import EnvConfig
    except ModuleNotFoundError:
        from surrogait_bringup.policies import shipped_policy
        from surrogait_core.policy.contract import read_contract

        shipped = read_contract(shipped_policy("go2_trot.onnx"), robot="go2")
        soft = np.asarray(shipped.soft_joint_pos_upper) - np.asarray(shipped.soft_joint_pos_lower)
        return round(float(np.max(soft / (np.asarray(SPEC.joint_pos_upper) - np.asarray(SPEC.joint_pos_lower)))), 6)
    return EnvConfig().soft_joint_range_fraction


CONTRACT = make_locomotion_contract(SPEC, trained_soft_range_fraction())
N = 12


def state(q=None, dq=None, tau=None, quat=(1.0, 0.0, 0.0, 0.0), gyro=(0.0, 0.0, 0.0), keys=()) -> LowStateView:
    return LowStateView(
        tick_ms=0,
        quat_wxyz=np.array(quat, dtype=float),
        gyro_b=np.array(gyro, dtype=float),
        accel_b=np.array([0.0, 0.0, 9.81]),
        joint_pos=SPEC.default_joint_pos.copy() if q is None else np.asarray(q, dtype=float),
        joint_vel=np.zeros(N) if dq is None else np.asarray(dq, dtype=float),
        joint_tau_est=np.zeros(N) if tau is None else np.asarray(tau, dtype=float),
        foot_force=np.zeros(4),
        gamepad=Gamepad(frozenset(keys), 0.0, 0.0, 0.0, 0.0),
    )


def stiff(q=None, kp=40.0, kd=1.0, tau=0.0) -> MotorCommands:
    return MotorCommands(
        mode=np.full(N, MODE_SERVO),
        q=SPEC.default_joint_pos.copy() if q is None else np.asarray(q, dtype=float),
        dq=np.zeros(N),
        kp=np.full(N, kp),
        kd=np.full(N, kd),
        tau=np.full(N, tau),
    )


def damping(kd=1.0) -> MotorCommands:
    return MotorCommands(mode=np.full(N, MODE_SERVO), q=np.zeros(N), dq=np.zeros(N), kp=np.zeros(N),
                         kd=np.full(N, kd), tau=np.zeros(N))


def lying_q() -> np.ndarray:
    return np.tile([0.0, 1.36, -2.65], 4)


def knees_on_their_stops() -> np.ndarray:
    """The folded pose with every calf resting 0.01 rad from its lower stop, as a lying Go2's do."""
    q = lying_q()
    q[2::3] = SPEC.joint_pos_lower[2::3] + 0.01
    return q
