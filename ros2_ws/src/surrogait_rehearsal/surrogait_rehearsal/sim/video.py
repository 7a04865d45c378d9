"""Offscreen video of the rehearsal: a camera tracking the base, rendered in a child process.

The physics loop only writes qpos (a few hundred bytes) into a pipe at the video rate.
Rendering (~100 ms of CPU a 320×240 frame with OSMesa's multi-threaded llvmpipe on a 2-core AMD
EPYC, at niceness 10) and encoding run in a separate
process (`python -m surrogait_rehearsal.sim.video`), so they never delay the real-time loop; if
the renderer falls behind, the pipe fills and frames are skipped rather than slowing physics.
Needs MUJOCO_GL=osmesa (or egl) on a machine without a display; `.mp4` is written through
imageio-ffmpeg, `.gif` through Pillow (slow, and held in memory until the end: capped).
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np

from surrogait_core.runtime.realtime import set_session_niceness
from surrogait_core.terrain import scene_model
from surrogait_rehearsal.sim.child_status import read_status_line

VIDEO_SUFFIXES = (".mp4", ".gif")
VIDEO_SHADOW_MAP_PX = 1024
GIF_MAX_FRAMES = 600  # 30 s at 20 fps; Pillow keeps GIF frames in memory and encodes slowly: prefer .mp4
_START_TIMEOUT_S = 60.0
_CLOSE_TIMEOUT_S = 120.0


class VideoRecorder:
    def __init__(self, scene_path: str | Path, path: str | Path, fps: float = 20.0, width: int = 320,
                 height: int = 240, track_body: str = "base", terrain: str = "flat", live: bool = True) -> None:
        """`live`: a real-time loop's recorder, which skips frames rather than wait for the renderer; `live=False`
        renders every frame it is given (a clip from a recording, surrogait_rehearsal.gait_clips)."""
        self.path = Path(path)
        if self.path.suffix not in VIDEO_SUFFIXES:
            raise ValueError(f"video_path {self.path}: expected a file ending in {' or '.join(VIDEO_SUFFIXES)}")
        if fps <= 0 or width < 16 or height < 16:
            raise ValueError(f"video fps/size must be positive (fps {fps}, {width}x{height})")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fps = fps
        self._next_frame_s = 0.0
        self.frames_sent = 0
        self.frames_skipped = 0
        self.frames_written = 0
        env = dict(os.environ)
        env.setdefault("MUJOCO_GL", "osmesa")  # headless by default; egl works too where there is a GPU
        env.setdefault("PYOPENGL_PLATFORM", env["MUJOCO_GL"])
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "surrogait_rehearsal.sim.video", str(scene_path), str(self.path), str(fps),
             str(width), str(height), track_body, terrain],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, start_new_session=True,  # a Ctrl-C to the terminal's group must not cut the file short
        )
        status = read_status_line(self._proc, _START_TIMEOUT_S, "renderer")
        if status != "ready":
            self._stop_child()
            raise RuntimeError(f"cannot render video to {self.path}: {status} (offscreen rendering needs "
                               "MUJOCO_GL=osmesa and libosmesa6, or MUJOCO_GL=egl)")
        if not live:
            return
        os.set_blocking(self._proc.stdin.fileno(), False)
        try:  # a one-page pipe (~25 frames): a slow renderer skips frames instead of queueing minutes of them
            fcntl.fcntl(self._proc.stdin.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
        except OSError:
            pass

    def maybe_capture(self, data: mujoco.MjData) -> None:
        """Call after a physics step; sends the pose when a video frame is due (never blocks when live)."""
        if data.time + 1e-9 < self._next_frame_s:
            return
        self._next_frame_s += 1.0 / self._fps
        try:
            # One frame is far below PIPE_BUF, so the write is atomic: all of it or nothing.
            os.write(self._proc.stdin.fileno(), np.asarray(data.qpos, dtype=np.float64).tobytes())
            self.frames_sent += 1
        except (BlockingIOError, BrokenPipeError):
            self.frames_skipped += 1

    def close(self) -> None:
        """Finish the file: the child renders what is queued, closes the encoder and its GL context."""
        if self._proc.poll() is not None:
            return
        try:
            self._proc.stdin.close()  # end of frames
        except BrokenPipeError:
            pass
        status = read_status_line(self._proc, _CLOSE_TIMEOUT_S, "renderer")
        self._stop_child()
        if not status.startswith("done"):
            raise RuntimeError(f"video {self.path}: {status}")
        self.frames_written = int(status.split()[1])

    def _stop_child(self) -> None:
        try:
            self._proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=5.0)


def _render(scene_path: str, path: str, fps: float, width: int, height: int, track_body: str,
            terrain: str = "flat") -> None:
    """The child: read qpos frames from stdin until EOF, render and encode them; report on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Under a real-time parent (realtime_priority) drop back to normal, low-priority scheduling:
    # a renderer that never sleeps must not starve the nodes (the safety monitor's staleness
    # checks above all); a skipped video frame costs nothing.
    try:
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError):
        pass
    set_session_niceness(10)  # it leads a session of its own (start_new_session): its niceness alone ranks nothing
    try:
        import imageio.v2 as iio

        model = scene_model(scene_path, terrain)
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, height)
        # MuJoCo's default 4096² shadow map is most of a software-rendered frame (189 ms of CPU against 96 ms at
        # 1024² and 44 ms without shadows, 320×240 with OSMesa on a 2-core AMD EPYC), and looks the same at this size.
        model.vis.quality.shadowsize = min(model.vis.quality.shadowsize, VIDEO_SHADOW_MAP_PX)
        renderer = mujoco.Renderer(model, height=height, width=width)
        if path.endswith(".mp4"):
            writer = iio.get_writer(path, fps=fps, codec="libx264", quality=7, macro_block_size=8)
        else:
            writer = iio.get_writer(path, mode="I", duration=1000.0 / fps, loop=0)
    except Exception as e:
        print(f"error {type(e).__name__}: {e}", flush=True)
        return
    print("ready", flush=True)
    data = mujoco.MjData(model)
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
    camera.trackbodyid = model.body(track_body).id
    camera.distance, camera.azimuth, camera.elevation = 1.4, 135.0, -20.0
    # The description's visual geoms are few (group 2); its collision shapes (group 3) show the body.
    scene_option = mujoco.MjvOption()
    scene_option.geomgroup[3] = 1
    max_frames = GIF_MAX_FRAMES if path.endswith(".gif") else None
    frame_bytes = 8 * model.nq
    written = 0
    try:
        while len(raw := sys.stdin.buffer.read(frame_bytes)) == frame_bytes:
            if max_frames is not None and written >= max_frames:
                continue  # a GIF holds every frame in memory until it is written: cap it
            data.qpos[:] = np.frombuffer(raw, dtype=np.float64)
            mujoco.mj_forward(model, data)
            renderer.update_scene(data, camera=camera, scene_option=scene_option)
            writer.append_data(np.asarray(renderer.render()))
            written += 1
        writer.close()  # the file is complete only after this (a GIF is encoded here)
        print(f"done {written}", flush=True)
    except Exception as e:
        print(f"error {type(e).__name__}: {e}", flush=True)
    finally:
        renderer.close()


if __name__ == "__main__":
    scene, out, fps_arg, w, h, body = sys.argv[1:7]
    _render(scene, out, float(fps_arg), int(w), int(h), body, *sys.argv[7:8])
