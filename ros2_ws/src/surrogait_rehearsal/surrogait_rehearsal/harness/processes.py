"""Rehearsal processes: one environment, a log each, readiness, stop.

Each node runs as its console script with `--ros-args --params-file`, exactly as on the robot, in
its own session (process group) with its output in `<log_dir>/<name>.log`. `ProcessGroup` starts and
stops the processes of a rehearsal `Session` (harness.session), and of the tests of one node's
process; `child_env` is the one environment of every process they start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from surrogait_core.runtime.ros_node import STACK_DUMP_SIGNAL
from surrogait_rehearsal.harness.nodes import NODES, write_params

BIN = Path(sys.executable).parent  # the console scripts installed with this interpreter (the venv)
# The simulator and the nodes are soft real-time; training jobs on the machine are not. Groups that
# rehearse as the demo does start their processes at this niceness where permitted.
REHEARSAL_NICENESS = -10


class ProcessExited(RuntimeError):
    """A rehearsal process exited while it was needed."""


RENDERING_ENV = ("MUJOCO_GL", "PYOPENGL_PLATFORM")


def child_env(domain: int) -> dict[str, str]:
    """The environment of every rehearsal process: this process's, with ROS_DOMAIN_ID `domain`,
    discovery kept on this machine, unbuffered output (log lines in order), offscreen rendering unless
    set, and this interpreter's console scripts first on PATH."""
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    env.setdefault("MUJOCO_GL", "osmesa")
    env.setdefault("PYOPENGL_PLATFORM", "osmesa")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def node_command(name: str) -> list[str]:
    """The command that starts node `name`: its console script next to this interpreter, else on PATH,
    else its module's main() under this interpreter."""
    local = BIN / name
    if local.is_file():
        return [str(local)]
    found = shutil.which(name)
    if found:
        return [found]
    return [sys.executable, "-c", f"import sys; from {NODES[name].module} import main; sys.exit(main())"]


def installed(name: str) -> bool:
    """Whether node `name` can be started here (its console script or its module exists)."""
    if (BIN / name).is_file() or shutil.which(name):
        return True
    try:
        return importlib.util.find_spec(NODES[name].module) is not None
    except ModuleNotFoundError:
        return False


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system, all threads) a process has used so far; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def dump_stacks(children: Iterable[Child], settle_s: float = 0.5) -> None:
    """Have each child that is still running write its threads' stacks to its log (a node's STACK_DUMP_SIGNAL,
    surrogait_core.runtime.ros_node), before it is killed: a hung shutdown then says where it hung."""
    signalled = False
    for child in children:
        if child.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGCONT)
                os.kill(child.pid, STACK_DUMP_SIGNAL)
                signalled = True
    if signalled:
        time.sleep(settle_s)


@dataclasses.dataclass
class Child:
    """One started process, in a session of its own, its output in `log_path`."""

    name: str
    process: subprocess.Popen
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.log.splitlines()[-lines:])

    def wait_for_log(self, text: str, timeout_s: float = 30.0) -> None:
        """Until `text` is in the log (e.g. its node's `ready_line`); ProcessExited if it exits first."""
        deadline = time.monotonic() + timeout_s
        while text not in self.log:
            if self.process.poll() is not None:
                raise ProcessExited(f"{self.name} exited with {self.process.returncode}:\n{self.log[-3000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: no {text!r} after {timeout_s} s:\n{self.log[-3000:]}")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 30.0) -> int:
        """Send `sig` to the process alone (children of its own, such as the simulator's video renderer,
        finish under it), wait up to `timeout_s`, then SIGKILL its group. Returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                dump_stacks([self])
                self.kill()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL to the process's group."""
        if self.process.poll() is None:
            _signal_group(self.process, signal.SIGKILL)
            self.process.wait(timeout=10)


def _normal() -> None:
    """In a child before exec: normal scheduling. A child inherits SCHED_FIFO from a real-time parent (a
    bench recording at the rehearsal's priority); a tool importing its modules for a second at that
    priority would hold a core from the rehearsal's processes of the same priority (FIFO does not share)."""
    try:
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except OSError:
        pass


