"""Records the rehearsal's ground truth and motor torques to an .npz for the demo report.

One row per record tick (default 50 Hz, the policy rate). The file is rewritten atomically
every `flush_period_s` and on close, so a killed simulator still leaves a readable recording.

Fields (N rows; SDK motor order FR, FL, RR, RL × hip, thigh, calf; legs FR, FL, RR, RL):
  time_s            (N,)    simulation time, s
  wall_time_s       (N,)    monotonic wall-clock time since the recorder started, s
  stamp_unix_s      (N,)    system time (as ROS header stamps and other nodes' logs), s
  base_pos_w        (N, 3)  base position in the world frame, m
  base_quat_wxyz    (N, 4)  base orientation, world from body
  base_lin_vel_w    (N, 3)  base linear velocity in the world frame, m/s
  base_lin_vel_b    (N, 3)  base linear velocity in the body frame, m/s
  base_ang_vel_b    (N, 3)  base angular velocity in the body frame, rad/s
  joint_pos         (N, 12) rad
  joint_vel         (N, 12) rad/s
  joint_tau         (N, 12) torque the motor drivers applied in the last physics step, N·m
  foot_force_n      (N, 4)  normal foot contact force, N
  cmd_mode, cmd_q, cmd_dq, cmd_kp, cmd_kd, cmd_tau  (N, 12)  last valid LowCmd (NaN before the first)
  lowcmd_accepted   (N,)    valid LowCmds received so far
  lowcmd_dropped    (N,)    LowCmds dropped so far (bad CRC, head, level flag, non-finite)
  lowstate_enabled  (N,)    whether rt/lowstate was being published
  joint_names, foot_names, robot, physics_dt_s, record_rate_hz   metadata
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from surrogait_core.runtime.ros_node import EXIT_FAILED, report_error
from surrogait_core.wire.go2_wire import MotorCommands
from surrogait_rehearsal.go2_sim_core import Go2Sim

_CMD_FIELDS = ("mode", "q", "dq", "kp", "kd", "tau")


class SimRecorder:
    def __init__(self, path: str | Path, sim: Go2Sim, rate_hz: float = 50.0, flush_period_s: float = 5.0) -> None:
        self.path = Path(path)
        if self.path.suffix != ".npz":
            raise ValueError(f"log_path {self.path}: the recording is an .npz file, name it *.npz")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._sim = sim
        self.rate_hz = rate_hz
        self._flush_period_s = flush_period_s
        self._rows: dict[str, list] = {}
        self._next_record_s = sim.time_s + 1.0 / rate_hz  # rows at whole multiples of the record period
        self._eps_s = 0.5 * sim.model.opt.timestep
        self._t0 = time.monotonic()
        self._last_flush = self._t0

    def maybe_record(self, cmd: MotorCommands | None, lowcmd_counts: Callable[[], tuple[int, int]],
                     lowstate_enabled: bool) -> None:
        """Call after every physics step; records when the record tick is due.

        `lowcmd_counts()` gives (accepted, dropped) and is only called when a row is written.
        """
        sim = self._sim
        if sim.time_s + self._eps_s < self._next_record_s:
            return
        self._next_record_s += 1.0 / self.rate_hz
        accepted, dropped = lowcmd_counts()
        gt = sim.ground_truth()
        row = {
            "time_s": gt.time_s,
            "wall_time_s": time.monotonic() - self._t0,
            "stamp_unix_s": time.time(),
            "base_pos_w": gt.base_pos_w,
            "base_quat_wxyz": gt.base_quat_wxyz,
            "base_lin_vel_w": gt.base_lin_vel_w,
            "base_lin_vel_b": gt.base_lin_vel_b,
            "base_ang_vel_b": gt.base_ang_vel_b,
            "joint_pos": sim.joint_pos(),
            "joint_vel": sim.joint_vel(),
            "joint_tau": sim.applied_tau.copy(),
            "foot_force_n": sim.foot_forces(),
            "lowcmd_accepted": accepted,
            "lowcmd_dropped": dropped,
            "lowstate_enabled": lowstate_enabled,
        }
        n = sim.spec.num_joints
        for f in _CMD_FIELDS:
            row[f"cmd_{f}"] = np.full(n, np.nan) if cmd is None else np.asarray(getattr(cmd, f), dtype=np.float64)
        for k, v in row.items():
            self._rows.setdefault(k, []).append(v)
        if time.monotonic() - self._last_flush >= self._flush_period_s:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        arrays = {k: np.asarray(v) for k, v in self._rows.items()}
        spec = self._sim.spec
        arrays.update(
            joint_names=np.array(spec.joint_names),
            foot_names=np.array(spec.foot_names),
            robot=np.array(spec.name),
            physics_dt_s=np.array(self._sim.model.opt.timestep),
            record_rate_hz=np.array(self.rate_hz),
        )
        tmp = self.path.with_name(self.path.name + ".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, self.path)  # readers never see a half-written file

    @property
    def num_rows(self) -> int:
        return len(self._rows.get("time_s", []))


def close_recordings(video, recorder: SimRecorder | None, log: Callable[[str], None], node_name: str) -> int:
    """At a simulator's exit: finish the video (its file is complete only once closed) and flush the recording,
    logging each. Returns the exit code they call for (EXIT_FAILED when the video could not be finished)."""
    exit_code = 0
    if video is not None:
        try:
            video.close()
            log(f"video: {video.path} ({video.frames_written} frames, {video.frames_skipped} skipped)")
        except RuntimeError as e:
            report_error(node_name, str(e))
            exit_code = EXIT_FAILED
    if recorder is not None:
        recorder.flush()
        log(f"recording: {recorder.path} ({recorder.num_rows} rows)")
    return exit_code
