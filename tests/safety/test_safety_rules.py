"""Every safety rule, on hand-made samples: it fires on the violation and stays quiet otherwise."""

import math

import numpy as np
import pytest
from safety_helpers import CONTRACT, SPEC, damping, knees_on_their_stops, state, stiff

from surrogait_core.safety import rules
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_core.wire.go2_wire import MODE_STOP

# As the node builds them: the robot spec and a policy contract (control period, soft joint range).
TH = default_thresholds(SPEC, CONTRACT)


def causes(violations):
    return [v.cause for v in violations]


def test_state_finite_names_the_bad_field():
    s = state()
    assert rules.check_state_finite(s.quat_wxyz, s.gyro_b, s.accel_b, s.joint_pos, s.joint_vel, s.joint_tau_est) == []
    dq = np.zeros(12)
    dq[4] = np.inf
    out = rules.check_state_finite(s.quat_wxyz, s.gyro_b, s.accel_b, s.joint_pos, dq, s.joint_tau_est)
    assert causes(out) == ["state_not_finite"] and out[0].values["fields"] == ["joint_vel"]
    out = rules.check_state_finite([np.nan, 0, 0, 0], s.gyro_b, s.accel_b, s.joint_pos, s.joint_vel, s.joint_tau_est)
    assert out[0].values["fields"] == ["quat_wxyz"]


def test_joint_position_faults_past_the_soft_range_before_the_stop():
    q = SPEC.default_joint_pos.copy()
    assert rules.check_joint_position(q, TH) == []
    q[2] = TH.soft_joint_pos_upper[2]  # FR calf at its soft limit: where the policy's targets are clipped
    assert rules.check_joint_position(q, TH) == [], "a joint at its soft limit honours the contract"
    q[2] = SPEC.joint_pos_upper[2] - 0.01  # FR calf just inside its stop
    out = rules.check_joint_position(q, TH)
    assert causes(out) == ["joint_position_limit"] and out[0].values["joint"] == "FR_calf"
    q = SPEC.default_joint_pos.copy()
    q[9] = SPEC.joint_pos_lower[9] + 0.01  # RL hip
    assert rules.check_joint_position(q, TH)[0].values["joint"] == "RL_hip"


def test_joint_velocity_uses_each_motors_limit():
    dq = np.zeros(12)
    dq[2] = 0.98 * SPEC.joint_vel_limit[2]  # calf: just below its 20.06 rad/s
    assert rules.check_joint_velocity(dq, TH) == []
    dq[2] = -1.05 * SPEC.joint_vel_limit[2]
    out = rules.check_joint_velocity(dq, TH)
    assert causes(out) == ["joint_velocity"] and out[0].values["joint"] == "FR_calf"
    # 25 rad/s is fine for a hip (limit 30.1) but not for a knee.
    assert rules.check_joint_velocity(np.array([25.0] + [0.0] * 11), TH) == []
    assert rules.check_joint_velocity(np.array([0.0, 0.0, 25.0] + [0.0] * 9), TH)[0].values["joint"] == "FR_calf"


def test_estimated_torque():
    tau = 0.5 * SPEC.joint_torque_limit
    assert rules.check_estimated_torque(tau, TH) == []
    tau[7] = -SPEC.joint_torque_limit[7]
    assert rules.check_estimated_torque(tau, TH)[0].values["joint"] == "RR_thigh"


def test_roll_pitch_from_quaternion():
    assert rules.roll_pitch(np.array([1.0, 0, 0, 0])) == pytest.approx((0.0, 0.0))
    a = 0.4
    roll, pitch = rules.roll_pitch(np.array([math.cos(a / 2), math.sin(a / 2), 0, 0]))
    assert roll == pytest.approx(a) and pitch == pytest.approx(0.0, abs=1e-12)
    roll, pitch = rules.roll_pitch(np.array([math.cos(a / 2), 0, math.sin(a / 2), 0]))
    assert pitch == pytest.approx(a) and roll == pytest.approx(0.0, abs=1e-12)
    # A pure yaw is not a tilt.
    assert rules.check_attitude(np.array([math.cos(1.0), 0, 0, math.sin(1.0)]), TH) == []


def test_attitude_limits():
    a = TH.max_roll_rad + 0.05
    out = rules.check_attitude(np.array([math.cos(a / 2), math.sin(a / 2), 0, 0]), TH)
    assert causes(out) == ["base_tilt"] and out[0].values["roll"] == pytest.approx(a)
    a = -(TH.max_pitch_rad + 0.05)
    assert causes(rules.check_attitude(np.array([math.cos(a / 2), 0, math.sin(a / 2), 0]), TH)) == ["base_tilt"]


def test_base_height():
    standing = SPEC.standing_base_height_m
    assert rules.check_base_height(standing, "estimator", TH) == []
    out = rules.check_base_height(0.5 * standing, "leg kinematics", TH)
    assert causes(out) == ["base_too_low"] and out[0].values["source"] == "leg kinematics"
    assert causes(rules.check_base_height(float("nan"), "estimator", TH)) == ["base_height_not_finite"]


