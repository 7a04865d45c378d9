"""Rehearsal: the shipped policy stands the simulated Go2 up and walks it, over the real wire.

Separate processes — the MuJoCo Go2 (`go2_sim`) and the `policy_node` — talk unitree_sdk2 DDS on
loopback; this test drives the policy node through its ROS services and cmd_vel like an
operator, and scores the walk against the simulator's ground truth.
"""

import os

import numpy as np
import pytest

from surrogait_rehearsal.demo import launch_rehearsal, run_session, shipped_policy_path
from surrogait_rehearsal.demo_processes import ProcessGroup
from surrogait_rehearsal.demo_session import Segment, Session, SessionError
from surrogait_rehearsal.report import fall_metrics, load_session, simulator_metrics, tracking_metrics

DOMAIN = 24
VX_RMSE_LIMIT = 0.2  # m/s over the walking segments (issue 5)
SEGMENTS = [
    Segment("walk 0.5 m/s", 5.0, (0.5, 0.0, 0.0)),
    Segment("walk 1.0 m/s", 5.0, (1.0, 0.0, 0.0)),
    Segment("stop", 2.0, (0.0, 0.0, 0.0), scored=False),
]


@pytest.mark.rehearsal
def test_shipped_policy_stands_up_and_walks(tmp_path):
    policy = shipped_policy_path()
    assert policy.is_file(), f"the shipped policy {policy} is missing"
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               MUJOCO_GL="osmesa", PYOPENGL_PLATFORM="osmesa")
    link = {"dds_domain": DOMAIN, "network_interface": "lo"}
    overrides = {"go2_sim": {**link, "log_path": str(tmp_path / "sim_log.npz"), "video_path": ""},
                 "policy_node": {**link, "policy_path": str(policy)}}
    session = None
    with ProcessGroup(tmp_path / "logs", env) as group:
        try:
            session = Session(DOMAIN, log=print)
            try:
                launch_rehearsal(group, session, overrides, tmp_path, log=print)
                run_session(session, group, SEGMENTS)
            except SessionError as e:
                session.save(tmp_path / "session.npz")
                sim = simulator_metrics(load_session(tmp_path / "session.npz"))
                logs = "\n".join(f"--- {c.name}\n{group.tail(c)}" for c in group.children)
                pytest.fail(f"the rehearsal session failed: {e}\nsimulator: {sim}\n{logs}")
            session.save(tmp_path / "session.npz")
        finally:
            if session is not None:
                session.close()
    recorded = load_session(tmp_path / "session.npz")
    states = [state for _, state in recorded["policy_states"]]
    assert states[:4] == ["PASSIVE", "STAND_UP", "READY", "WALK"], states

    falls = fall_metrics(recorded)
    assert not falls["fell"], f"the robot fell: {falls}"
    tracking = tracking_metrics(recorded)
    per_segment = {s["name"]: round(s["vx_mean"], 3) for s in tracking["segments"]}
    assert tracking["walking_vx_rmse"] <= VX_RMSE_LIMIT, (
        f"vx RMSE {tracking['walking_vx_rmse']:.3f} m/s over the walking segments (limit {VX_RMSE_LIMIT}); "
        f"mean vx per segment: {per_segment}"
    )

    # Every LowCmd the policy node wrote passed the simulator's CRC/head/level checks, and the
    # last one on the wire is damping (the session ends with a damp request).
    with np.load(tmp_path / "sim_log.npz") as log:
        assert log["lowcmd_accepted"][-1] > 50 * 10
        assert log["lowcmd_dropped"][-1] == 0
        assert np.all(log["cmd_kp"][-1] == 0.0) and np.all(log["cmd_kd"][-1] > 0.0)
