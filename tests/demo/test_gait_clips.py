"""Clips of each gait, cut from a rehearsal's recording (surrogait_rehearsal.gait_clips; scripts/gait_videos.py)."""

import imageio.v2 as iio
import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_rehearsal.gait_clips import ClipWindow, gait_windows, recorded_qpos, render_window

BESIDE_REHEARSALS = "it renders recorded arrays offscreen and starts nothing (its text names a rehearsal)"

# The session's clock starts 100 s of system time after the simulator's: sim time t is stamped 1000 + t, and
# session time s sees the sample stamped 1100 + s.
SIM_T = np.arange(0.0, 200.0, 0.02)
SIM_LOG_CLOCK = {"time_s": SIM_T, "stamp_unix_s": 1000.0 + SIM_T}


def session(gaits):
    t = np.arange(0.0, 20.0, 0.01)
    return {"ground_truth": np.column_stack([t, np.zeros((len(t), 11))]), "ground_truth_stamp_unix_s": 1100.0 + t,
            "segments": [{"name": "walk 0.5 m/s", "start_s": 5.0, "end_s": 11.0}], "gaits": gaits}


def test_each_gait_s_window_starts_a_second_into_its_walk_on_the_simulation_s_clock():
    windows = gait_windows(session([[1.0, "trot"], [11.0, "bound"]]), SIM_LOG_CLOCK, seconds=4.0)
    # trot: announced at 1 s but walked from the segment's start (5 s); +1 s settling; +100 s of clock offset
    assert windows == [ClipWindow("trot", pytest.approx(106.0), pytest.approx(110.0)),
                       ClipWindow("bound", pytest.approx(112.0), pytest.approx(116.0))]


def test_a_gait_said_again_is_not_a_change_and_an_old_session_is_refused():
    windows = gait_windows(session([[1.0, "trot"], [6.0, "trot"], [11.0, "pace"]]), SIM_LOG_CLOCK, seconds=2.0)
    assert [w.gait for w in windows] == ["trot", "pace"]
    old = session([[1.0, "trot"]])
    del old["ground_truth_stamp_unix_s"]
    with pytest.raises(ValueError, match="rehearse again"):
        gait_windows(old, SIM_LOG_CLOCK, seconds=2.0)


def standing_log(spec, seconds=1.0):
    t = np.arange(0.02, seconds, 0.02)
    return {"time_s": t, "stamp_unix_s": t, "base_pos_w": np.tile(spec.standing_qpos[:3], (len(t), 1)),
            "base_quat_wxyz": np.tile(spec.standing_qpos[3:7], (len(t), 1)),
            "joint_pos": np.tile(spec.to_sdk_order(spec.standing_qpos[7:]), (len(t), 1))}  # as recorded: SDK order


def test_recorded_joints_go_back_to_the_model_s_order():
    spec = load_robot_spec("go2")
    qpos = recorded_qpos(standing_log(spec), spec)
    np.testing.assert_allclose(qpos[0], spec.standing_qpos, atol=1e-9)


def test_a_window_renders_every_frame_of_the_recording_inside_it(tmp_path):
    spec = load_robot_spec("go2")
    log = standing_log(spec)
    frames = render_window(log, spec, ClipWindow("trot", 0.19, 0.61), tmp_path / "trot.mp4", fps=50.0)
    # rows at 0.20 ... 0.60 s: 21 rows at 50 Hz, a frame each at the recording's rate, none skipped
    assert frames == 21
    with iio.get_reader(tmp_path / "trot.mp4") as video:
        assert video.count_frames() == 21
    with pytest.raises(ValueError, match="no rows between"):
        render_window(log, spec, ClipWindow("trot", 5.0, 6.0), tmp_path / "late.mp4")
