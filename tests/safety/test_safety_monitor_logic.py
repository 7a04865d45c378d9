"""The monitor's core without ROS: rule gating, the DAMP latch, who writes damping, reset."""

import dataclasses

import numpy as np
import pytest
from safety_helpers import CONTRACT, SPEC, damping, knees_on_their_stops, lying_q, state, stiff

from surrogait_core.safety import SafetyMonitor, default_thresholds

# As the node builds them: the robot spec and a policy contract (control period, soft joint range).
TH = default_thresholds(SPEC, CONTRACT)
P = TH.control_period_s


def standing_monitor(t0=0.0) -> SafetyMonitor:
    """A monitor that has seen a robot standing under a policy's stiff commands."""
    m = SafetyMonitor(TH)
    m.on_policy_state("READY")
    m.on_lowstate(state(), t0)
    m.on_lowcmd(stiff(), t0)
    assert not m.check(t0).latched
    return m


def run_policy(m: SafetyMonitor, t0: float, t1: float, cmd_fn=stiff, state_fn=state):
    """Feed lowstate at 500 Hz and commands at 50 Hz between t0 and t1, checking at 200 Hz."""
    results = []
    for k in range(int(round((t1 - t0) / 0.001))):
        t = t0 + k * 0.001
        if k % 2 == 0:  # the robot's tick counts its milliseconds
            m.on_lowstate(dataclasses.replace(state_fn(), tick_ms=int(round(t * 1000))), t)
        if k % 20 == 0 and cmd_fn is not None:
            m.on_lowcmd(cmd_fn(), t)
        if k % 5 == 0:
            results.append((t, m.check(t)))
    return results


def test_quiet_while_standing_and_walking():
    m = standing_monitor()
    results = run_policy(m, 0.0, 1.0)
    assert not any(r.latched or r.write_damping or r.events for _, r in results)


def test_startup_without_lowstate_is_not_a_fault_until_stiff_commands_go_out():
    m = SafetyMonitor(TH)
    assert not m.check(10.0).latched  # nothing seen yet: the simulator/robot may still be starting
    m.on_lowcmd(damping(), 10.0)
    assert not m.check(11.0).latched  # damping without state: harmless
    m.on_lowcmd(stiff(), 11.0)
    assert not m.check(11.0 + 0.5 * TH.stale_state_s).latched
    r = m.check(11.0 + 1.5 * TH.stale_state_s)
    assert r.latched and r.cause == "lowstate_stale"


def test_stale_lowstate_latches_after_two_and_a_half_periods_before_the_policy_nodes_own_timeout():
    m = standing_monitor()
    m.on_lowcmd(stiff(), 0.0 + 0.001)
    # The policy keeps commanding but the state stops at t = 0.
    for k in range(1, 3):
        m.on_lowcmd(stiff(), k * P)
        r = m.check(k * P - 1e-6)
        assert not r.latched, k
    assert not m.check(2.5 * P - 0.001).latched
    m.on_lowcmd(stiff(), 2.5 * P + 0.002)
    r = m.check(2.5 * P + 0.002)
    assert r.latched and r.cause == "lowstate_stale" and r.state_changed
    assert r.events[0].event == "fault" and r.events[0].action == "latch DAMP"
    # The policy node is blind without state (its own 60 ms timeout comes later): the monitor damps at once.
    assert r.write_damping


def test_policy_silent_damps_at_once():
    m = standing_monitor()
    m.on_lowstate(state(), 3 * P + 0.004)
    assert not m.check(3 * P - 0.001).latched
    r = m.check(3 * P + 0.005)
    assert r.latched and r.cause == "policy_silent"
    assert r.write_damping  # nobody else writes: no grace period
    assert [e.event for e in r.events] == ["fault", "monitor_damping_on"]
    # Its own damping counts as the latest command: the motors are no longer stiff, no new silence fault.
    m.on_own_damping(3 * P + 0.005)
    assert not m.wire_stiff()
    for k in range(1, 50):
        t = 3 * P + 0.005 * (k + 1)
        m.on_lowstate(state(), t)
        r = m.check(t)
        assert r.write_damping and r.latched and r.cause == "policy_silent"
        m.on_own_damping(t)
        assert not [e for e in r.events if e.event == "fault"]


def test_silent_after_damping_is_fine():
    m = SafetyMonitor(TH)
    m.on_lowstate(state(q=lying_q()), 0.0)
    m.on_lowcmd(damping(), 0.0)
    m.on_lowstate(state(q=lying_q()), 1.0)
    assert not m.check(1.0).latched  # a policy node that stops while damping leaves the motors passive