class ProcessGroup:
    """The processes of one rehearsal on DDS domain `domain`; `stop_all` on exit.

    Logs (and parameters files, unless `config_dir` is given) go to `log_dir`. Where permitted, each
    process starts at `niceness` and, with `realtime_priority` > 0, under SCHED_FIFO at that priority.
    """

    def __init__(self, log_dir: Path, domain: int, *, config_dir: Path | None = None, cwd: Path | None = None,
                 niceness: int | None = None, realtime_priority: int = 0):
        self.log_dir, self.domain = Path(log_dir), domain
        self.config_dir = Path(config_dir) if config_dir is not None else self.log_dir
        self.cwd, self.niceness, self.realtime_priority = cwd, niceness, realtime_priority
        self.env = child_env(domain)
        self.children: list[Child] = []
        self.log_dir.mkdir(parents=True, exist_ok=True)

    def _unique(self, name: str) -> str:
        taken = {c.name for c in self.children}
        unique, n = name, 1
        while unique in taken:
            n += 1
            unique = f"{name}_{n}"
        return unique

    def _boost(self) -> None:
        """In the child before exec: its priority (silently normal where not permitted)."""
        if self.niceness is not None:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, self.niceness)
            except OSError:
                pass
        if self.realtime_priority > 0:
            from surrogait_core.runtime.realtime import enter_realtime

            enter_realtime(self.realtime_priority)

    def start(self, name: str, argv: list[str], *, boost: bool = True, renders: bool = True) -> Child:
        """Start `argv` as child `name` (made unique in the group), output to `<log_dir>/<name>.log`.

        `boost=False` runs it at normal priority whatever the group's or this process's (e.g. a tool that
        would starve the rehearsal's real-time processes while it imports its modules). `renders=False`
        starts it without the offscreen-rendering environment, as on the robot: with MUJOCO_GL set, importing
        mujoco (the robot spec) loads OpenGL too, a quarter second of CPU beside the rehearsal for nothing.
        """
        name = self._unique(name)
        log_path = self.log_dir / f"{name}.log"
        boosted = boost and (self.niceness is not None or self.realtime_priority > 0)
        with open(log_path, "w") as log:  # the child writes to its own copy of the descriptor
            env = self.env if renders else {k: v for k, v in self.env.items() if k not in RENDERING_ENV}
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.cwd,
                                       start_new_session=True, preexec_fn=self._boost if boosted else _normal)
        child = Child(name, process, log_path)
        self.children.append(child)
        return child

    def start_node(self, name: str, params: dict | None = None, *, package_params: bool = False) -> Child:
        """Start node `name` of NODES with `params` (see `write_params`), written to `<config_dir>/<child>.yaml`."""
        child_name = self._unique(name)
        path = write_params(name, params or {}, self.config_dir / f"{child_name}.yaml", package_params)
        return self.start(child_name, [*node_command(name), "--ros-args", "--params-file", str(path)],
                          renders=NODES[name].renders)

    def __getitem__(self, name: str) -> Child:
        for child in reversed(self.children):
            if child.name == name:
                return child
        raise KeyError(name)

    def dead(self) -> list[Child]:
        return [c for c in self.children if c.process.poll() is not None]

    def why_dead(self) -> str | None:
        """'<name> exited (<code>); see <log>' for the first child that has exited, else None."""
        dead = self.dead()
        return f"{dead[0].name} exited ({dead[0].process.returncode}); see {dead[0].log_path}" if dead else None

    def check_alive(self, names: Iterable[str] | None = None) -> None:
        """ProcessExited, with the end of its log, if any of `names` (default: every child) has exited."""
        wanted = None if names is None else set(names)
        for child in self.children:
            if (wanted is None or child.name in wanted) and child.process.poll() is not None:
                raise ProcessExited(f"{child.name} exited with {child.process.returncode}:\n{child.log[-2000:]}")

    def stop_all(self, grace_s: float = 30.0, term_s: float | None = 3.0) -> None:
        """SIGINT every group (newest first: the simulator, started first, goes last; a SIGSTOPped process
        is continued first), wait up to `grace_s`; then SIGTERM (`term_s`, None to skip) and SIGKILL."""
        stacks_dumped = False
        for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, term_s), (signal.SIGKILL, 3.0)):
            if wait_s is None:
                continue
            alive = [c for c in reversed(self.children) if c.process.poll() is None]
            if not alive:
                break
            if sig != signal.SIGINT and not stacks_dumped:  # they did not stop on SIGINT: stacks to their logs
                dump_stacks(alive)
                stacks_dumped = True
            for child in alive:
                if sig != signal.SIGKILL:
                    _signal_group(child.process, signal.SIGCONT)  # a stopped process cannot handle a signal
                _signal_group(child.process, sig)
            deadline = time.monotonic() + wait_s
            for child in alive:
                try:
                    child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass

    def pause(self, seconds: float, names: Iterable[str] | None = None) -> None:
        """Stop these children (all by default), each with its process group, at once for `seconds`, then let
        them go on: what a hypervisor's pause of the whole machine (or one process's descheduling) does."""
        pgids = [child.pid for child in self.children if names is None or child.name in names]
        for pgid in pgids:  # each child leads a process group of its own
            os.killpg(pgid, signal.SIGSTOP)
        time.sleep(seconds)
        for pgid in pgids:
            os.killpg(pgid, signal.SIGCONT)

    def kill_all(self) -> None:
        """SIGKILL every group at once (a test's teardown)."""
        for child in self.children:
            child.kill()

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()
