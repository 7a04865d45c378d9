"""Which base height the monitor judges: the estimator's only while it vouches for it, else the legs'."""

import numpy as np
from safety_helpers import CONTRACT, SPEC, lying_q, state, stiff

from surrogait_core.safety import SafetyMonitor, default_thresholds
from surrogait_core.safety.base_height import LegKinematicsHeight, monitor_base_height

TH = default_thresholds(SPEC, CONTRACT)
LEGS = LegKinematicsHeight(SPEC)
UNTRUSTED_STD_M = 1.0  # what the estimator publishes (z variance ≥ 1 m²) while it does not vouch for its height


def judge(estimate, robot_state, now=1.0):
    """A standing robot under stiff commands, with the height the node would pick; the monitor's verdict."""
    m = SafetyMonitor(TH)
    m.on_policy_state("READY", 0.0)
    m.on_lowstate(robot_state, now)
    m.on_lowcmd(stiff(), now)
    chosen = monitor_base_height(estimate, m.state, LEGS, now, TH.estimator_height_max_std_m, 0.2)
    m.on_base_height(*chosen, now)
    return chosen, m.check(now)


def test_a_false_low_estimate_from_an_estimator_that_is_not_converged_does_not_damp_a_standing_robot():
    (height, source), r = judge((0.057, UNTRUSTED_STD_M, 1.0), state())
    assert source == "leg kinematics" and height > TH.min_base_height_m
    assert not r.latched


def test_a_stale_estimate_is_not_used_either():
    (_, source), r = judge((0.057, 0.01, 0.5), state(), now=1.0)
    assert source == "leg kinematics" and not r.latched


def test_a_real_collapse_still_damps_seen_by_the_legs_when_the_estimator_is_unsure():
    collapsed = state(q=lying_q())
    (height, source), r = judge((0.29, UNTRUSTED_STD_M, 1.0), collapsed)
    assert source == "leg kinematics" and height < TH.min_base_height_m
    assert r.latched and r.cause == "base_too_low"


def test_a_converged_estimator_is_believed():
    (height, source), r = judge((0.10, 0.01, 1.0), state())
    assert (height, source) == (0.10, "estimator")
    assert r.latched and r.cause == "base_too_low"


def test_no_estimate_and_no_state_means_nothing_to_judge():
    assert monitor_base_height(None, None, LEGS, 1.0, TH.estimator_height_max_std_m, 0.2) is None
    bad = state(q=np.full(12, np.nan))
    height, source = monitor_base_height(None, bad, LEGS, 1.0, TH.estimator_height_max_std_m, 0.2)
    assert source == "leg kinematics" and np.isnan(height)