def test_policy_damps_within_grace_so_monitor_stays_quiet():
    m = standing_monitor()
    m.on_estop("service", 0.005)
    r = m.check(0.005)
    assert r.latched and r.cause == "estop_service" and not r.write_damping
    # The policy node damps at its next cycle (its own stiff command at 0.02 is before it saw DAMP).
    run = run_policy(m, 0.006, 0.5, cmd_fn=damping)
    assert not any(res.write_damping for _, res in run)
    assert all(res.latched for _, res in run)


def test_monitor_damps_when_nobody_does_within_grace():
    m = standing_monitor()
    m.on_estop("topic", 0.001)
    assert not m.check(0.001).write_damping
    # The policy node keeps writing stiff commands (it ignores the safety state).
    run = run_policy(m, 0.002, 0.2, cmd_fn=stiff)
    first_write = next(t for t, res in run if res.write_damping)
    assert first_write == pytest.approx(0.001 + TH.damping_grace_s, abs=0.006)
    assert all(res.write_damping for t, res in run if t >= first_write)


def test_monitor_keeps_damping_while_a_rogue_writes_stiff_commands_alongside_damping():
    m = standing_monitor()
    q = SPEC.default_joint_pos.copy()
    q[0] = 1.5
    m.on_lowcmd(stiff(q=q), 0.01)  # the rogue's out-of-limit target
    r = m.check(0.012)
    assert r.latched and r.cause == "command_target_limit"
    # The policy damps and the rogue goes on: the monitor must not stand back while stiff commands flow.
    t = 0.013
    writes = []
    while t < 0.3:
        m.on_lowstate(state(), t)
        if round(t * 1000) % 20 == 0:
            m.on_lowcmd(damping(), t)
        if round(t * 1000) % 20 == 10:
            m.on_lowcmd(stiff(q=q), t)
        if round(t * 1000) % 5 == 0:
            writes.append(m.check(t).write_damping)
            if writes[-1]:
                m.on_own_damping(t)
        t += 0.001
    assert all(writes[len(writes) // 4:])
    # The rogue is killed and the policy damps: the monitor still damps until reset (both damping is safe).
    for k in range(30):
        t = 0.3 + 0.005 * k
        m.on_lowstate(state(), t)
        if k % 4 == 0:
            m.on_lowcmd(damping(), t)
        r = m.check(t)
        assert r.write_damping and r.latched
    assert [e.event for e in r.events] == []


def test_each_cause_is_logged_once_per_latch():
    m = standing_monitor()
    tilted = state(quat=(np.cos(0.4), np.sin(0.4), 0.0, 0.0))  # roll 0.8 rad
    causes = []
    for k in range(20):
        t = 0.005 * (k + 1)
        m.on_lowstate(tilted, t)
        if k % 4 == 0:
            m.on_lowcmd(damping(), t)
        causes += [e.cause for e in m.check(t).events if e.event == "fault"]
    assert causes == ["base_tilt"]


def test_position_and_height_rules_only_when_standing():
    m = SafetyMonitor(TH)
    m.on_lowstate(state(q=knees_on_their_stops()), 0.0)
    m.on_base_height(0.08, "estimator", 0.0)
    m.on_lowcmd(stiff(q=lying_q()), 0.0)
    m.on_policy_state("STAND_UP")
    assert not m.check(0.001).latched  # standing up from the floor: near the knee limit and low
    m.on_policy_state("READY")
    r = m.check(0.002)
    assert r.latched and {e.cause for e in r.events} == {"joint_position_limit", "base_too_low"}


def test_estimated_torque_must_persist():
    m = standing_monitor()
    tau = SPEC.joint_torque_limit.copy()
    for k in range(1, 200):
        t = 0.001 * k
        m.on_lowstate(state(tau=tau), t)
        if k % 20 == 0:
            m.on_lowcmd(stiff(), t)
        if k % 5 == 0:
            r = m.check(t)
            if r.latched:
                break
    assert r.cause == "estimated_torque" and t == pytest.approx(0.005 + TH.tau_est_persist_s, abs=0.006)


def test_nan_state_and_command_latch():
    m = standing_monitor()
    m.on_lowstate(state(dq=[np.nan] * 12), 0.002)
    assert m.check(0.005).cause == "state_not_finite"
    m = standing_monitor()
    bad = stiff()
    bad.q[7] = np.nan
    m.on_lowcmd(bad, 0.01)
    assert m.check(0.01).cause == "command_not_finite"


def test_nan_from_the_estimator_latches():
    m = standing_monitor()
    m.on_estimator_values({"position": [0.0, 0.0, 0.28], "linear_velocity": [0.1, 0.0, 0.0]}, 0.001)
    assert not m.check(0.002).latched
    m.on_estimator_values({"position": [0.0, 0.0, 0.28], "linear_velocity": [np.nan, 0.0, 0.0]}, 0.003)
    r = m.check(0.004)
    assert r.cause == "estimator_not_finite" and r.events[0].values["fields"] == ["linear_velocity"]


def test_command_violation_between_checks_is_not_missed():
    m = standing_monitor()
    q = SPEC.default_joint_pos.copy()
    q[1] += 2.0
    m.on_lowcmd(stiff(q=q), 0.0101)  # one rogue sample ...
    m.on_lowcmd(stiff(), 0.0102)  # ... immediately overwritten by a good one
    r = m.check(0.0125)
    assert r.latched and r.cause in ("command_target_jump", "commanded_torque")


def lying_still_after_damp(m: SafetyMonitor, t0: float, t1: float):
    for k in range(int((t1 - t0) / 0.005)):
        t = t0 + 0.005 * k
        m.on_lowstate(state(q=lying_q()), t)
        if k % 4 == 0:
            m.on_lowcmd(damping(), t)
        m.check(t)
    return t


def test_reset_refused_while_moving_or_stiff_or_active_then_accepted():
    m = standing_monitor()
    m.on_estop("gamepad", 0.001)
    assert m.check(0.001).latched
    # Joints still moving while it sinks down.
    m.on_lowstate(state(dq=np.full(12, 1.0)), 0.01)
    res = m.request_reset(0.01)
    assert not res.accepted and "joints still moving" in res.reason
    assert res.events[0].event == "reset_refused"
    # Base rocking.
    m.on_lowstate(state(gyro=(0.0, 0.8, 0.0)), 0.02)
    assert "base still moving" in m.request_reset(0.02).reason
    # Stiff commands still on the wire.
    m.on_lowstate(state(), 0.03)
    m.on_lowcmd(stiff(), 0.03)
    assert "stiff commands" in m.request_reset(0.031).reason
    # Lying still, damped, but the e-stop chord is still held.
    t = lying_still_after_damp(m, 0.04, 0.3)
    m.on_lowstate(state(q=lying_q(), keys={"L2", "B"}), t)
    res = m.request_reset(t)
    assert not res.accepted and "e-stop chord" in res.reason
    # Released: reset accepted and logged, latch cleared.
    m.on_lowstate(state(q=lying_q()), t + 0.005)
    res = m.request_reset(t + 0.005)
    assert res.accepted and res.events[0].event == "reset"
    assert not m.latched and m.check(t + 0.006).latched is False


def test_reset_refused_on_stale_state_and_when_tilted():
    m = standing_monitor()
    m.on_estop("topic", 0.001)
    m.check(0.001)
    assert "no fresh rt/lowstate" in m.request_reset(1.0).reason
    roll = TH.max_roll_rad + 0.3
    m.on_lowstate(state(q=lying_q(), quat=(np.cos(roll / 2), np.sin(roll / 2), 0, 0)), 1.0)
    m.on_lowcmd(damping(), 1.0)
    res = m.request_reset(1.01)
    assert not res.accepted and "base roll" in res.reason


def test_reset_after_a_killed_policy_with_monitor_damping():
    m = standing_monitor()
    m.on_lowstate(state(), 0.1)
    r = m.check(0.1)
    assert r.cause == "policy_silent" and r.write_damping
    t = 0.1
    while t < 0.5:
        m.on_lowstate(state(q=lying_q()), t)
        if m.check(t).write_damping:
            m.on_own_damping(t)
        t += 0.005
    res = m.request_reset(t)
    assert res.accepted, res.reason
    assert [e.event for e in res.events] == ["reset", "monitor_damping_off"]
    # After reset nobody writes: the last command on the wire is damping, silence is no fault.
    m.on_lowstate(state(q=lying_q()), t + 1.0)
    r = m.check(t + 1.0)
    assert not r.latched and not r.write_damping


def test_reset_when_not_latched_is_a_no_op():
    m = SafetyMonitor(TH)
    res = m.request_reset(0.0)
    assert res.accepted and res.events == []


def stream_policy(m: SafetyMonitor, t0: float, t1: float, walk_targets=True, state_fn=state):
    """A policy node at 500 Hz: LowCmd every 2 ms, new targets every 20 ms (changing while walking),
    the same command re-sent (repeated) in between; lowstate at 500 Hz, checks at 200 Hz."""
    results, cmd = [], None
    for k in range(int(round((t1 - t0) / 0.001))):
        t = t0 + k * 0.001
        if k % 2 == 0:  # the robot's tick counts its milliseconds
            m.on_lowstate(dataclasses.replace(state_fn(), tick_ms=int(round(t * 1000))), t)
            if k % 20 == 0 or cmd is None:
                q = SPEC.default_joint_pos + (0.01 * np.sin(40 * t) if walk_targets else 0.0)
                cmd = stiff(q=q)
                m.on_lowcmd(cmd, t)
            else:
                m.on_lowcmd(cmd, t, repeated=True)
        if k % 5 == 0:
            results.append((t, m.check(t)))
    return results


def test_a_500_hz_stream_that_stops_is_silent_after_its_floor_not_three_control_periods():
    m = standing_monitor()
    run = stream_policy(m, 0.001, 1.0)
    assert not any(r.latched for _, r in run)
    assert m.policy_silent_s() == pytest.approx(TH.policy_silent_min_s) and TH.policy_silent_min_s < 3 * P
    last_cmd = m.cmd_t
    m.on_lowstate(state(), last_cmd + TH.policy_silent_min_s - 0.002)
    assert not m.check(last_cmd + TH.policy_silent_min_s - 0.002).latched
    m.on_lowstate(state(), last_cmd + TH.policy_silent_min_s + 0.001)
    r = m.check(last_cmd + TH.policy_silent_min_s + 0.001)
    assert r.latched and r.cause == "policy_silent" and r.write_damping


def test_walking_with_a_stream_whose_targets_stopped_changing_is_a_stalled_policy():
    m = standing_monitor()
    m.on_policy_state("WALK", 0.0)
    assert not any(r.latched for _, r in stream_policy(m, 0.001, 0.5))
    # The stream goes on at 500 Hz, but the policy's output no longer advances.
    run = stream_policy(m, 0.5, 1.0, walk_targets=False)
    latched = [(t, r) for t, r in run if r.latched]
    assert latched and latched[0][1].cause == "policy_stalled"
    assert latched[0][0] - 0.5 == pytest.approx(TH.policy_stalled_s, abs=0.025)


def test_constant_targets_are_fine_while_standing_and_walking_starts_with_a_clean_slate():
    m = standing_monitor()
    assert not any(r.latched for _, r in stream_policy(m, 0.001, 2.0, walk_targets=False)), "READY holds a pose"
    m.on_policy_state("WALK", 2.0)  # the READY targets have not changed for two seconds
    assert not any(r.latched for _, r in stream_policy(m, 2.0, 2.5)), "walking is not stalled from its first step"


def test_a_stream_back_from_a_host_stall_repeating_its_held_targets_is_not_a_stalled_policy():
    """The whole host descheduled for 110 ms (seen on a shared 2-core machine): every process stops, then the
    policy node's first LowCmd repeats the targets it held, its policy step one 2 ms cycle later. The stall
    of the stream was a silence, not a policy that stopped while its stream went on."""
    m = standing_monitor()
    m.on_policy_state("WALK", 0.0)
    assert not any(r.latched for _, r in stream_policy(m, 0.001, 0.5))
    held, resumed_t = m.cmd, m.cmd_t + 0.110
    m.on_lowstate(state(), resumed_t)
    m.on_lowcmd(held, resumed_t, repeated=True)
    assert not m.check(resumed_t + 0.002).latched
    assert not any(r.latched for _, r in stream_policy(m, resumed_t + 0.002, resumed_t + 0.5))


def test_after_its_own_stall_the_monitor_gives_the_writers_one_threshold_before_calling_them_silent_or_stale():
    """A host stall pauses the monitor with the policy node and the robot's state stream: back, it has not
    watched the wire for 110 ms, and writers that are alive again within the thresholds are no fault."""
    m = standing_monitor()
    stream_policy(m, 0.001, 0.5)
    back_t = m.cmd_t + 0.110
    m.on_own_stall(0.110, back_t)
    r = m.check(back_t)
    assert not r.latched and [e.event for e in r.events] == ["monitor_stall"]
    assert not m.check(back_t + TH.policy_silent_min_s - 0.002).latched, "writers have a threshold to come back"
    assert not any(r.latched for _, r in stream_policy(m, back_t + TH.policy_silent_min_s - 0.001, back_t + 0.5))


def test_a_policy_that_died_while_the_monitor_stalled_is_silent_one_threshold_after_the_monitor_is_back():
    m = standing_monitor()
    stream_policy(m, 0.001, 0.5)
    back_t = m.cmd_t + 0.110
    m.on_own_stall(0.110, back_t)
    for t in np.arange(back_t, back_t + 0.1, 0.005):
        m.on_lowstate(state(), t)  # the robot's state flows; the policy node's commands never come back
        r = m.check(t)
        if r.latched:
            break
    assert r.latched and r.cause == "policy_silent"
    assert t - back_t == pytest.approx(TH.policy_silent_min_s, abs=0.0051)


def test_a_stream_back_from_a_silence_whose_targets_still_do_not_change_is_a_stalled_policy():
    m = standing_monitor()
    m.on_policy_state("WALK", 0.0)
    stream_policy(m, 0.001, 0.5)
    resumed_t = m.cmd_t + 0.110
    run = stream_policy(m, resumed_t, resumed_t + 0.5, walk_targets=False)
    latched = [(t, r) for t, r in run if r.latched]
    assert latched and latched[0][1].cause == "policy_stalled"
    assert latched[0][0] - resumed_t == pytest.approx(TH.policy_stalled_s, abs=0.025)


def test_a_pause_in_the_state_stream_while_the_motors_are_passive_is_not_a_fault():
    m = SafetyMonitor(TH)
    m.on_lowstate(state(q=lying_q()), 0.0)
    m.on_lowcmd(damping(), 0.0)
    m.on_lowcmd(damping(), 0.5)
    assert not m.check(0.5).latched, "a simulator or robot that pauses while nothing is driven endangers nothing"
    m.on_lowcmd(stiff(q=lying_q()), 0.6)
    r = m.check(0.6 + TH.stale_state_s + 0.001)
    assert r.latched and r.cause == "lowstate_stale", "once the motors are driven, a stale state is a fault"


def test_a_host_stall_inside_one_check_is_the_monitors_own_stall_not_the_policys_silence():
    """Seen in CI: the monitor suspected a silence, slept 2 ms for the listeners to deliver, and the host
    stalled that sleep for 50 ms. Judged at its return, the policy had 'not written for 46 ms' while the
    monitor itself was not watching; it latched policy_silent on a policy that was as stalled as it was."""
    m = standing_monitor()
    stream_policy(m, 0.001, 0.5)
    suspect_t = m.cmd_t + TH.policy_silent_min_s + 0.001
    m.look(suspect_t)
    assert m.silence_suspected(suspect_t)
    m.on_lowcmd(m.cmd, suspect_t + 0.004, repeated=True)  # delivered while it slept, then the host stalled
    back_t = suspect_t + 0.052
    m.look(back_t)
    r = m.check(back_t)
    assert not r.latched and [e.event for e in r.events] == ["monitor_stall"]


def test_a_monitor_that_looks_on_time_still_calls_a_silent_policy_silent():
    m = standing_monitor()
    stream_policy(m, 0.001, 0.5)
    last_t = m.cmd_t
    for t in np.arange(last_t + 0.005, last_t + 0.1, 0.005):
        m.look(t)
        m.on_lowstate(state(), t)
        r = m.check(t)
        if r.latched:
            break
    assert r.latched and r.cause == "policy_silent"
    assert not [e for e in r.events if e.event == "monitor_stall"]


def test_a_silence_falls_due_one_threshold_after_the_last_sample_and_only_while_driven():
    """The check wakes at this instant rather than on its next 5 ms tick (safety_monitor_node._check_loop)."""
    idle = SafetyMonitor(TH)
    idle.on_lowstate(state(q=lying_q()), 0.0)
    idle.on_lowcmd(damping(), 0.0)
    assert idle.silence_deadline() is None, "nothing driven: no silence can fall due"
    m = standing_monitor()
    stream_policy(m, 0.001, 0.5)
    due = m.silence_deadline()
    assert due == pytest.approx(min(m.state_t + TH.stale_state_s, m.cmd_t + m.policy_silent_s()))
    assert not m.check(due - 0.001).latched
    assert m.check(due + 0.001).latched, "the rule fires just past the deadline the check wakes for"


def test_after_its_own_stall_the_monitor_times_the_deadline_from_its_return():
    m = standing_monitor()
    stream_policy(m, 0.001, 0.5)
    back_t = m.cmd_t + 0.110
    m.on_own_stall(0.110, back_t)
    assert m.silence_deadline() == pytest.approx(back_t + min(TH.stale_state_s, m.policy_silent_s()))
