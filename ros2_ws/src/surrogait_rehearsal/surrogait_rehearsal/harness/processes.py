"""The rehearsal's node set, started as separate processes: one environment, logs, readiness, stop.

Each node runs as its console script with `--ros-args --params-file`, exactly as on the robot, in
its own session (process group) with its output in `<log_dir>/<name>.log`. `ProcessGroup` is the
one launcher of the demo, the fault suite, the benches and the tests; `child_env` is the one
environment of every process they start.
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
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from surrogait_core.runtime.ros_node import STACK_DUMP_SIGNAL

if TYPE_CHECKING:
    from surrogait_rehearsal.harness.operator import Operator

REPO_ROOT = Path(__file__).resolve().parents[5]
PACKAGES = REPO_ROOT / "ros2_ws" / "src"
BIN = Path(sys.executable).parent  # the console scripts installed with this interpreter (the venv)
SHIPPED_POLICY = "{robot}_trot.onnx"  # in surrogait_bringup's policies/
# The simulator and the nodes are soft real-time; training jobs on the machine are not. Groups that
# rehearse as the demo does start their processes at this niceness where permitted.
REHEARSAL_NICENESS = -10


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    """One node of the rehearsal: its name is the console script, the ROS node and the YAML section."""

    name: str
    module: str  # the console script's module (its main()), for a package installed without its scripts
    params_file: Path  # the package's parameters file; its defaults are the rehearsal's
    ready_line: str  # printed to the log once the node is up (Go2; see `ready_line`)
    required: bool  # a rehearsal session needs it (the demo skips the others when they are not installed)
    go1_ready_line: str = ""  # the Go1's ready line where it differs


# The rehearsals of launch/go2_rehearsal.launch.py and launch/go1_rehearsal.launch.py, in start order
# (each starts the simulator of its robot, `sim_node(robot)`).
NODES: dict[str, NodeSpec] = {spec.name: spec for spec in (
    NodeSpec("go2_sim", "surrogait_rehearsal.go2_sim_node", PACKAGES / "surrogait_rehearsal/config/go2_sim.yaml",
             "Go2 simulator:", True),
    NodeSpec("go1_sim", "surrogait_rehearsal.go1_sim_node", PACKAGES / "surrogait_rehearsal/config/go1_sim.yaml",
             "Go1 simulator:", True),
    # The Gazebo rehearsal (launch/go2_gazebo.launch.py; `demo --simulator gazebo*`): the MuJoCo stand-in for
    # gz sim + ros_gz_bridge, and the bridge from Gazebo's topics to the Go2's wire. Not in `rehearsal_nodes`.
    NodeSpec("gz_standin", "surrogait_rehearsal.gz_standin_node",
             PACKAGES / "surrogait_rehearsal/config/gz_standin.yaml", "Gazebo stand-in:", True),
    NodeSpec("gazebo_bridge", "surrogait_rehearsal.gazebo_bridge_node",
             PACKAGES / "surrogait_rehearsal/config/gazebo_bridge.yaml", "Gazebo bridge:", True),
    NodeSpec("estimator_node", "surrogait_estimator.estimator_node",
             PACKAGES / "surrogait_estimator/config/estimator.yaml", "state estimator for go2", False,
             go1_ready_line="state estimator for go1"),
    NodeSpec("safety_monitor", "surrogait_safety.safety_monitor_node",
             PACKAGES / "surrogait_safety/config/safety_monitor.yaml", "watching rt/lowstate", False,
             go1_ready_line="gateway "),
    NodeSpec("policy_node", "surrogait_policy.policy_node", PACKAGES / "surrogait_policy/config/policy_node.yaml",
             "unitree_sdk2 DDS domain", True, go1_ready_line="unitree_legged_sdk UDP link to"),
)}
SIM_NODES = {"go2": "go2_sim", "go1": "go1_sim"}
GAZEBO_NODES = ("gz_standin", "gazebo_bridge")  # started by the Gazebo rehearsal only


def sim_node(robot: str) -> str:
    """The rehearsal simulator of `robot`: the node that plays that robot's side of its wire."""
    if robot not in SIM_NODES:
        raise ValueError(f"no rehearsal simulator for robot {robot!r}; expected one of {', '.join(SIM_NODES)}")
    return SIM_NODES[robot]


def rehearsal_nodes(robot: str) -> list[str]:
    """The nodes of `robot`'s MuJoCo rehearsal, in start order (the Gazebo rehearsal's are gazebo_rehearsal's)."""
    other_sims = set(SIM_NODES.values()) - {sim_node(robot)}
    return [name for name in NODES if name not in other_sims and name not in GAZEBO_NODES]


def ready_line(name: str, robot: str = "go2") -> str:
    spec = NODES[name]
    return spec.go1_ready_line or spec.ready_line if robot == "go1" else spec.ready_line


@dataclasses.dataclass(frozen=True)
class Go1Ports:
    """The UDP ports of one Go1 rehearsal on 127.0.0.1 (the robot's side played by the simulator)."""

    robot: int  # the simulated robot (the Go1's 8007)
    monitor_robot_side: int  # the gateway's socket towards the robot (8080 on a robot)
    policy: int  # the gateway's socket the policy node sends to (8017)
    policy_local: int  # the policy node's SDK socket (8081)
    estimator: int  # where the gateway forwards LowState for the estimator (8019)
    tap: int  # the simulator's copy of its traffic, for an observer (rehearsal only)


