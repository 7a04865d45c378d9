"""Records the rehearsal's ground truth and motor torques to an .npz for the demo report.

One row per record tick (default 50 Hz, the policy rate). The file is rewritten atomically
every `flush_period_s` and on close, so a killed simulator still leaves a readable recording.

The simulator records from its real-time physics thread, and whatever that thread waits for, rt/lowstate
waits for. Saving on it (arrays from every row so far, then the file) took 10 ms at 1,000 rows and 103 ms at
10,000 (bench/sim_recorder_stall.py): with 500 Hz rows the safety monitor saw a dead robot (lowstate_stale)
in 10 of 10 walks. Saving on a thread of the same process is no better: it shares the GIL, and a
normal-priority thread holding the GIL while real-time threads take its CPU stops the physics thread with
it. So each row goes, as one fixed-size record, down a pipe to a writer process (`write_rows`, normal
scheduling) that keeps the rows and saves the file; the physics thread only writes the record
(microseconds, never blocking). A killed simulator closes the pipe, and the writer saves what it has.

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

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from surrogait_core.runtime.ros_node import EXIT_FAILED, report_error
from surrogait_rehearsal.sim.child_status import read_status_line

if TYPE_CHECKING:  # the writer process imports this module: it needs neither MuJoCo nor the wire
    from surrogait_core.wire.go2_wire import MotorCommands
    from surrogait_rehearsal.sim.mujoco.core import Go2Sim

_CMD_FIELDS = ("mode", "q", "dq", "kp", "kd", "tau")
_PIPE_BYTES = 1 << 20  # ~0.8 s of 500 Hz rows (1.3 kB each) if the writer is starved; more is dropped, counted
_START_TIMEOUT_S = 60.0
# The writer's first act, before it imports anything: leave a real-time parent's scheduling (a process
# importing numpy for a few hundred milliseconds at the physics thread's priority would starve the nodes).
_WRITER_MAIN = """
import os
try:
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
except (OSError, AttributeError):
    pass
from surrogait_rehearsal.sim.recorder import write_rows
raise SystemExit(write_rows())
"""
_CLOSE_TIMEOUT_S = 60.0
WRITER = "the recording's writer"


def row_layout(num_joints: int, num_feet: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(field, shape, dtype) of a row, in record order; every value travels as float64."""
    j = (num_joints,)
    return [("time_s", (), "f8"), ("wall_time_s", (), "f8"), ("stamp_unix_s", (), "f8"),
            ("base_pos_w", (3,), "f8"), ("base_quat_wxyz", (4,), "f8"), ("base_lin_vel_w", (3,), "f8"),
            ("base_lin_vel_b", (3,), "f8"), ("base_ang_vel_b", (3,), "f8"), ("joint_pos", j, "f8"),
            ("joint_vel", j, "f8"), ("joint_tau", j, "f8"), ("foot_force_n", (num_feet,), "f8"),
            ("lowcmd_accepted", (), "i8"), ("lowcmd_dropped", (), "i8"), ("lowstate_enabled", (), "?"),
            *[(f"cmd_{f}", j, "f8") for f in _CMD_FIELDS]]


class SimRecorder:
    def __init__(self, path: str | Path, sim: Go2Sim, rate_hz: float = 50.0, flush_period_s: float = 5.0) -> None:
        self.path = Path(path)
        if self.path.suffix != ".npz":
            raise ValueError(f"log_path {self.path}: the recording is an .npz file, name it *.npz")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._sim = sim
        self.rate_hz = rate_hz
        spec = sim.spec
        self._layout = row_layout(spec.num_joints, len(spec.foot_names))
        self._record = np.empty(sum(int(np.prod(shape)) for _, shape, _ in self._layout))
        self._no_command = np.full(spec.num_joints, np.nan)  # the cmd_* fields before the first LowCmd
        self._next_record_s = sim.time_s + 1.0 / rate_hz  # rows at whole multiples of the record period
        self._eps_s = 0.5 * sim.model.opt.timestep
        self._t0 = time.monotonic()
        self.num_rows = 0  # rows handed to the writer
        self.rows_dropped = 0  # rows the writer could not take in time (its pipe full)
        header = {"path": str(self.path), "flush_period_s": flush_period_s,
                  "layout": [[f, list(shape), dtype] for f, shape, dtype in self._layout],
                  "metadata": {"joint_names": list(spec.joint_names), "foot_names": list(spec.foot_names),
                               "robot": spec.name, "physics_dt_s": float(sim.model.opt.timestep),
                               "record_rate_hz": float(rate_hz)}}
        self._proc = subprocess.Popen([sys.executable, "-c", _WRITER_MAIN],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True)  # a Ctrl-C to the terminal must not cut the file
        self._proc.stdin.write((json.dumps(header) + "\n").encode())
        self._proc.stdin.flush()
        status = read_status_line(self._proc, _START_TIMEOUT_S, WRITER)
        if status != "ready":
            raise RuntimeError(f"cannot record to {self.path}: {status}")
        os.set_blocking(self._proc.stdin.fileno(), False)
        with contextlib.suppress(OSError):
            fcntl.fcntl(self._proc.stdin.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)

    def maybe_record(self, cmd: MotorCommands | None, lowcmd_counts: Callable[[], tuple[int, int]],
                     lowstate_enabled: bool) -> None:
        """Call after every physics step; when the record tick is due, hands one row to the writer (never
        blocks: a row the writer's pipe cannot take is dropped and counted).

        `lowcmd_counts()` gives (accepted, dropped) and is only called when a row is written.
        """
        sim = self._sim
        if sim.time_s + self._eps_s < self._next_record_s:
            return
        self._next_record_s += 1.0 / self.rate_hz
        accepted, dropped = lowcmd_counts()
        gt = sim.ground_truth()
        values = [gt.time_s, time.monotonic() - self._t0, time.time(), gt.base_pos_w, gt.base_quat_wxyz,
                  gt.base_lin_vel_w, gt.base_lin_vel_b, gt.base_ang_vel_b, sim.joint_pos(), sim.joint_vel(),
                  sim.applied_tau, sim.foot_forces(), accepted, dropped, lowstate_enabled,
                  *[self._no_command if cmd is None else getattr(cmd, f) for f in _CMD_FIELDS]]
        k = 0
        for v in values:
            n = np.size(v)
            self._record[k:k + n] = np.ravel(v)
            k += n
        try:
            # One record (~1.3 kB) is below PIPE_BUF, so the write is atomic: all of it or nothing.
            os.write(self._proc.stdin.fileno(), self._record.tobytes())
            self.num_rows += 1
        except BlockingIOError:
            self.rows_dropped += 1
        except BrokenPipeError:  # the writer died: close() reports it
            self.rows_dropped += 1

    def close(self) -> None:
        """End of rows: the writer saves the file and exits. RuntimeError if it could not."""
        if self._proc.poll() is None:
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.close()
        status = read_status_line(self._proc, _CLOSE_TIMEOUT_S, WRITER)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=10.0)
        if self._proc.poll() is None:
            self._proc.kill()
        if not status.startswith("done"):
            raise RuntimeError(f"recording {self.path}: {status}")


