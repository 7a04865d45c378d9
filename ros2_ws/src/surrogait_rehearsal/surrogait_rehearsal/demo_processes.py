"""Starting the rehearsal's nodes as separate processes, and always stopping them.

Each node runs as its console script with `--ros-args --params-file`, exactly as on the robot,
in its own session (process group) with its output in a log file, at a raised priority where
permitted (the simulator and the nodes are soft real-time; training jobs on the machine are not).
`stop_all` sends SIGINT (nodes save their recordings on a clean exit), then SIGTERM, then
SIGKILL to what is left.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import yaml


@dataclasses.dataclass
class Child:
    name: str
    process: subprocess.Popen
    log_path: Path


def installed(executable: str) -> bool:
    return shutil.which(executable) is not None


def write_params(template: Path, node_name: str, overrides: dict, out_path: Path) -> Path:
    """A copy of a parameters file with some values replaced (the rehearsal config stays the one source)."""
    data = yaml.safe_load(template.read_text())
    params = data[node_name]["ros__parameters"]
    params.update(overrides)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(yaml.safe_dump(data, sort_keys=False))
    return out_path


def _raise_priority(niceness: int) -> None:
    """In the child before exec: a real-time rehearsal should not queue behind batch work on the machine."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    except OSError:
        pass  # not permitted (no CAP_SYS_NICE): run at normal priority


class ProcessGroup:
    def __init__(self, log_dir: Path, env: dict[str, str], niceness: int = -10):
        self.log_dir = log_dir
        self.env = env
        self.niceness = niceness
        self.children: list[Child] = []
        log_dir.mkdir(parents=True, exist_ok=True)

    def start(self, name: str, executable: str, params_file: Path) -> Child:
        log_path = self.log_dir / f"{name}.log"
        log = open(log_path, "w")  # noqa: SIM115 (closed when the child is reaped)
        process = subprocess.Popen(
            [executable, "--ros-args", "--params-file", str(params_file)],
            stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True,
            preexec_fn=lambda: _raise_priority(self.niceness),
        )
        child = Child(name, process, log_path)
        self.children.append(child)
        return child

    def dead(self) -> list[Child]:
        return [c for c in self.children if c.process.poll() is not None]

    def stop_all(self, timeout_s: float = 30.0) -> None:
        """SIGINT everything (newest first: the simulator, started first, goes last), then escalate."""
        for sig, wait_s in ((signal.SIGINT, timeout_s), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
            alive = [c for c in reversed(self.children) if c.process.poll() is None]
            if not alive:
                break
            for child in alive:
                try:
                    os.killpg(child.process.pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait_s
            for child in alive:
                try:
                    child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass

    def tail(self, child: Child, lines: int = 15) -> str:
        try:
            return "\n".join(child.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()
