"""The status lines of the simulator's helper processes (the video renderer, the recording's writer).

Each helper reports on its stdout, one line at a time: "ready" once started, "done N" once its file is
complete, "error ..." when it cannot go on. The simulator waits for those lines with a time-out, so that a
helper that died or hangs is named instead of blocking the simulator's start or exit.
"""

from __future__ import annotations

import select
import subprocess
import time


def read_status_line(proc: subprocess.Popen, timeout_s: float, who: str) -> str:
    """`proc`'s next status line, or why there is none (`who` names the helper in that message)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline().decode(errors="replace").strip()
            if line:
                return line
        if proc.poll() is not None and not ready:
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            return f"{who} exited with code {proc.returncode}: {err[-1] if err else 'no message'}"
    return f"{who} gave no answer within {timeout_s:.0f} s"