def test_gamepad_estop_needs_the_whole_chord():
    assert rules.check_gamepad_estop(frozenset({"L2"})) == []
    assert rules.check_gamepad_estop(frozenset({"B", "A"})) == []
    assert causes(rules.check_gamepad_estop(frozenset({"L2", "B", "up"}))) == ["estop_gamepad"]


def test_command_finite_ignores_sentinels_of_stopped_motors():
    assert rules.check_command_finite(stiff()) == []
    cmd = damping()
    assert rules.check_command_finite(cmd) == []
    cmd = stiff()
    cmd.q[3] = np.nan
    assert causes(rules.check_command_finite(cmd)) == ["command_not_finite"]
    cmd = stiff()
    cmd.kd[0] = np.inf
    assert rules.check_command_finite(cmd)[0].values["fields"] == ["kd"]


def test_commanded_torque_formula():
    q = SPEC.default_joint_pos.copy()
    cmd = stiff(q=q + 0.1, kp=40.0, kd=1.0, tau=0.5)
    dq = np.full(12, 2.0)
    expected = 40.0 * 0.1 + 1.0 * (0.0 - 2.0) + 0.5
    np.testing.assert_allclose(rules.commanded_torque(cmd, q, dq), expected)
    # Damping: kd·(0 − dq); stop mode: nothing.
    np.testing.assert_allclose(rules.commanded_torque(damping(kd=2.0), q, dq), -4.0)
    cmd.mode[:] = MODE_STOP
    np.testing.assert_allclose(rules.commanded_torque(cmd, q, dq), 0.0)


def test_commanded_torque_limit():
    q = SPEC.default_joint_pos.copy()
    assert rules.check_commanded_torque(stiff(q=q + 0.1), q, np.zeros(12), TH) == []
    target = q.copy()
    target[1] += 1.0  # FR thigh 1 rad away with kp 40: 40 N·m > 1.5 × 23.7
    out = rules.check_commanded_torque(stiff(q=target), q, np.zeros(12), TH)
    assert causes(out) == ["commanded_torque"] and out[0].values["joint"] == "FR_thigh"
    # Damping is never judged (it is the safe action), even at high joint speed.
    assert rules.check_commanded_torque(damping(kd=5.0), q, np.full(12, 20.0), TH) == []


def test_command_targets_outside_limits():
    assert rules.check_command_targets(stiff(), TH) == []
    q = SPEC.default_joint_pos.copy()
    q[0] = 1.5  # FR hip, range ±1.047
    out = rules.check_command_targets(stiff(q=q), TH)
    assert causes(out) == ["command_target_limit"] and out[0].values["joint"] == "FR_hip"
    # A small overshoot (a folded knee resting on its stop, an unclipped policy) is within the margin.
    q = SPEC.default_joint_pos.copy()
    q[2] = SPEC.joint_pos_upper[2] + 0.5 * TH.target_limit_margin_rad
    assert rules.check_command_targets(stiff(q=q), TH) == []
    q[2] = SPEC.joint_pos_upper[2] + 1.1 * TH.target_limit_margin_rad
    assert causes(rules.check_command_targets(stiff(q=q), TH)) == ["command_target_limit"]
    # A damping command's q = 0 is no target (calf 0 rad would be outside its range).
    assert rules.check_command_targets(damping(), TH) == []


def test_command_target_jump():
    prev = stiff()
    small = stiff(q=SPEC.default_joint_pos + 0.1)
    assert rules.check_command_jump(small, prev, 0.02, TH) == []
    q = SPEC.default_joint_pos.copy()
    q[5] += 1.3  # FL calf: 1.3 rad in 20 ms = 65 rad/s > 3 × 20.06
    out = rules.check_command_jump(stiff(q=q), prev, 0.02, TH)
    assert causes(out) == ["command_target_jump"] and out[0].values["joint"] == "FL_calf"
    # Over a longer gap the same change is allowed; from damping there is no previous target.
    assert rules.check_command_jump(stiff(q=q), prev, 0.05, TH) == []
    q[5] = SPEC.default_joint_pos[5] + 0.82  # the shipped trot's largest knee step: within 3 × the limit
    assert rules.check_command_jump(stiff(q=q), prev, 0.02, TH) == []
    assert rules.check_command_jump(stiff(q=q), damping(), 0.02, TH) == []
    # Two writers 1 ms apart still get a full control period's allowance.
    assert rules.check_command_jump(small, prev, 0.001, TH) == []


def test_lying_pose_is_near_the_knee_limit():
    # Why the position rule is gated on standing: the lying pose is past the knee's soft range.
    assert causes(rules.check_joint_position(knees_on_their_stops(), TH)) == ["joint_position_limit"]
