"""The no-fault walk's margins: each rule's largest value against its threshold, and for the estimated torque, which
fires only when a motor stays past its level, how long the longest such stretch lasted against the rule's wait."""

from types import SimpleNamespace

import numpy as np

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_rehearsal.harness.fault_suite.margins import margins

SPEC = load_robot_spec("go2")
TH = default_thresholds(SPEC)
LEVEL = TH.tau_est_fraction * np.asarray(TH.joint_torque_limit)  # N m per motor: the rule's level


def lowstates(tau_fraction_of_level: list[float], rate_hz: float = 500.0) -> list:
    """(arrival time, LowState) pairs, the first motor's estimated torque at these fractions of its level."""
    out = []
    for i, f in enumerate(tau_fraction_of_level):
        tau = np.zeros(12)
        tau[0] = f * LEVEL[0]
        out.append((i / rate_hz, SimpleNamespace(joint_vel=np.zeros(12), joint_tau_est=tau,
                                                 quat_wxyz=np.array([1.0, 0.0, 0.0, 0.0]))))
    return out


def test_a_landing_that_touches_the_motor_limit_is_a_peak_not_a_stretch_the_rule_would_fire_on():
    walk = [0.5] * 100 + [1.05] * 10 + [0.5] * 100 + [1.05] * 16 + [0.6] * 50  # 18 ms, then 30 ms past the level
    m = margins([], lowstates(walk))
    assert m["tau_est"] == 1.05
    assert m["tau_est_persist"] == round(0.030 / TH.tau_est_persist_s, 3)  # 15 intervals of 2 ms


def test_a_walk_below_the_level_has_no_stretch_past_it():
    m = margins([], lowstates([0.6, 0.7, 0.79, 0.7]))
    assert m["tau_est"] == 0.79 and m["tau_est_persist"] == 0.0
