"""Short videos of each gait, cut from a rehearsal's recording (issue 14: a clip per gait for the README).

A clip is re-rendered from the simulator's recording (sim_log.npz: base pose and joint angles at the
record rate) by the rehearsal's own renderer (`sim_video`), so it shows exactly the window asked for
whatever frames the live video skipped. The window is chosen on the session's clock (the operator's:
segments and gait changes) and found on the simulation's through the ground truth's stamps, which the
simulator also records (`stamp_unix_s`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from surrogait_core.robot_spec import RobotSpec
from surrogait_rehearsal.sim.video import VideoRecorder

SETTLE_S = 1.0  # after a walk starts or a gait changes, before the clip begins: the transition is not the gait


@dataclass(frozen=True)
class ClipWindow:
    gait: str
    start_sim_s: float
    end_sim_s: float


def session_to_sim_time(t_session_s: float, gt_time_s: np.ndarray, gt_stamp_unix_s: np.ndarray,
                        sim_stamp_unix_s: np.ndarray, sim_time_s: np.ndarray) -> float:
    """The simulation time at session time `t_session_s` (both recordings' system-time stamps bridge the clocks)."""
    if len(gt_time_s) < 2 or len(sim_time_s) < 2:
        raise ValueError("the session or the simulator's recording has fewer than two rows: nothing to align")
    stamp = float(np.interp(t_session_s, gt_time_s, gt_stamp_unix_s))
    return float(np.interp(stamp, sim_stamp_unix_s, sim_time_s))


def gait_windows(session: dict, sim_log: dict, seconds: float, settle_s: float = SETTLE_S) -> list[ClipWindow]:
    """One window per gait the session walked with, `seconds` long, `settle_s` after the walk or the change began.

    `session`: segments (start_s), gaits ([t, name], the first the starting gait), ground_truth (column 0 the
    session time) and ground_truth_stamp_unix_s; `sim_log`: time_s and stamp_unix_s."""
    if "ground_truth_stamp_unix_s" not in session:
        raise ValueError("the session has no ground-truth stamps (recorded before they were saved): rehearse again")
    align = (session["ground_truth"][:, 0], session["ground_truth_stamp_unix_s"], sim_log["stamp_unix_s"],
             sim_log["time_s"])
    walk_start = session["segments"][0]["start_s"]
    windows = []
    for i, (t, gait) in enumerate(session["gaits"]):
        if i > 0 and gait == session["gaits"][i - 1][1]:
            continue  # said again, not changed
        t = max(t, walk_start)  # the starting gait is announced before the walk
        start = session_to_sim_time(t + settle_s, *align)
        windows.append(ClipWindow(gait, start, start + seconds))
    return windows


def recorded_qpos(sim_log: dict, spec: RobotSpec) -> np.ndarray:
    """MuJoCo qpos rows (free base, then the joints in model order) from the recording's SDK-ordered joints."""
    joints = np.stack([spec.to_model_order(row) for row in sim_log["joint_pos"]])
    return np.hstack([sim_log["base_pos_w"], sim_log["base_quat_wxyz"], joints])


@dataclass
class _Pose:  # what VideoRecorder.maybe_capture reads of an MjData
    time: float
    qpos: np.ndarray


def render_window(sim_log: dict, spec: RobotSpec, window: ClipWindow, path: Path, terrain: str = "flat",
                  fps: float = 25.0, width: int = 320, height: int = 240) -> int:
    """Render the recording's rows inside `window` to `path` (.mp4 or .gif); returns the frames written."""
    t = sim_log["time_s"]
    rows = np.flatnonzero((t >= window.start_sim_s) & (t <= window.end_sim_s))
    if len(rows) < 2:
        raise ValueError(f"the recording holds no rows between {window.start_sim_s:.2f} and {window.end_sim_s:.2f} s "
                         f"of simulation time (it covers {t[0]:.2f}-{t[-1]:.2f} s)")
    qpos = recorded_qpos({k: sim_log[k][rows] for k in ("joint_pos", "base_pos_w", "base_quat_wxyz")}, spec)
    video = VideoRecorder(spec.scene_path, path, fps=fps, width=width, height=height, terrain=terrain, live=False)
    try:
        for time_s, q in zip(t[rows] - t[rows[0]], qpos, strict=True):
            video.maybe_capture(_Pose(float(time_s), q))
    finally:
        video.close()
    return video.frames_written