def go1_ports(domain: int) -> Go1Ports:
    """Ports derived from the rehearsal's ROS domain, so that rehearsals on different domains never collide
    (and none uses the robot's own 8007/8080, which a vendor tool on this machine may hold)."""
    base = 21000 + 10 * domain
    return Go1Ports(base, base + 1, base + 2, base + 3, base + 4, base + 5)


def go1_node_params(ports: Go1Ports, interface: str = "lo") -> dict[str, dict]:
    """Each Go1 rehearsal node's link parameters for `ports` on loopback."""
    return {
        "go1_sim": {"udp_host": "127.0.0.1", "udp_port": ports.robot, "udp_tap_port": ports.tap},
        "safety_monitor": {"robot": "go1", "network_interface": interface, "udp_robot_ip": "127.0.0.1",
                           "udp_robot_port": ports.robot, "udp_robot_local_port": ports.monitor_robot_side,
                           "udp_policy_port": ports.policy, "udp_estimator_port": ports.estimator},
        "policy_node": {"robot": "go1", "network_interface": interface, "udp_peer_ip": "127.0.0.1",
                        "udp_peer_port": ports.policy, "udp_local_port": ports.policy_local},
        "estimator_node": {"robot": "go1", "udp_lowstate_port": ports.estimator},
    }


class ProcessExited(RuntimeError):
    """A rehearsal process exited while it was needed."""


def shipped_policy_path(robot: str = "go2") -> Path:
    """The shipped policy of `robot`, where the deployment installs it (surrogait_bringup), not the trainer."""
    from surrogait_bringup.policies import shipped_policy

    return shipped_policy(SHIPPED_POLICY.format(robot=robot))


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


def write_params(name: str, params: dict, path: Path, package_params: bool = False) -> Path:
    """A parameters file for node `name`: `params` over its package's parameters file (`package_params`,
    as the launch file and the demo start it) or over the node's built-in defaults."""
    if package_params:
        data = yaml.safe_load(NODES[name].params_file.read_text())
    else:
        data = {name: {"ros__parameters": {}}}
    data[name]["ros__parameters"].update(params)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def link_params(robot: str, domain: int) -> dict[str, dict]:
    """Each rehearsal node's link parameters: the Go2's DDS domain `domain` on lo, or the Go1's UDP ports
    of that domain (`go1_ports`: never the robot's own 8007/8080)."""
    if robot == "go1":
        return go1_node_params(go1_ports(domain))
    return {name: {"dds_domain": domain, "network_interface": "lo"} for name in rehearsal_nodes(robot)}


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
    process starts at `niceness` and, with `rt_priority` > 0, under SCHED_FIFO at that priority.
    """

    def __init__(self, log_dir: Path, domain: int, *, config_dir: Path | None = None, cwd: Path | None = None,
                 niceness: int | None = None, rt_priority: int = 0):
        self.log_dir, self.domain = Path(log_dir), domain
        self.config_dir = Path(config_dir) if config_dir is not None else self.log_dir
        self.cwd, self.niceness, self.rt_priority = cwd, niceness, rt_priority
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
        if self.rt_priority > 0:
            from surrogait_core.runtime.realtime import try_realtime

            try_realtime(self.rt_priority)

    def start(self, name: str, argv: list[str], *, boost: bool = True) -> Child:
        """Start `argv` as child `name` (made unique in the group), output to `<log_dir>/<name>.log`.

        `boost=False` runs it at normal priority whatever the group's or this process's (e.g. a tool that
        would starve the rehearsal's real-time processes while it imports its modules).
        """
        name = self._unique(name)
        log_path = self.log_dir / f"{name}.log"
        boosted = boost and (self.niceness is not None or self.rt_priority > 0)
        with open(log_path, "w") as log:  # the child writes to its own copy of the descriptor
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd,
                                       start_new_session=True, preexec_fn=self._boost if boosted else _normal)
        child = Child(name, process, log_path)
        self.children.append(child)
        return child

    def start_node(self, name: str, params: dict | None = None, *, package_params: bool = False) -> Child:
        """Start node `name` of NODES with `params` (see `write_params`), written to `<config_dir>/<child>.yaml`."""
        child_name = self._unique(name)
        path = write_params(name, params or {}, self.config_dir / f"{child_name}.yaml", package_params)
        return self.start(child_name, [*node_command(name), "--ros-args", "--params-file", str(path)])

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


def launch_rehearsal(group: ProcessGroup, operator: Operator, overrides: dict[str, dict],
                     log: Callable[[str], None] = print) -> list[str]:
    """Start the nodes named in `overrides` as the launch file does: the simulator first, then (once the
    operator receives its ground truth, so their start-up does not compete with its) the others.

    Each node gets its package's parameters file with `overrides[name]` applied. Optional nodes that are
    not installed are skipped; a required one raises SystemExit. Returns the names started.
    """
    started = []
    for name, spec in NODES.items():
        if name not in overrides:
            continue
        if not installed(name):
            if spec.required:
                raise SystemExit(f"rehearsal: {name} is not installed (run `make setup`)")
            log(f"  {name}: not installed, skipped")
            continue
        group.start_node(name, overrides[name], package_params=True)
        started.append(name)
        log(f"  {name}: started")
        if name in SIM_NODES.values():
            operator.wait_for("the simulator's ground truth", lambda: bool(operator.ground_truth), 60.0,
                              abort_on=group.why_dead)
    return started
