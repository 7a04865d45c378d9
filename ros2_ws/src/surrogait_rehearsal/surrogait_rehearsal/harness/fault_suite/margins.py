"""No fault: how close normal operation comes to each of the safety monitor's thresholds (the baseline's margins)."""

from __future__ import annotations

import dataclasses

import numpy as np

from surrogait_core.policy.contract import PolicyContract
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.rules import check_estimated_torque, commanded_torque, driven, roll_pitch
from surrogait_core.safety.thresholds import default_thresholds


def margins(cmds, states, control_period_s: float = PolicyContract.control_dt_s, robot: str = "go2") -> dict:
    """The largest value each rule saw, as a fraction of the monitor's default threshold (1.0 = fires).
    `tau_est` is the estimated torque's peak against its level (0.95 of the motor's limit: a landing may touch it);
    `tau_est_persist` the longest time any motor stayed past that level against the time the rule waits."""
    spec = load_robot_spec(robot)
    th = dataclasses.replace(default_thresholds(spec), control_period_s=control_period_s)
    state_t = np.array([t for t, _ in states])
    decoded = [v for _, v in states]
    out = {"joint_vel": 0.0, "tau_est": 0.0, "tau_est_persist": 0.0, "tilt": 0.0, "commanded_torque": 0.0,
           "target_jump": 0.0, "target_outside_range_rad": 0.0, "lowcmd_gap_s": 0.0, "lowstate_gap_s": 0.0}
    saturated_since = None  # the estimated-torque rule fires only on a motor past its level for tau_est_persist_s
    for t, v in zip(state_t, decoded, strict=True):
        out["joint_vel"] = max(out["joint_vel"], float(np.max(np.abs(v.joint_vel) / (th.joint_vel_fraction
                                                                                      * th.joint_vel_limit))))
        out["tau_est"] = max(out["tau_est"], float(np.max(np.abs(v.joint_tau_est) / (th.tau_est_fraction
                                                                                     * th.joint_torque_limit))))
        if not check_estimated_torque(v.joint_tau_est, th):  # past the level as the monitor's own rule says it
            saturated_since = None
        else:
            saturated_since = t if saturated_since is None else saturated_since
            out["tau_est_persist"] = max(out["tau_est_persist"], (t - saturated_since) / th.tau_est_persist_s)
        roll, pitch = roll_pitch(v.quat_wxyz)
        out["tilt"] = max(out["tilt"], abs(roll) / th.max_roll_rad, abs(pitch) / th.max_pitch_rad)
    prev = None
    for t, c in cmds:
        k = int(np.searchsorted(state_t, t, side="right")) - 1
        if k >= 0 and np.any(driven(c)):
            tau = commanded_torque(c, decoded[k].joint_pos, decoded[k].joint_vel)
            out["commanded_torque"] = max(out["commanded_torque"], float(np.max(
                np.abs(tau) / (th.commanded_torque_factor * th.joint_torque_limit))))
            outside = np.maximum(spec.joint_pos_lower - c.q, c.q - spec.joint_pos_upper)
            out["target_outside_range_rad"] = max(out["target_outside_range_rad"], float(np.max(outside)))
        if prev is not None:
            pt, pc = prev
            both = driven(c) & driven(pc)
            if np.any(both):
                allowed = th.target_jump_factor * th.joint_vel_limit * max(t - pt, th.control_period_s)
                out["target_jump"] = max(out["target_jump"], float(np.max(np.abs(c.q - pc.q)[both] / allowed[both])))
            out["lowcmd_gap_s"] = max(out["lowcmd_gap_s"], t - pt)
        prev = (t, c)
    if len(state_t) > 1:
        out["lowstate_gap_s"] = float(np.max(np.diff(state_t)))
    return {k: round(v, 3) for k, v in out.items()}