class _Columns:
    """Rows kept in numpy blocks of BLOCK_ROWS rows, one array per field: appending never copies what is
    recorded, so a long recording costs no more per row than a short one."""

    BLOCK_ROWS = 4096

    def __init__(self, layout: list[tuple[str, tuple[int, ...], str]]) -> None:
        self._layout = layout
        self._blocks: list[dict[str, np.ndarray]] = []
        self.rows = 0

    def append(self, record: np.ndarray) -> None:
        k = self.rows % self.BLOCK_ROWS
        if k == 0:
            self._blocks.append({f: np.empty((self.BLOCK_ROWS, *shape), dtype=dtype)
                                 for f, shape, dtype in self._layout})
        block, i = self._blocks[-1], 0
        for f, shape, _ in self._layout:
            n = int(np.prod(shape))
            block[f][k] = record[i:i + n].reshape(shape)
            i += n
        self.rows += 1

    def arrays(self) -> dict[str, np.ndarray]:
        if self.rows == 0:
            return {f: np.empty((0, *shape), dtype=dtype) for f, shape, dtype in self._layout}
        parts = {f: [b[f] for b in self._blocks] for f, _, _ in self._layout}
        return {f: np.concatenate(blocks)[:self.rows] for f, blocks in parts.items()}


def _save(path: Path, columns: _Columns, metadata: dict) -> None:
    arrays = columns.arrays()
    arrays.update({k: np.array(v) for k, v in metadata.items()})
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)  # readers never see a half-written file


def write_rows() -> int:
    """The writer process (normal scheduling: it only uses what the real-time threads leave, and a slow save
    delays nothing but the file): a JSON header line, then fixed-size float64 records until EOF; saves every
    flush period and at the end. Reports "ready", then "done N" (or "error ...") on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the simulator ends the rows; a Ctrl-C must not cut the file
    stdin = sys.stdin.buffer
    try:
        header = json.loads(stdin.readline())
        layout = [(f, tuple(shape), dtype) for f, shape, dtype in header["layout"]]
        path, period_s = Path(header["path"]), float(header["flush_period_s"])
        record_bytes = 8 * sum(int(np.prod(shape)) for _, shape, _ in layout)
    except (ValueError, KeyError, TypeError) as e:
        print(f"error bad header: {e}", flush=True)
        return 2
    print("ready", flush=True)
    columns, last_save = _Columns(layout), time.monotonic()
    try:
        while len(raw := stdin.read(record_bytes)) == record_bytes:
            columns.append(np.frombuffer(raw, dtype=np.float64))
            if time.monotonic() - last_save >= period_s:
                _save(path, columns, header["metadata"])
                last_save = time.monotonic()
        _save(path, columns, header["metadata"])
    except OSError as e:
        print(f"error {type(e).__name__}: {e}", flush=True)
        return 1
    print(f"done {columns.rows}", flush=True)
    return 0


def close_recordings(video, recorder: SimRecorder | None, log: Callable[[str], None], node_name: str) -> int:
    """At a simulator's exit: finish the video and the recording (each file is complete only once closed),
    logging each. Returns the exit code they call for (EXIT_FAILED when either could not be finished)."""
    exit_code = 0
    if video is not None:
        try:
            video.close()
            log(f"video: {video.path} ({video.frames_written} frames, {video.frames_skipped} skipped)")
        except RuntimeError as e:
            report_error(node_name, str(e))
            exit_code = EXIT_FAILED
    if recorder is not None:
        try:
            recorder.close()
            dropped = f", {recorder.rows_dropped} dropped: its writer fell behind" if recorder.rows_dropped else ""
            log(f"recording: {recorder.path} ({recorder.num_rows} rows{dropped})")
        except RuntimeError as e:
            report_error(node_name, str(e))
            exit_code = EXIT_FAILED
    return exit_code

