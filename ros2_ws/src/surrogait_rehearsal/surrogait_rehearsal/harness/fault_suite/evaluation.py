"""Judging a fault scenario from what the observer recorded on the wire, the operator's ground truth and the fault log.

- latency: from the fault to the first damping LowCmd reaching the robot (target ≤ 60 ms; for a silence, from
  the silence itself, and the reaction after the rule's threshold too);
- after the fault no command on the wire violates a limit (finite, stiff targets inside the joint range,
  commanded torque kp·(q*−q)+kd·(dq*−dq)+τff within the motor's limit), the injector's own commands excepted;
- the robot ends lying still (joints and base gyro quiet; ground-truth base height low);
- the fault is in the safety monitor's fault log, first as the cause the scenario expects.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from surrogait_core.robot_links import UDP, robot_link
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety import read_fault_log
from surrogait_core.safety.rules import commanded_torque, driven, roll_pitch
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_core.wire import go1_wire, go2_wire
from surrogait_core.wire.go2_wire import LowStateView
from surrogait_rehearsal.harness.fault_suite.injections import Injection, Scenario, is_rogue
from surrogait_rehearsal.harness.fault_suite.observers import WireObserver
from surrogait_rehearsal.harness.operator import Operator

LATENCY_TARGET_S = 0.060
# s: what a silence's reaction may take past its threshold once the monitor runs (its 200 Hz check, the
# settling sleep, the damping command's way onto the wire)
LATENCY_SLACK_S = 0.020
STILL_JOINT_VEL = 0.3  # rad/s: "lying still" (the reset criterion's default)
STILL_GYRO = 0.3  # rad/s
LYING_HEIGHT_M = 0.2  # ground-truth base height below which the robot lies (standing ≈ 0.28 m)
MAX_SETTLE_S = 10.0  # a robot knocked onto its side can rock for a few seconds before it lies still
_TH = default_thresholds(load_robot_spec("go2"))
# Silence thresholds for the default 500 Hz command stream (the fault log records the one applied).
SILENCE_CAUSES = {"lowstate_stale": _TH.stale_state_s, "policy_silent": _TH.policy_silent_s(0.002)}
# A damped robot folds down ever more slowly, through the thresholds above: a wait that ended at the first 0.5 s
# under 0.3 rad/s left the reset and the evaluation, a moment later over windows of their own, at 0.301 (the Jazzy CI
# of 2026-12-07). The wait asks for this fraction of each threshold, so the judgments after it have headroom.
STILL_WAIT_FRACTION = 0.8


def is_still(states: list[tuple[float, LowStateView]], ros: Operator,
             fraction: float = 1.0) -> tuple[bool, float, float]:
    """Lying still over the last 0.5 s of robot state: (still, max |dq|, max |gyro|); `fraction` of each
    speed threshold."""
    if not states:
        return False, float("nan"), float("nan")
    tail = [v for t, v in states if t >= states[-1][0] - 0.5]
    max_dq = float(max(np.max(np.abs(v.joint_vel)) for v in tail))
    max_gyro = float(max(np.max(np.abs(v.gyro_b)) for v in tail))
    height = ros.base_height_gt
    still = (max_dq < fraction * STILL_JOINT_VEL and max_gyro < fraction * STILL_GYRO
             and (height is None or height < LYING_HEIGHT_M))
    return still, max_dq, max_gyro


def wait_until_still(recorder: WireObserver, ros: Operator, deadline_monotonic: float):
    while time.monotonic() < deadline_monotonic:
        if is_still(recorder.recent_states(300), ros, STILL_WAIT_FRACTION)[0]:
            return
        time.sleep(0.25)


def _state_arrays(v: LowStateView):
    return v.joint_pos, v.joint_vel, v.gyro_b, v.quat_wxyz


def late_for_a_paused_host(latency_s: float, first_damp_t: float, silence_s: float | None, silence_start_t: float,
                           monitor_back_t: float | None, wire_gap_s: float) -> bool:
    """Is a reaction later than the target (`latency_s`) on time once judged from when a paused host ran the stack
    again? A silence (`silence_s`: its threshold) is damped one threshold after the monitor is back from its own
    logged stall (`monitor_back_t`), the earliest a frozen monitor could (SafetyMonitor.on_own_stall); any other
    fault within the target less the longest stretch in which nothing at all reached the wire (`wire_gap_s`; the
    policy node streams at 500 Hz). Reported beside latency_ok, which stays the plain target, so a bench run
    still shows every late reaction."""
    if latency_s <= LATENCY_TARGET_S:
        return False  # on time: nothing to explain
    if silence_s is not None:
        return (monitor_back_t is not None
                and first_damp_t - max(monitor_back_t, silence_start_t) <= silence_s + LATENCY_SLACK_S)
    return latency_s - wire_gap_s <= LATENCY_TARGET_S


def damping_kd_on_wire(robot: str) -> float:
    """The monitor's damping kd as it reaches the motors (the Go1's packet carries kd in 1/16 steps)."""
    kd = default_thresholds(load_robot_spec(robot)).damping_kd
    if robot_link(robot).protocol == UDP:  # the Go1's packet carries kd as a fixed-point number
        return go1_wire.fixed_point(kd, go1_wire.KD_SCALE) / go1_wire.KD_SCALE
    return kd


def evaluate(sc: Scenario, inj: Injection, cmds, states, fault_log: Path, t_wall_offset: float,
             ros: Operator, tilt_limit: float, phase: str, robot: str = "go2") -> dict:
    spec = load_robot_spec(robot)
    state_t = np.array([t for t, _ in states])
    decoded = [_state_arrays(v) for _, v in states]
    t_fault, how = inj.t_fault, "injection time"
    if inj.fault_from_wire == "rogue":
        first = next((t for t, c in cmds if t >= inj.t_inject and is_rogue(c)), None)
        t_fault, how = first, "first rogue LowCmd on the wire"
    elif inj.fault_from_wire == "lowstate_stop":
        before = state_t[state_t >= inj.t_inject - 0.5]
        gaps = np.flatnonzero(np.diff(before) > 0.05)
        t_fault = float(before[gaps[0]]) if len(gaps) else (float(before[-1]) if len(before) else None)
        how = "last rt/lowstate before the stream stopped"
    elif inj.fault_from_wire == "tilt":
        t_fault, how = None, "first rt/lowstate with |roll| or |pitch| past the limit"
        for t, (_, _, _, quat) in zip(state_t, decoded, strict=True):
            if t >= inj.t_inject and max(abs(a) for a in roll_pitch(quat)) > tilt_limit:
                t_fault = float(t)
                break
    result = {"scenario": sc.name, "description": sc.description, "phase": phase, "injection": inj.note,
              "fault_time_from": how}
    if t_fault is None:
        result.update(ok=False, error="the fault never showed on the wire")
        return result

    after = [(t, c) for t, c in cmds if t >= t_fault]
    first_damp_cmd = next(((t, c) for t, c in after if c.is_damping), None)
    first_damp = None if first_damp_cmd is None else first_damp_cmd[0]
    # The monitor damps with its own kd (the policy node with its own): tells who was first on the wire.
    first_by_monitor = first_damp_cmd is not None and np.allclose(first_damp_cmd[1].kd, damping_kd_on_wire(robot))
    latency = None if first_damp is None else first_damp - t_fault
    # Limits after the fault, with the joint state the drivers had when each command arrived.
    violations, max_tau_ratio, stiff_after_damping, rogue_count = [], 0.0, 0, 0
    before_damping_over_torque = 0  # stiff commands sent in the reaction window, driver torque > limit
    for t, c in after:
        if is_rogue(c):
            rogue_count += 1
            continue
        k = int(np.searchsorted(state_t, t, side="right")) - 1
        q, dq = (decoded[k][0], decoded[k][1]) if k >= 0 else (spec.default_joint_pos, np.zeros(12))
        on = driven(c)
        servo = c.mode == go2_wire.MODE_SERVO
        finite = np.all(np.isfinite(np.concatenate([c.q[servo], c.dq[servo], c.kp, c.kd, c.tau[servo]])))
        tau = commanded_torque(c, q, dq)
        ratio = float(np.max(np.abs(tau) / spec.joint_torque_limit)) if finite else float("inf")
        max_tau_ratio = max(max_tau_ratio, ratio)
        outside = on & ((c.q < spec.joint_pos_lower) | (c.q > spec.joint_pos_upper))
        reacting = first_damp is None or t < first_damp
        if finite and not np.any(outside) and ratio > 1.0 and reacting:
            # A PD command sent before the fault was acted on, asking kp·(q*−q) of joints the fault
            # (a kick) displaced: the driver clips it. Counted, but not a command the stack chose after
            # reacting; everything from the first damping command on must be within every limit.
            before_damping_over_torque += 1
        elif not finite or np.any(outside) or ratio > 1.0:
            violations.append({"t_after_fault_s": round(t - t_fault, 4), "finite": bool(finite),
                               "target_outside": [spec.joint_names[i] for i in np.flatnonzero(outside)],
                               "torque_ratio": round(ratio, 3), "damping": c.is_damping})
        if first_damp is not None and t > first_damp and on.any():
            stiff_after_damping += 1
    # Lying still at the end: the last 0.5 s of robot state.
    lying_still, max_dq, max_gyro = is_still(states, ros)
    height = ros.base_height_gt
    # The fault log.
    log = read_fault_log(fault_log) if fault_log.exists() else []
    t_fault_wall = t_fault + t_wall_offset
    logged = [e for e in log if e["event"] in ("fault", "policy_damp", "policy_damp_cause")
              and e["time"] >= t_fault_wall - 0.5]
    first_fault = next((e for e in log if e["event"] == "fault" and e["time"] >= t_fault_wall - 0.5), None)
    # The threshold the monitor applied (a silent stream's depends on the stream's rate), as it logged it.
    silence = None
    if first_fault is not None and first_fault["cause"] in SILENCE_CAUSES:
        silence = first_fault.get("values", {}).get("threshold_s") or SILENCE_CAUSES[first_fault["cause"]]
    # A silence starts with the last sample before it (a killed policy's last command precedes the kill).
    silence_start = t_fault
    if first_fault is not None and first_fault["cause"] == "policy_silent":
        silence_start = max((t for t, _ in cmds if t <= t_fault), default=t_fault)
    monitor_wrote = any(e["event"] == "monitor_damping_on" and e["time"] >= t_fault_wall - 0.5 for e in log)
    # What a late reaction says about the host: the monitor's own stalls (it logs each) and the longest gap in
    # what the wire observer received, both from the fault to the first damping. A 500 Hz stream that
    # reached the observer with a 100 ms hole, while the monitor reports it did not run, is a paused host.
    until_wall = (first_damp if first_damp is not None else t_fault + 1.0) + t_wall_offset
    monitor_stalls = [e for e in log if e.get("event") == "monitor_stall"
                      and t_fault_wall - 0.5 <= e["time"] <= until_wall + 0.1]
    window = [t for t, _ in cmds if t_fault - 0.05 <= t <= until_wall - t_wall_offset]
    wire_gap = float(np.max(np.diff(window))) if len(window) > 1 else 0.0
    monitor_back = max((e["time"] - t_wall_offset for e in monitor_stalls), default=None)
    result.update(
        latency_s=None if latency is None else round(latency, 4),
        monitor_latched_after_s=None if first_fault is None else round(first_fault["time"] - t_fault_wall, 4),
        first_cause=None if first_fault is None else first_fault["cause"],
        # A silence is a fault only once it has lasted the rule's threshold: the target then applies
        # to the reaction after that threshold (the latency from the fault instant is reported too).
        silence_threshold_s=silence,
        reaction_after_threshold_s=None if first_damp is None or silence is None
        else round(first_damp - silence_start - silence, 4),
        # From the fault itself, silences included (issue 12): a silence must be noticed within the target too.
        latency_ok=latency is not None and latency <= LATENCY_TARGET_S,
        latency_ok_after_host_pause=None if first_damp is None else late_for_a_paused_host(
            first_damp - t_fault, first_damp, silence, silence_start, monitor_back, wire_gap),
        monitor_stalls_ms=[round(e.get("values", {}).get("gap_s", 0.0) * 1e3) for e in monitor_stalls],
        longest_wire_gap_to_damping_ms=round(wire_gap * 1e3, 1),
        who_damped="monitor" if first_by_monitor else ("policy node, then the monitor too" if monitor_wrote
                                                         else "policy node"),
        commands_after_fault=len(after) - rogue_count,
        rogue_commands=rogue_count,
        limit_violations=len(violations),
        pd_over_torque_before_damping=before_damping_over_torque,
        violation_examples=violations[:3],
        max_commanded_torque_ratio=round(max_tau_ratio, 3),
        stiff_commands_after_first_damping=stiff_after_damping,
        end_max_joint_vel=round(max_dq, 3),
        end_max_gyro=round(max_gyro, 3),
        end_base_height_m=None if height is None else round(height, 3),
        lying_still=lying_still,
        observed_after_fault_s=round(state_t[-1] - t_fault, 2) if len(state_t) else None,
        logged_causes=sorted({e["cause"] for e in logged if e["event"] != "policy_damp_cause"}),
        policy_damp_cause=next((e["detail"] for e in logged if e["event"] == "policy_damp_cause"), None),
        logged=bool(logged),
        final_safety_state=ros.safety_state.get("state"),
    )
    # Caught as *this* fault: the first cause logged after it is one the scenario expects (not, say, a
    # stall of an overloaded machine that happened to come first).
    first_logged = next((e["cause"] for e in logged if e["event"] in ("fault", "policy_damp")), None)
    result["first_logged_cause"] = first_logged
    # A tilt and a gamepad e-stop may be logged first as something else, but the monitor must log them too.
    must_log = {"push_tilt": "base_tilt", "estop_gamepad": "estop_gamepad"}.get(sc.name)
    result["cause_ok"] = first_logged in sc.expected_causes and (must_log is None
                                                                 or must_log in result["logged_causes"])
    damped_before = [t for t, c in cmds if inj.t_inject <= t < t_fault and c.is_damping]
    result["damping_began_before_fault_time_s"] = round(t_fault - damped_before[0], 4) if damped_before else None
    result["ok"] = bool(result["latency_ok"] and lying_still and not violations and logged and result["cause_ok"])
    return result
