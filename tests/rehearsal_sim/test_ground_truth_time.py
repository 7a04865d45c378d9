"""A ground-truth row is timed when the robot was in that state, not when a busy harness got round to reading it."""

import numpy as np
import pytest

from surrogait_rehearsal.harness.operator import MAX_STAMP_AGE_S, state_time
from surrogait_rehearsal.report import simulator_metrics, tracking_metrics


def test_a_sample_read_late_is_timed_by_its_stamp():
    # arrived 0.3 s after the simulator stamped it: the state was 0.3 s before its arrival on the session clock
    assert state_time(12.0, stamp_unix_s=1000.0, arrival_unix_s=1000.3) == pytest.approx(11.7)


@pytest.mark.parametrize("stamp_unix_s", [12.5, 1000.3 + 0.01, 1000.3 - MAX_STAMP_AGE_S - 1.0])
def test_a_stamp_that_is_no_age_on_this_clock_keeps_the_arrival_time(stamp_unix_s):
    # simulation time (Gazebo's clock from 0), a stamp after the arrival, one older than any lag: not this host's age
    assert state_time(12.0, stamp_unix_s=stamp_unix_s, arrival_unix_s=1000.3) == 12.0


def session_read_in_bursts():
    """A walk at 0.5 then 1.0 m/s (the step at t = 3 s), 100 Hz of ground truth that a starved harness read in
    bursts: every sample of each 1.4 s arrived together at its end, the states of 2.1-3.5 s at 3.5 s."""
    stamps = np.arange(0.005, 6.0, 0.01)  # none on a segment boundary
    vx = np.where(stamps < 3.0, 0.5, 1.0)
    arrival_session = np.ceil((stamps - 0.7) / 1.4) * 1.4 + 0.7
    t = np.array([state_time(a, 1000.0 + s, 1000.0 + a) for s, a in zip(stamps, arrival_session, strict=True)])
    gt = np.zeros((len(stamps), 12))
    gt[:, 0], gt[:, 6] = t, vx
    segments = [{"name": "walk 0.5 m/s", "command": [0.5, 0.0, 0.0], "scored": True, "start_s": 0.0, "end_s": 3.0},
                {"name": "walk 1.0 m/s", "command": [1.0, 0.0, 0.0], "scored": True, "start_s": 3.0, "end_s": 6.0}]
    return {"ground_truth": gt, "segments": segments, "ground_truth_arrival_unix_s": 1000.0 + arrival_session,
            "arrival_session_s": arrival_session, "sim_diagnostics": []}


def test_a_walk_read_in_bursts_is_scored_on_what_the_robot_did():
    session = session_read_in_bursts()
    assert tracking_metrics(session, settle_s=0.2)["walking_vx_rmse"] == pytest.approx(0.0, abs=1e-9)
    # timed by arrival, the 1.0 m/s segment would score states from before the step
    by_arrival = dict(session, ground_truth=session["ground_truth"].copy())
    by_arrival["ground_truth"][:, 0] = session["arrival_session_s"]
    assert tracking_metrics(by_arrival, settle_s=0.2)["walking_vx_rmse"] > 0.1
    # the harness's own lag is still reported, from the arrival times
    assert simulator_metrics(session)["ground_truth_max_gap_ms"] == pytest.approx(1400.0)
