"""One rehearsal session: the node set with its packages' parameters files, brought up, driven, stopped, recorded.

The demo, the fault suite, the rehearsal tests and the benches are clients of `Session`:

    with Session(SessionConfig(folder, domain=24, robot="go2")) as session:
        session.start()                  # the simulator side, then (on its ground truth) the robot's nodes
        session.run_session(walk_test_segments())   # stand up, walk the segments, stop, damp
    # processes stopped; folder/session.npz, sim_log.npz, safety_fault_log.jsonl and logs/ stay

`start` is the one bring-up of a rehearsal, as the launch files start it: the simulator that plays the robot
(MuJoCo on the robot's own wire, or Gazebo / its MuJoCo stand-in behind the Gazebo bridge) first; once its
ground truth arrives, the robot's own nodes, each with its package's parameters file (the file the robot's
launch file gives it) and only this session's link, policy and recording paths over it. So a rehearsal runs
the configuration the robot runs. `stand_up`, `walk`, `run_segments` and `run_session` drive it through the
policy node's services and cmd_vel as an operator would; `stop` stops every process and keeps the records.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from surrogait_core import interfaces
from surrogait_rehearsal.harness.gazebo import (
    MIN_CPUS_FULL_STANDIN_REHEARSAL,
    gazebo_commands,
    gazebo_environment,
    usable_cpus,
)
from surrogait_rehearsal.harness.nodes import (
    DEPLOYMENT_NODES,
    NODES,
    link_params,
    rehearsal_robot,
    shipped_policy_path,
)
from surrogait_rehearsal.harness.operator import Operator, Segment, SessionError
from surrogait_rehearsal.harness.processes import REHEARSAL_NICENESS, ProcessGroup, installed

SIMULATORS = ("mujoco", "gazebo", "gazebo-standin")
GAZEBO_SIMULATORS = ("gazebo", "gazebo-standin")
# How long the simulator side may take to send its first ground truth (gz sim loads its plugins first).
GROUND_TRUTH_TIMEOUT_S = {"mujoco": 60.0, "gazebo": 180.0, "gazebo-standin": 60.0}

Log = Callable[[str], None]
# An action on the running processes from WALK on (a bench's stalls, say), in a thread of its own; `done` is set
# when the session ends.
WhileWalking = Callable[[ProcessGroup, Operator, threading.Event], None]


def simulator_refusal(robot: str, simulator: str) -> str | None:
    """Why `robot` cannot be rehearsed in `simulator` (None: it can)."""
    if simulator not in SIMULATORS:
        return f"simulator {simulator!r}: expected one of {', '.join(SIMULATORS)}"
    if simulator in GAZEBO_SIMULATORS and not rehearsal_robot(robot).gazebo:
        return f"--simulator {simulator} rehearses the Go2 only (the {robot}'s wire has no Gazebo bridge)"
    return None


def walk_test_segments(seconds: float = 3.0, stop_s: float = 1.0) -> list[Segment]:
    """The rehearsal tests' walk: 0.5 m/s and 1.0 m/s straight ahead for `seconds` each, then stop. The tests
    score 2 s of each (after report.SETTLE_S), four gait cycles; the benches walk 5 s each and stop for 2 s."""
    return [
        Segment("walk 0.5 m/s", seconds, (0.5, 0.0, 0.0)),
        Segment("walk 1.0 m/s", seconds, (1.0, 0.0, 0.0)),
        Segment("stop", stop_s, (0.0, 0.0, 0.0), scored=False),
    ]


@dataclasses.dataclass(frozen=True)
class SessionFiles:
    """What a session keeps, all in one folder."""

    folder: Path

    @property
    def logs(self) -> Path:
        return self.folder / "logs"  # every process's output, <name>.log

    @property
    def config(self) -> Path:
        return self.folder / "config"  # the parameters file each node was started with, <name>.yaml

    @property
    def session(self) -> Path:
        return self.folder / "session.npz"  # the operator's record (Operator.save), what the report reads

    @property
    def sim_log(self) -> Path:
        return self.folder / "sim_log.npz"  # the simulator's ground truth and motor record

    @property
    def video(self) -> Path:
        return self.folder / "robot.mp4"

    @property
    def fault_log(self) -> Path:
        return self.folder / "safety_fault_log.jsonl"  # the safety monitor's

    @property
    def timing(self) -> Path:
        return self.folder / "policy_timing.npz"  # the policy node's control loop timing

    @property
    def recording(self) -> Path:
        return self.folder / "session.mcap"  # the session recorder's: topics and wire, for Foxglove / PlotJuggler


@dataclasses.dataclass(frozen=True)
class SessionConfig:
    """A rehearsal: where it keeps its records, which robot on which wire, which processes, what they record."""

    folder: Path
    domain: int = 1  # ROS_DOMAIN_ID, the Go2's DDS domain, the Go1's ports (nodes.go1_ports)
    robot: str = "go2"
    simulator: str = "mujoco"  # one of SIMULATORS (Gazebo: Go2 only)
    policy: Path | None = None  # the ONNX file the policy node runs and the safety monitor reads (default: shipped)
    nodes: Sequence[str] = DEPLOYMENT_NODES  # the robot's nodes beside the simulator side, of DEPLOYMENT_NODES
    params: Mapping[str, Mapping] = dataclasses.field(default_factory=dict)  # per node, over everything else
    stand_ins: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)  # node: argv of a process
    # that plays its part instead (e.g. a development stand-in for the policy node)
    params_files: bool = True  # the packages' parameters files (as on the robot); False: built-in defaults
    sim_log: bool = True  # the simulator records its ground truth (SessionFiles.sim_log)
    video: bool = False  # the simulator renders the robot (SessionFiles.video)
    timing_log: bool = False  # the policy node records its control loop's timing (SessionFiles.timing)
    record: bool = True  # the session recorder writes SessionFiles.recording (as the launch files start it)
    niceness: int | None = REHEARSAL_NICENESS  # every process's, where permitted
    realtime_priority: int = 0  # SCHED_FIFO every process starts under (each node then sets its own from YAML)
    operator_name: str = "surrogait_operator"

    def __post_init__(self) -> None:
        rehearsal_robot(self.robot)  # an unknown robot is refused here, naming the known ones
        if (refusal := simulator_refusal(self.robot, self.simulator)) is not None:
            raise ValueError(refusal)
        unknown = set(self.nodes) - set(DEPLOYMENT_NODES)
        if unknown:
            raise ValueError(f"nodes {sorted(unknown)}: a session's nodes are of {', '.join(DEPLOYMENT_NODES)}")


class Session:
    """One rehearsal (`config`), driven by an operator (made here, or `operator` given and left open)."""

    def __init__(self, config: SessionConfig, operator: Operator | None = None, log: Log = print):
        self.config, self.log = config, log
        self.files = SessionFiles(Path(config.folder).resolve())
        self.policy = Path(config.policy or shipped_policy_path(config.robot)).resolve()
        self._own_operator = operator is None
        self.operator = operator
        self.group = ProcessGroup(self.files.logs, config.domain, config_dir=self.files.config,
                                  cwd=self.files.folder, niceness=config.niceness,
                                  realtime_priority=config.realtime_priority)
        self.started: list[str] = []

    # --- the processes ---------------------------------------------------------------------------

    @property
    def simulator_nodes(self) -> tuple[str, ...]:
        """The processes that take a parameters file and play the robot, in start order."""
        if self.config.simulator == "mujoco":
            return (rehearsal_robot(self.config.robot).sim_node,)
        return ("gz_standin", "gazebo_bridge") if self.config.simulator == "gazebo-standin" else ("gazebo_bridge",)

    @property
    def node_names(self) -> tuple[str, ...]:
        """Every process of the session that takes a parameters file, in start order."""
        return (*self.simulator_nodes, *(name for name in DEPLOYMENT_NODES if name in self.config.nodes))

    def node_params(self) -> dict[str, dict]:
        """Each node's parameters over its package's parameters file: this session's link (domain, ports), the
        policy file, where it records, then `config.params`."""
        c, f = self.config, self.files
        link = link_params(c.robot, c.domain)
        recordings = {"log_path": str(f.sim_log) if c.sim_log else "", "video_path": str(f.video) if c.video else ""}
        own = {
            "gz_standin": recordings,  # the MuJoCo stand-in records what go2_sim records
            "safety_monitor": {"fault_log_path": str(f.fault_log), "policy_path": str(self.policy)},
            "policy_node": {"policy_path": str(self.policy),
                            **({"timing_log_path": str(f.timing)} if c.timing_log else {})},
            "session_recorder": {"output_path": str(f.recording), "policy_path": str(self.policy),
                                 "attach_files": str(f.fault_log)},
            rehearsal_robot(c.robot).sim_node: recordings,
        }
        names = (*self.node_names, *(("session_recorder",) if c.record else ()))
        return {name: {**link.get(name, {}), **own.get(name, {}), **c.params.get(name, {})} for name in names}

    def start(self) -> list[str]:
        """Bring the rehearsal up as the launch file does: the simulator side, then (once the operator has its
        ground truth, so their start-up does not compete with its) the robot's nodes. Returns the names started.

        Optional nodes that are not installed are skipped (said on `log`); a required one raises SystemExit.
        `gazebo` raises GazeboUnavailable, naming what to install, before anything starts.
        """
        c = self.config
        commands = gazebo_commands() if c.simulator == "gazebo" else {}
        self.files.folder.mkdir(parents=True, exist_ok=True)
        self.files.fault_log.unlink(missing_ok=True)  # the monitor appends: the file must be this session's only
        if self.operator is None:
            self.operator = Operator(c.domain, log=self.log, name=c.operator_name)
        params = self.node_params()
        if c.record:
            self._start_recorder(params["session_recorder"])
        if commands:
            self.group.env.update(gazebo_environment(c.domain))
            for name, argv in commands.items():
                self.group.start(name, argv)
                self._started(name, f"{' '.join(argv[:2])} ...")
        for name in self.simulator_nodes:
            self._start_node(name, params[name])
        self.operator.wait_for("the simulator's ground truth", lambda: bool(self.operator.ground_truth),
                               GROUND_TRUTH_TIMEOUT_S[c.simulator], abort_on=self.group.why_dead)
        full_rate = "control_rate_hz" not in c.params.get("gazebo_bridge", {})
        if c.simulator == "gazebo-standin" and set(DEPLOYMENT_NODES) <= set(c.nodes) and full_rate \
                and usable_cpus() < MIN_CPUS_FULL_STANDIN_REHEARSAL:
            self.log(f"  warning: the stand-in rehearsal with all three nodes at the package rates needs "
                     f"{MIN_CPUS_FULL_STANDIN_REHEARSAL} or more CPUs and this process may use {usable_cpus()}: "
                     "expect real-time gaps that the monitor and the policy node call faults; on 2 cores run the "
                     "Gazebo side at 250 Hz as tests/rehearsal_sim/test_gazebo_bridge_walk.py does "
                     "(harness.gazebo.MIN_CPUS_FULL_STANDIN_REHEARSAL)")
        for name in self.node_names[len(self.simulator_nodes):]:
            self._start_node(name, params[name])
        return self.started

    def _start_recorder(self, params: dict) -> None:
        """The session recorder, first: it only listens, and then the file holds the session from its start."""
        self.files.recording.unlink(missing_ok=True)
        self._start_node("session_recorder", params)

    def _start_node(self, name: str, params: dict) -> None:
        if name in self.config.stand_ins:
            self.group.start(name, list(self.config.stand_ins[name]))
            self._started(name, "a stand-in")
        elif not installed(name):
            if NODES[name].required:
                raise SystemExit(f"rehearsal: {name} is not installed (run `make setup`)")
            self.log(f"  {name}: not installed, skipped")
        else:
            self.group.start_node(name, params, package_params=self.config.params_files)
            self._started(name)

    def _started(self, name: str, note: str = "") -> None:
        self.started.append(name)
        self.log(f"  {name}: started" + (f" ({note})" if note else ""))

    def ready_line(self, name: str) -> str:
        """The line node `name` logs once it is up on this session's link."""
        return rehearsal_robot(self.config.robot).ready_lines[name]

    def wait_ready(self, *names: str, timeout_s: float = 60.0) -> None:
        """Until each of `names` (default: every node started) has logged its ready line."""
        for name in names or self.started:
            self.group[name].wait_for_log(self.ready_line(name), timeout_s)

    def why_dead(self) -> str | None:
        return self.group.why_dead()

    def why_not_going_on(self) -> str | None:
        """Why a scripted session cannot go on: the policy node damped, or a process exited (None: it can)."""
        if self.operator.policy_state == "DAMP":
            return "the policy node went to DAMP"
        return self.group.why_dead()

    def pid(self, name: str) -> int:
        return self.group[name].pid

    # --- bring-up to READY and WALK ----------------------------------------------------------------

    def _latched(self) -> str | None:
        """The safety monitor's latched cause, if it latched (None while it is OK or not running)."""
        verdict = self.operator.safety_state
        return verdict.get("cause") or "latched" if verdict.get("state") == "DAMP" else None

    def stand_up(self, timeout_s: float = 20.0) -> None:
        """From PASSIVE to READY: wait for the policy node (and the safety monitor's OK where it runs), ask for the
        stand-up until it is accepted (refused until the node has a fresh robot state), wait for READY.

        SessionError when it cannot get there: a damp or a latched monitor before anything moved is a false
        fault at bring-up, and fails the session like any other.
        """
        op = self.operator
        op.wait_for("the policy node", lambda: op.policy_state is not None, 60.0, abort_on=self.why_dead)
        if "safety_monitor" in self.started:
            op.wait_for("the safety monitor", lambda: bool(op.safety_state), 60.0, abort_on=self.why_dead)
        deadline = time.monotonic() + timeout_s
        while True:
            if (cause := self._latched()) is not None or op.policy_state == "DAMP":
                raise SessionError(f"the policy node was in {op.policy_state} before the stand-up (safety monitor: "
                                   f"{cause or 'no fault'}; see the fault log)")
            if (why := self.why_dead()) is not None:
                raise SessionError(why)
            if op.call(interfaces.SRV_STAND_UP)[0]:
                break
            if time.monotonic() > deadline:
                raise SessionError("the policy node never accepted stand_up")
            time.sleep(0.1)
        op.wait_for_state("READY", 15.0)

    def walk(self, vx: float = 0.0, vy: float = 0.0, yaw_rate: float = 0.0) -> None:
        """From READY to WALK with this velocity command (sent at 20 Hz from now on)."""
        self.operator.set_cmd_vel(vx, vy, yaw_rate)
        self.operator.call(interfaces.SRV_WALK, must_succeed=True)
        self.operator.wait_for_state("WALK", 5.0)

    def run_segments(self, segments: Sequence[Segment], on_tick: Callable[[Segment, float], None] | None = None,
                     switch_gait: str | None = None) -> None:
        """Walk through `segments` (the operator's record marks each); with `switch_gait`, switch to that gait as
        the second segment starts. SessionError at once when the policy node damps or a process exits."""
        switch_at = segments[1] if switch_gait is not None and len(segments) > 1 else None

        def tick(segment: Segment, elapsed: float) -> None:
            nonlocal switch_at
            if segment is switch_at:  # the second segment starts: switch gait while walking
                switch_at = None
                self.operator.call(interfaces.SRV_GAIT_PREFIX + switch_gait, must_succeed=True)
            if on_tick is not None:
                on_tick(segment, elapsed)

        self.operator.run_segments(list(segments), on_tick=tick, abort_on=self.why_not_going_on)

    def finish(self) -> None:
        """From WALK: stop walking, stand, damp, let the robot settle; SessionError if anything latched."""
        op = self.operator
        op.call(interfaces.SRV_STOP_WALK, must_succeed=True)
        op.wait_for_state("READY", 5.0)
        time.sleep(1.0)
        if (state := op.policy_state) != "READY":  # a damp while standing after the walk
            raise SessionError(f"the policy node left READY before the final damp (now {state})")
        # Damp before the processes stop: a simulator that exits under stiff motors is a stale robot state to
        # the monitor, which (rightly) faults.
        op.call(interfaces.SRV_DAMP, must_succeed=True)
        op.wait_for_state("DAMP", 5.0)
        # The simulator's records (50 Hz) and the session log hold the damping the session ends with before
        # anything stops; on camera, the robot settles in it.
        time.sleep(1.5 if self.config.video else 0.5)
        latched = [v.get("cause", "") for _, v in op.safety_states if v.get("state") == "DAMP"]
        if latched:
            raise SessionError(f"the safety monitor latched during the session: {latched[0]}")

    def run_session(self, segments: Sequence[Segment] | None = None, *, switch_gait: str | None = None,
                    on_tick: Callable[[Segment, float], None] | None = None,
                    while_walking: WhileWalking | None = None) -> None:
        """The scripted session (the demo's, the walk tests'): stand up, walk through `segments` (default
        `walk_test_segments()`), stop, damp. SessionError when it cannot go on.

        `while_walking(group, operator, done)` runs in a thread from WALK on, until the session ends.
        """
        done = threading.Event()
        if while_walking is not None:
            def from_walk() -> None:
                self.operator.wait_for("WALK", lambda: self.operator.policy_state == "WALK" or done.is_set(), 120.0)
                if not done.is_set():
                    while_walking(self.group, self.operator, done)

            threading.Thread(target=from_walk, name="while_walking", daemon=True).start()
        try:
            self.stand_up()
            segments = walk_test_segments() if segments is None else segments
            self.walk(*segments[0].command)
            self.run_segments(segments, on_tick=on_tick, switch_gait=switch_gait)
            self.finish()
        finally:
            done.set()

    # --- the end ------------------------------------------------------------------------------------

    def process_logs(self, lines: int = 15) -> str:
        """The end of every process's log, for a failure message."""
        return "\n".join(f"--- {c.name}\n{c.tail(lines)}" for c in self.group.children)

    def stop(self, grace_s: float = 30.0, term_s: float | None = 3.0) -> None:
        """Save the operator's record (SessionFiles.session), stop every process (each writes its own records),
        close the operator if the session made it. Safe to call twice."""
        if self.operator is not None and self.started:
            self.operator.save(self.files.session)
        self.group.stop_all(grace_s=grace_s, term_s=term_s)
        if self._own_operator and self.operator is not None:
            self.operator.close()
            self.operator = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclasses.dataclass(frozen=True)
class SessionOutcome:
    error: str  # why the session stopped early; "" when it completed
    process_logs: str  # the end of every process's log, kept when it stopped early


def rehearse(config: SessionConfig, segments: Sequence[Segment] | None = None, *,
             while_walking: WhileWalking | None = None, log: Log = print) -> SessionOutcome:
    """Start the session, run the scripted session through `segments` (`walk_test_segments()` by default), stop;
    the records are in `config.folder` afterwards (SessionFiles), whether it completed or not."""
    with Session(config, log=log) as session:
        try:
            session.start()
            session.run_session(segments, while_walking=while_walking)
        except SessionError as e:
            return SessionOutcome(str(e), session.process_logs())
    return SessionOutcome("", "")
