"""The suspended dry run's report: which joints followed their targets, which did not."""

import numpy as np

from surrogait_core.policy.dry_run import DryRunTracker


def test_joints_that_follow_pass_and_a_reversed_or_blocked_joint_is_named():
    tracker = DryRunTracker()
    for k in range(200):
        commanded = np.full(12, 0.3) * np.sin(2 * np.pi * k / 25) + np.arange(12) * 0.1
        measured = commanded.copy() * 0.6  # weak gains in the air: a smaller swing, in step
        measured[4] = -0.5 * commanded[4]  # FL_thigh wired backwards
        measured[8] = 0.8  # RR_calf blocked
        tracker.add(commanded, measured)
    names = " ".join(tracker.suspects())
    assert "FL_thigh" in names and "RR_calf" in names and names.count("correlation") == 2
    report = tracker.report()
    assert "FR_hip" in report and "check: FL_thigh" in report


def test_no_steps_no_verdict():
    assert "too few policy steps" in DryRunTracker().report()
