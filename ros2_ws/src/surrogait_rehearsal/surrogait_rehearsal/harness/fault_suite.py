"""The fault-injection suite: real processes (the simulator, policy_node, safety_monitor) on the robot's wire.

Each scenario starts a fresh rehearsal, stands the robot up (and walks it), injects one fault,
and judges the result from an *independent* observer of the wire in this process — on the Go2 a
unitree_sdk2py subscriber on the DDS wire, on the Go1 the simulator's tap (a copy of every LowCmd
the simulated robot accepted and every LowState it sent; the Go1's UDP link is point to point):
- latency: from the fault to the first damping LowCmd reaching the robot (target ≤ 60 ms);
- after the fault no command on the wire violates a limit (finite, stiff targets inside the
  joint range, commanded torque kp·(q*−q)+kd·(dq*−dq)+τff within the motor's limit), the
  injector's own commands excepted;
- the robot ends lying still (joints and base gyro quiet; ground-truth base height low);
- the fault is in the safety monitor's fault log.
The processes are the harness's ProcessGroup, the operator its Operator. Used by bench/safety.py
(the whole suite) and tests/safety (a representative subset).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from surrogait_core import interfaces
from surrogait_core.policy.contract import PolicyContract
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety import read_fault_log
from surrogait_core.safety.rules import commanded_torque, driven, roll_pitch
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_core.wire import go1_wire, go2_wire
from surrogait_core.wire.go2_wire import LowStateView, MotorCommands
from surrogait_core.wire.lowcmd_stream import LowCmdStream, RepeatFilter
from surrogait_rehearsal.harness.fault_injection import FIRST_ROGUE_LINE, make_nan_policy
from surrogait_rehearsal.harness.nodes import go1_ports, link_params, sim_node
from surrogait_rehearsal.harness.operator import Operator
from surrogait_rehearsal.harness.processes import ProcessGroup, cpu_seconds

LATENCY_TARGET_S = 0.060
STILL_JOINT_VEL = 0.3  # rad/s: "lying still" (the reset criterion's default)
STILL_GYRO = 0.3  # rad/s
LYING_HEIGHT_M = 0.2  # ground-truth base height below which the robot lies (standing ≈ 0.28 m)
MAX_SETTLE_S = 10.0  # a robot knocked onto its side can rock for a few seconds before it lies still
ROGUE_JOINT, ROGUE_TARGET = "FR_hip", 1.5  # rad; the hip range is ±1.047 rad (Go2), ±0.863 rad (Go1)
NAN_VX_TRIGGER = 0.75  # m/s
_TH = default_thresholds(load_robot_spec("go2"))
# Silence thresholds for the default 500 Hz command stream (the fault log records the one applied).
SILENCE_CAUSES = {"lowstate_stale": _TH.stale_state_s, "policy_silent": _TH.policy_silent_s(0.002)}
POLICY = "policy_node"  # the policy's process: the node, or the development stand-in in its place


def node_names(robot: str) -> tuple[str, ...]:
    return (sim_node(robot), "safety_monitor", POLICY)


SO_TIMESTAMPNS = 35  # Linux (asm-generic/socket.h); the socket module does not name it


def kernel_arrival_monotonic(cmsgs: list[tuple[int, int, bytes]], seen_at_monotonic: float) -> float:
    """When the kernel queued a datagram (its SCM_TIMESTAMPNS, CLOCK_REALTIME) on the monotonic clock;
    `seen_at_monotonic` where the message carries no timestamp."""
    import socket
    import struct

    for level, kind, payload in cmsgs:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
            sec, nsec = struct.unpack("qq", payload[:16])
            realtime_minus_monotonic = time.clock_gettime(time.CLOCK_REALTIME) - time.monotonic()
            return sec + nsec * 1e-9 - realtime_minus_monotonic
    return seen_at_monotonic


# --- the independent wire observers ----------------------------------------------------------
class _WireLog:
    """Every LowCmd that reached the robot and every LowState, with arrival times (monotonic), decoded at
    `snapshot()` — commands as MotorCommands, states as LowStateView, whatever the robot. A subclass feeds
    `_raw_cmds` / `_raw_states` and says how to decode one of each."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._raw_cmds: list[tuple[float, bytes]] = []
        self._raw_states: list[tuple[float, object]] = []
        self.stamp_lag_max_s: float | None = None  # how late a sample's own time stamp came, where known

    def _decode_cmd(self, raw: bytes) -> MotorCommands:
        raise NotImplementedError

    def _decode_state(self, raw: object) -> LowStateView:
        raise NotImplementedError

    def clear(self):
        with self.lock:
            self._raw_cmds, self._raw_states = [], []

    def snapshot(self) -> tuple[list[tuple[float, MotorCommands]], list[tuple[float, LowStateView]]]:
        with self.lock:
            raw, states = list(self._raw_cmds), list(self._raw_states)
        cmds, repeats = [], RepeatFilter()  # a run of identical messages is decoded once
        for t, data in raw:
            if not repeats.repeated(data):
                repeats.remember(data, self._decode_cmd(data))
            cmds.append((t, repeats.verdict))
        return cmds, [(t, self._decode_state(m)) for t, m in states]

    def recent_states(self, n: int) -> list[tuple[float, LowStateView]]:
        with self.lock:
            tail = self._raw_states[-n:]
        return [(t, self._decode_state(m)) for t, m in tail]

    def recent_commands(self, n: int) -> list[MotorCommands]:
        with self.lock:
            tail = self._raw_cmds[-n:]
        return [self._decode_cmd(data) for _, data in tail]

    def last_state_time(self) -> float | None:
        with self.lock:
            return self._raw_states[-1][0] if self._raw_states else None


class WireRecorder(_WireLog):
    """The Go2's DDS wire: every rt/lowcmd and rt/lowstate sample.

    rt/lowcmd comes at the motor rate (500 Hz): it is polled raw (every sample, timed by its source
    timestamp) rather than deserialized in a listener, which on a loaded machine fell behind and
    timed samples late.
    """

    POLL_S = 0.002

    def __init__(self, domain: int):
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.core.channel import ChannelSubscriber
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

        super().__init__()
        self._deserialize = LowCmd_.deserialize
        self._cmd_stream = LowCmdStream(DomainParticipant(domain))  # after ChannelFactoryInitialize: its config
        self._sub = ChannelSubscriber(go2_wire.LOWSTATE_TOPIC, LowState_)
        self._sub.Init(self._on_state, 0)
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll_cmds, name="lowcmd_recorder", daemon=True)
        self._poller.start()

    def _decode_cmd(self, raw: bytes) -> MotorCommands:
        return go2_wire.motor_commands(self._deserialize(raw))

    def _decode_state(self, raw: object) -> LowStateView:
        return go2_wire.decode_lowstate(raw)

    def _poll_cmds(self):
        while not self._stop.wait(self.POLL_S):
            samples = self._cmd_stream.poll()
            if samples:
                with self.lock:
                    self._raw_cmds += [(t, data) for data, t in samples]

    def _on_state(self, msg):
        t = time.monotonic()
        with self.lock:
            self._raw_states.append((t, msg))


class TapRecorder(_WireLog):
    """The Go1's link, seen from the simulated robot: its tap sends a copy of every LowCmd it accepted
    (614 bytes) and every LowState it sent (807 bytes) to `port` on 127.0.0.1.

    Each copy is timed by the kernel as it reaches the socket (SO_TIMESTAMPNS), not when this thread gets to
    it: the thread shares this process's GIL with the operator's executor and runs at normal priority beside
    the rehearsal's real-time processes, so its own clock read can come milliseconds late (`stamp_lag_max_s`
    says by how much), and latencies here are judged in milliseconds.
    """

    def __init__(self, port: int):
        import socket

        super().__init__()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # a stalled reader loses nothing
        self._sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.settimeout(0.05)
        self.stamp_lag_max_s = 0.0  # the longest this thread took to see a copy after the kernel had it
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="tap_recorder", daemon=True)
        self._thread.start()

    def _decode_cmd(self, raw: bytes) -> MotorCommands:
        return go1_wire.decode_lowcmd(raw).motors

    def _decode_state(self, raw: object) -> LowStateView:
        return go1_wire.decode_lowstate(raw)

    def _receive(self):
        import socket

        ancillary = socket.CMSG_SPACE(16)  # struct timespec
        while not self._stop.is_set():
            try:
                data, cmsgs, _, _ = self._sock.recvmsg(2048, ancillary)
            except OSError:  # timeout
                continue
            seen_at = time.monotonic()
            t = kernel_arrival_monotonic(cmsgs, seen_at)
            with self.lock:
                self.stamp_lag_max_s = max(self.stamp_lag_max_s, seen_at - t)
                if len(data) == go1_wire.LOWCMD_LENGTH:
                    self._raw_cmds.append((t, data))
                elif len(data) == go1_wire.LOWSTATE_LENGTH:
                    self._raw_states.append((t, data))

    def clear(self):
        super().clear()
        with self.lock:
            self.stamp_lag_max_s = 0.0

    def close(self):
        self._stop.set()
        self._thread.join(timeout=1.0)
        self._sock.close()


# --- the rehearsal processes ----------------------------------------------------------------


class BringUpError(RuntimeError):
    """The rehearsal did not reach the state a scenario starts from."""


@dataclasses.dataclass
class RehearsalConfig:
    domain: int
    workdir: Path
    policy_path: Path  # the policy the node runs; its contract is what the monitor reads
    standin_script: Path | None = None  # if set, this development stand-in replaces the policy node (no walking)
    interface: str = "lo"
    monitor_params: dict = dataclasses.field(default_factory=dict)
    policy_params: dict = dataclasses.field(default_factory=dict)
    rt_priority: int = 0  # SCHED_FIFO priority of the rehearsal's processes (0 = normal scheduling)
    robot: str = "go2"  # go1: the UDP link, the ports of `go1_ports(domain)`, the simulator's tap observed


class Rehearsal:
    """go2_sim + policy_node + safety_monitor as a ProcessGroup (the nodes' built-in defaults, the link and
    the policy set; logs and parameters files in the workdir), driven by the operator in this process."""

    def __init__(self, cfg: RehearsalConfig, ros: Operator, recorder: WireRecorder):
        self.cfg, self.ros, self.rec = cfg, ros, recorder
        self.group = ProcessGroup(cfg.workdir, cfg.domain, cwd=cfg.workdir, realtime_priority=cfg.rt_priority)
        self.fault_log = cfg.workdir / "fault_log.jsonl"

    def start(self):
        self.started_at = time.monotonic()
        self.monitor_cpu = None
        c = self.cfg
        self.fault_log.unlink(missing_ok=True)
        policy = str(Path(c.policy_path).resolve())
        link = link_params(c.robot, c.domain)
        self.group.start_node(sim_node(c.robot), link[sim_node(c.robot)])
        self.group.start_node("safety_monitor", {**link["safety_monitor"], "fault_log_path": str(self.fault_log),
                                                 "policy_path": policy, **c.monitor_params})
        if c.standin_script is not None:
            self.group.start(POLICY, [sys.executable, str(c.standin_script), "--domain", str(c.domain)])
        else:
            self.group.start_node(POLICY, {**link[POLICY], "policy_path": policy, **c.policy_params})

    def check_alive(self):
        self.group.check_alive(node_names(self.cfg.robot))

    def stop(self):
        self.group.stop_all(grace_s=5.0, term_s=None)  # SIGINT, then SIGKILL after 5 s

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    # --- waiting ---------------------------------------------------------------------------
    def wait_for(self, what: str, cond: Callable[[], bool], timeout_s: float, bringing_up: bool = False):
        deadline = time.monotonic() + timeout_s
        while not cond():
            self.check_alive()
            if bringing_up and self.ros.safety_state.get("state") == "DAMP":
                raise BringUpError(f"the monitor latched while waiting for {what}: {self.ros.safety_state}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout_s} s waiting for {what} "
                                   f"(policy state {self.ros.policy_state!r}, safety {self.ros.safety_state!r}; "
                                   f"logs in {self.cfg.workdir})")
            time.sleep(0.02)

    def bring_up(self, walk_vx: float | None):
        """Lowstate flowing, policy up, stand up, READY; optionally walk at walk_vx for a while.

        Raises BringUpError when the rehearsal cannot get there (e.g. the monitor, rightly, latched
        on a 100 ms stall of an overloaded machine): the scenario never started, it may be retried.
        """
        try:
            self._bring_up(walk_vx)
        except (TimeoutError, RuntimeError) as e:
            raise BringUpError(str(e)) from e
        if self.ros.safety_state.get("state") != "OK":
            raise BringUpError(f"the monitor latched during bring-up: {self.ros.safety_state}")

    def _bring_up(self, walk_vx: float | None):
        up = {"bringing_up": True}
        self.wait_for("rt/lowstate", lambda: self.rec.last_state_time() is not None, 30.0, **up)
        self.wait_for("the policy node", lambda: self.ros.policy_state in ("PASSIVE", "STAND_UP", "READY"), 30.0,
                      **up)
        self.wait_for("the safety monitor", lambda: self.ros.safety_state.get("state") == "OK", 30.0, **up)
        if self.cfg.standin_script is None:
            # Refused until the policy node has fresh rt/lowstate (it may have just joined): retry.
            deadline = time.monotonic() + 15.0
            while not (answer := self.ros.call(interfaces.SRV_STAND_UP))[0]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"stand_up refused: {answer[1]}")
                time.sleep(0.25)
        self.wait_for("READY", lambda: self.ros.policy_state == "READY", 15.0, **up)
        # An operator's e-stop/reset client is long-lived; a client made just before its first call
        # still finishes discovery meanwhile (that first request arrived ~80 ms late in tests).
        self.ros.wait_service(interfaces.SRV_ESTOP)
        self.ros.wait_service(interfaces.SRV_SAFETY_RESET)
        time.sleep(0.5)
        if walk_vx is not None and self.cfg.standin_script is None:
            self.ros.set_cmd_vel(walk_vx)
            ok, msg = self.ros.call(interfaces.SRV_WALK)
            if not ok:
                raise RuntimeError(f"walk refused: {msg}")
            self.wait_for("WALK", lambda: self.ros.policy_state == "WALK", 5.0, **up)
            time.sleep(2.0)

    def pid(self, name: str) -> int:
        return self.group[name].pid


# --- scenarios ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Injection:
    """What an injector did: the fault time (monotonic; None = found from the wire) and its wall time."""

    t_fault: float | None
    note: str = ""
    fault_from_wire: str = ""  # "rogue" | "tilt" | "lowstate_stop": locate the fault instant on the wire
    t_inject: float = 0.0


@dataclasses.dataclass
class Scenario:
    name: str
    description: str
    inject: Callable[[Rehearsal], Injection]
    # Causes that show the monitor (or the policy node, "policy_state_damp") caught *this* fault first.
    expected_causes: tuple[str, ...] = ()
    nan_policy: bool = False
    observe_s: float = 3.0  # at least this long after the fault; then until lying still (≤ MAX_SETTLE_S)


def _now_injection(note="", **kw) -> Injection:
    t = time.monotonic()
    return Injection(t, note, t_inject=t, **kw)


def inject_kill9(r: Rehearsal) -> Injection:
    inj = _now_injection("SIGKILL to the policy node (the last command on the wire precedes it by up to a period)")
    os.kill(r.pid(POLICY), signal.SIGKILL)
    return inj


def inject_sigstop(r: Rehearsal) -> Injection:
    inj = _now_injection("SIGSTOP to the policy node (hung)")
    os.kill(r.pid(POLICY), signal.SIGSTOP)
    return inj


def inject_lowstate_stop(r: Rehearsal) -> Injection:
    t = time.monotonic()
    ok, msg = r.ros.call(interfaces.SIM_LOWSTATE_ENABLED, data=False)
    if not ok:
        raise RuntimeError(f"the simulator refused to stop rt/lowstate: {msg}")
    return Injection(None, "go2_sim stops rt/lowstate (sim/lowstate_enabled false)", "lowstate_stop", t_inject=t)


def inject_nan_policy(r: Rehearsal) -> Injection:
    if r.ros.policy_state == "WALK":
        inj = _now_injection(f"cmd_vel vx 1.0 > trigger {NAN_VX_TRIGGER}: the policy's ONNX outputs NaN")
        r.ros.set_cmd_vel(1.0)
        return inj
    # Standing (READY): the network only runs in WALK, so the fault starts with the walk request.
    r.ros.set_cmd_vel(1.0)
    time.sleep(0.1)
    inj = _now_injection(f"walk with cmd_vel vx 1.0 > trigger {NAN_VX_TRIGGER}: the policy's first inference "
                         "outputs NaN")
    r.ros.call(interfaces.SRV_WALK)
    return inj


def _rogue(r: Rehearsal, target: str, note: str) -> Injection:
    t = time.monotonic()
    argv = [sys.executable, "-m", "surrogait_rehearsal.harness.fault_injection", "rogue", "--domain", str(r.cfg.domain),
            "--interface", r.cfg.interface, "--robot", r.cfg.robot, "--joint", ROGUE_JOINT, "--target", target]
    if r.cfg.robot == "go1":  # the rogue sends where the policy node does: the monitor's gateway
        argv += ["--udp-port", str(go1_ports(r.cfg.domain).policy)]
    # Normal scheduling: a real-time process importing its modules for a second would starve the
    # policy node (same priority, FIFO) and show up as a silent policy before the rogue ever writes.
    rogue = r.group.start("rogue", argv, boost=False)
    if r.cfg.robot == "go1":
        # The gateway keeps the rogue's commands from the robot: the fault begins when the rogue sends.
        r.wait_for("the rogue's first command", lambda: FIRST_ROGUE_LINE in rogue.log, 15.0)
        time.sleep(0.3)
        os.kill(r.pid("rogue"), signal.SIGKILL)
        sent = float(rogue.log.split(FIRST_ROGUE_LINE, 1)[1].split()[0])
        return Injection(sent, note + " (to the gateway; the time its first command was sent)", t_inject=t)
    r.wait_for("the rogue's first command", lambda: any(_is_rogue(c) for c in r.rec.recent_commands(20)), 15.0)
    time.sleep(0.3)
    os.kill(r.pid("rogue"), signal.SIGKILL)
    return Injection(None, note, "rogue", t_inject=t)


def inject_rogue_limit(r: Rehearsal) -> Injection:
    limit = load_robot_spec(r.cfg.robot).joint_pos_upper[ROGUE_INDEX]
    return _rogue(r, str(ROGUE_TARGET), f"rogue process writes stiff LowCmds with {ROGUE_JOINT} -> {ROGUE_TARGET} "
                  f"rad (limit {limit:.3f}) at 50 Hz for 0.3 s, then SIGKILL")


def inject_rogue_nan(r: Rehearsal) -> Injection:
    return _rogue(r, "nan", f"rogue process writes stiff LowCmds with {ROGUE_JOINT} -> NaN at 50 Hz for 0.3 s, "
                  "then SIGKILL")


def inject_push(r: Rehearsal) -> Injection:
    t = time.monotonic()
    # A roll-rate kick (as from a blow at the shoulder): 20 rad/s tilts a standing Go2 ≈ 0.44 rad,
    # 28 rad/s ≈ 0.84 rad; a sideways 1.6 m/s push rolls it right over.
    r.ros.push(angular=(28.0, 0.0, 0.0))
    return Injection(None, "sim/push: roll rate 28 rad/s added to the base", "tilt", t_inject=t)


def inject_estop_topic(r: Rehearsal) -> Injection:
    inj = _now_injection("std_msgs/Bool true on safety/estop")
    r.ros.estop_topic()
    return inj


def inject_estop_service(r: Rehearsal) -> Injection:
    r.ros.wait_service(interfaces.SRV_ESTOP)
    inj = _now_injection("safety/estop Trigger service")
    r.ros.call(interfaces.SRV_ESTOP)
    return inj


def inject_estop_gamepad(r: Rehearsal) -> Injection:
    inj = _now_injection("gamepad L2+B via sim/gamepad (held 0.5 s)")
    r.ros.gamepad(go2_wire.ESTOP_KEYS)
    threading.Timer(0.5, lambda: r.ros.gamepad(frozenset())).start()
    return inj


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("kill9_policy", "kill -9 of the policy node", inject_kill9, ("policy_silent",)),
    Scenario("sigstop_policy", "policy node hung (SIGSTOP)", inject_sigstop, ("policy_silent",)),
    Scenario("lowstate_stopped", "rt/lowstate stream stopped", inject_lowstate_stop, ("lowstate_stale",)),
    Scenario("nan_policy_output", "NaN in the policy output (ONNX triggered by vx > 0.75)", inject_nan_policy,
             ("policy_state_damp",), nan_policy=True),
    Scenario("nan_on_wire", "a rogue writer puts a NaN target on the wire", inject_rogue_nan,
             ("command_not_finite",)),
    Scenario("command_beyond_limit", "a rogue writer commands a joint beyond its limit", inject_rogue_limit,
             ("command_target_limit", "command_target_jump", "commanded_torque")),
    # The kick shows first as the held PD command asking > 1.5× a motor's torque of the displaced
    # joints, or as the tilt; the tilt must be logged either way.
    Scenario("push_tilt", "a push tilts the robot past the roll limit", inject_push,
             ("base_tilt", "commanded_torque", "joint_velocity", "estimated_torque")),
    Scenario("estop_topic", "e-stop by topic", inject_estop_topic, ("estop_topic",)),
    Scenario("estop_service", "e-stop by service", inject_estop_service, ("estop_service",)),
    # Both the monitor and the policy node watch the chord in LowState: either may log it first.
    Scenario("estop_gamepad", "e-stop by the gamepad chord L2+B", inject_estop_gamepad,
             ("estop_gamepad", "policy_state_damp")),
]}
# The Go1's subset (issue 15): what the monitor must catch through its gateway on the UDP link.
GO1_SCENARIOS = ("kill9_policy", "sigstop_policy", "nan_policy_output", "command_beyond_limit", "push_tilt",
                 "estop_service", "estop_gamepad", "lowstate_stopped")


# --- judging -------------------------------------------------------------------------------------

ROGUE_INDEX = load_robot_spec("go2").joint_names.index(ROGUE_JOINT)  # (the Go1's motor order is the same)


def _is_rogue(cmd: MotorCommands) -> bool:
    q = cmd.q[ROGUE_INDEX]
    return bool(driven(cmd)[ROGUE_INDEX] and (np.isnan(q) or q == ROGUE_TARGET))


def is_still(states: list[tuple[float, LowStateView]], ros: Operator) -> tuple[bool, float, float]:
    """Lying still over the last 0.5 s of robot state: (still, max |dq|, max |gyro|)."""
    if not states:
        return False, float("nan"), float("nan")
    tail = [v for t, v in states if t >= states[-1][0] - 0.5]
    max_dq = float(max(np.max(np.abs(v.joint_vel)) for v in tail))
    max_gyro = float(max(np.max(np.abs(v.gyro_b)) for v in tail))
    height = ros.base_height_gt
    still = max_dq < STILL_JOINT_VEL and max_gyro < STILL_GYRO and (height is None or height < LYING_HEIGHT_M)
    return still, max_dq, max_gyro


def wait_until_still(recorder: WireRecorder | TapRecorder, ros: Operator, deadline_monotonic: float):
    while time.monotonic() < deadline_monotonic:
        if is_still(recorder.recent_states(300), ros)[0]:
            return
        time.sleep(0.25)


def _state_arrays(v: LowStateView):
    return v.joint_pos, v.joint_vel, v.gyro_b, v.quat_wxyz


def damping_kd_on_wire(robot: str) -> float:
    """The monitor's damping kd as it reaches the motors (the Go1's packet carries kd in 1/16 steps)."""
    kd = default_thresholds(load_robot_spec(robot)).damping_kd
    return go1_wire.fixed_point(kd, go1_wire.KD_SCALE) / go1_wire.KD_SCALE if robot == "go1" else kd


def evaluate(sc: Scenario, inj: Injection, cmds, states, fault_log: Path, t_wall_offset: float,
             ros: Operator, tilt_limit: float, phase: str, robot: str = "go2") -> dict:
    spec = load_robot_spec(robot)
    state_t = np.array([t for t, _ in states])
    decoded = [_state_arrays(v) for _, v in states]
    t_fault, how = inj.t_fault, "injection time"
    if inj.fault_from_wire == "rogue":
        first = next((t for t, c in cmds if t >= inj.t_inject and _is_rogue(c)), None)
        t_fault, how = first, "first rogue LowCmd on the wire"
    elif inj.fault_from_wire == "lowstate_stop":
        before = state_t[state_t >= inj.t_inject - 0.5]
        gaps = np.flatnonzero(np.diff(before) > 0.05)
        t_fault = float(before[gaps[0]]) if len(gaps) else (float(before[-1]) if len(before) else None)
        how = "last rt/lowstate before the stream stopped"
    elif inj.fault_from_wire == "tilt":
        t_fault, how = None, "first rt/lowstate with |roll| or |pitch| past the limit"
        for t, (_, _, _, quat) in zip(state_t, decoded, strict=True):
            if t >= inj.t_inject and max(abs(a) for a in roll_pitch(quat)) > tilt_limit:
                t_fault = float(t)
                break
    result = {"scenario": sc.name, "description": sc.description, "phase": phase, "injection": inj.note,
              "fault_time_from": how}
    if t_fault is None:
        result.update(ok=False, error="the fault never showed on the wire")
        return result

    after = [(t, c) for t, c in cmds if t >= t_fault]
    first_damp_cmd = next(((t, c) for t, c in after if c.is_damping), None)
    first_damp = None if first_damp_cmd is None else first_damp_cmd[0]
    # The monitor damps with its own kd (the policy node with its own): tells who was first on the wire.
    first_by_monitor = first_damp_cmd is not None and np.allclose(first_damp_cmd[1].kd, damping_kd_on_wire(robot))
    latency = None if first_damp is None else first_damp - t_fault
    # Limits after the fault, with the joint state the drivers had when each command arrived.
    violations, max_tau_ratio, stiff_after_damping, rogue_count = [], 0.0, 0, 0
    before_damping_over_torque = 0  # stiff commands sent in the reaction window, driver torque > limit
    for t, c in after:
        if _is_rogue(c):
            rogue_count += 1
            continue
        k = int(np.searchsorted(state_t, t, side="right")) - 1
        q, dq = (decoded[k][0], decoded[k][1]) if k >= 0 else (spec.default_joint_pos, np.zeros(12))
        on = driven(c)
        servo = c.mode == go2_wire.MODE_SERVO
        finite = np.all(np.isfinite(np.concatenate([c.q[servo], c.dq[servo], c.kp, c.kd, c.tau[servo]])))
        tau = commanded_torque(c, q, dq)
        ratio = float(np.max(np.abs(tau) / spec.joint_torque_limit)) if finite else float("inf")
        max_tau_ratio = max(max_tau_ratio, ratio)
        outside = on & ((c.q < spec.joint_pos_lower) | (c.q > spec.joint_pos_upper))
        reacting = first_damp is None or t < first_damp
        if finite and not np.any(outside) and ratio > 1.0 and reacting:
            # A PD command sent before the fault was acted on, asking kp·(q*−q) of joints the fault
            # (a kick) displaced: the driver clips it. Counted, but not a command the stack chose after
            # reacting; everything from the first damping command on must be within every limit.
            before_damping_over_torque += 1
        elif not finite or np.any(outside) or ratio > 1.0:
            violations.append({"t_after_fault_s": round(t - t_fault, 4), "finite": bool(finite),
                               "target_outside": [spec.joint_names[i] for i in np.flatnonzero(outside)],
                               "torque_ratio": round(ratio, 3), "damping": c.is_damping})
        if first_damp is not None and t > first_damp and on.any():
            stiff_after_damping += 1
    # Lying still at the end: the last 0.5 s of robot state.
    lying_still, max_dq, max_gyro = is_still(states, ros)
    height = ros.base_height_gt
    # The fault log.
    log = read_fault_log(fault_log) if fault_log.exists() else []
    t_fault_wall = t_fault + t_wall_offset
    logged = [e for e in log if e["event"] in ("fault", "policy_damp", "policy_damp_cause")
              and e["time"] >= t_fault_wall - 0.5]
    first_fault = next((e for e in log if e["event"] == "fault" and e["time"] >= t_fault_wall - 0.5), None)
    # The threshold the monitor applied (a silent stream's depends on the stream's rate), as it logged it.
    silence = None
    if first_fault is not None and first_fault["cause"] in SILENCE_CAUSES:
        silence = first_fault.get("values", {}).get("threshold_s") or SILENCE_CAUSES[first_fault["cause"]]
    # A silence starts with the last sample before it (a killed policy's last command precedes the kill).
    silence_start = t_fault
    if first_fault is not None and first_fault["cause"] == "policy_silent":
        silence_start = max((t for t, _ in cmds if t <= t_fault), default=t_fault)
    monitor_wrote = any(e["event"] == "monitor_damping_on" and e["time"] >= t_fault_wall - 0.5 for e in log)
    result.update(
        latency_s=None if latency is None else round(latency, 4),
        monitor_latched_after_s=None if first_fault is None else round(first_fault["time"] - t_fault_wall, 4),
        first_cause=None if first_fault is None else first_fault["cause"],
        # A silence is a fault only once it has lasted the rule's threshold: the target then applies
        # to the reaction after that threshold (the latency from the fault instant is reported too).
        silence_threshold_s=silence,
        reaction_after_threshold_s=None if first_damp is None or silence is None
        else round(first_damp - silence_start - silence, 4),
        # From the fault itself, silences included (issue 12): a silence must be noticed within the target too.
        latency_ok=latency is not None and latency <= LATENCY_TARGET_S,
        who_damped="monitor" if first_by_monitor else ("policy node, then the monitor too" if monitor_wrote
                                                         else "policy node"),
        commands_after_fault=len(after) - rogue_count,
        rogue_commands=rogue_count,
        limit_violations=len(violations),
        pd_over_torque_before_damping=before_damping_over_torque,
        violation_examples=violations[:3],
        max_commanded_torque_ratio=round(max_tau_ratio, 3),
        stiff_commands_after_first_damping=stiff_after_damping,
        end_max_joint_vel=round(max_dq, 3),
        end_max_gyro=round(max_gyro, 3),
        end_base_height_m=None if height is None else round(height, 3),
        lying_still=lying_still,
        observed_after_fault_s=round(state_t[-1] - t_fault, 2) if len(state_t) else None,
        logged_causes=sorted({e["cause"] for e in logged if e["event"] != "policy_damp_cause"}),
        policy_damp_cause=next((e["detail"] for e in logged if e["event"] == "policy_damp_cause"), None),
        logged=bool(logged),
        final_safety_state=ros.safety_state.get("state"),
    )
    # Caught as *this* fault: the first cause logged after it is one the scenario expects (not, say, a
    # stall of an overloaded machine that happened to come first).
    first_logged = next((e["cause"] for e in logged if e["event"] in ("fault", "policy_damp")), None)
    result["first_logged_cause"] = first_logged
    # A tilt and a gamepad e-stop may be logged first as something else, but the monitor must log them too.
    must_log = {"push_tilt": "base_tilt", "estop_gamepad": "estop_gamepad"}.get(sc.name)
    result["cause_ok"] = first_logged in sc.expected_causes and (must_log is None
                                                                 or must_log in result["logged_causes"])
    damped_before = [t for t, c in cmds if inj.t_inject <= t < t_fault and c.is_damping]
    result["damping_began_before_fault_time_s"] = round(t_fault - damped_before[0], 4) if damped_before else None
    result["ok"] = bool(result["latency_ok"] and lying_still and not violations and logged and result["cause_ok"])
    return result


def run_scenario(sc: Scenario, domain: int, workdir: Path, ros: Operator, recorder: WireRecorder | TapRecorder,
                 policy_path: Path, standin_script: Path | None = None, walk_vx: float | None = 0.5,
                 try_reset: bool = False, rt_priority: int = 0, robot: str = "go2") -> dict:
    workdir.mkdir(parents=True, exist_ok=True)
    if sc.nan_policy and standin_script is None:
        policy_path = make_nan_policy(policy_path, workdir / "policy_nan.onnx", NAN_VX_TRIGGER)
    ros.reset()
    recorder.clear()
    cfg = RehearsalConfig(domain, workdir, policy_path, standin_script, rt_priority=rt_priority, robot=robot)
    t_wall_offset = time.time() - time.monotonic()
    tilt_limit = default_thresholds(load_robot_spec(robot)).max_roll_rad
    # The recorder keeps every sample: a cyclic GC pass over thousands of them stalls this process
    # for 50-100 ms (seen as fake gaps on the wire), so collect between scenarios, not during one.
    gc.collect()
    gc.disable()
    try:
        with Rehearsal(cfg, ros, recorder) as r:
            inj, reset, cmds, states = _run_in_rehearsal(sc, r, ros, recorder, walk_vx, try_reset)
            cpu = r.monitor_cpu
    finally:
        gc.enable()
    phase = "standing (READY)" if walk_vx is None or standin_script is not None else f"walking (WALK, cmd vx {walk_vx})"
    result = evaluate(sc, inj, cmds, states, cfg.workdir / "fault_log.jsonl", t_wall_offset, ros, tilt_limit,
                      phase, robot)
    if recorder.stamp_lag_max_s is not None:  # the observer's own delay, kept out of the latency above
        result["observer_stamp_lag_max_ms"] = round(recorder.stamp_lag_max_s * 1e3, 1)
    recorder.clear()
    result["workdir"] = str(workdir)
    result["monitor_cpu_share"] = cpu
    if reset is not None:
        result["reset"] = reset
    return result


def _run_in_rehearsal(sc: Scenario, r: Rehearsal, ros: Operator, recorder: WireRecorder, walk_vx: float | None,
                      try_reset: bool):
    r.bring_up(walk_vx)
    recorder.clear()  # judge only what follows the bring-up
    cpu0 = cpu_seconds(r.pid("safety_monitor")), time.monotonic()
    time.sleep(0.3)
    inj = sc.inject(r)
    early_reset = None
    if try_reset:  # while the robot is still sinking down: must be refused
        time.sleep(max(0.0, inj.t_inject + 0.15 - time.monotonic()))
        t_call = time.monotonic()
        ok, msg = ros.call(interfaces.SRV_SAFETY_RESET)
        early_reset = {"accepted": ok, "message": msg, "called_after_fault_s": round(t_call - inj.t_inject, 3),
                       "answered_after_fault_s": round(time.monotonic() - inj.t_inject, 3)}
    if sc.name == "lowstate_stopped":
        time.sleep(sc.observe_s - 0.8)
        r.ros.call(interfaces.SIM_LOWSTATE_ENABLED, data=True)  # to see the robot lie still
        time.sleep(0.8)
    else:
        time.sleep(sc.observe_s)
    wait_until_still(recorder, ros, inj.t_inject + MAX_SETTLE_S)
    reset = None
    if try_reset:  # lying still now, the policy node damping: must be accepted
        ok, msg = ros.call(interfaces.SRV_SAFETY_RESET)
        reset = {"early": early_reset, "final": {"accepted": ok, "message": msg},
                 "safety_state_after": dict(ros.safety_state)}
    cmds, states = recorder.snapshot()
    cpu1 = cpu_seconds(r.pid("safety_monitor")), time.monotonic()
    r.monitor_cpu = None if None in (cpu0[0], cpu1[0]) else round((cpu1[0] - cpu0[0]) / (cpu1[1] - cpu0[1]), 3)
    return inj, reset, cmds, states


# --- no fault: how close normal operation comes to each threshold --------------------------------


def margins(cmds, states, control_period_s: float = PolicyContract.control_dt_s, robot: str = "go2") -> dict:
    """The largest value each rule saw, as a fraction of the monitor's default threshold (1.0 = fires)."""
    spec = load_robot_spec(robot)
    th = dataclasses.replace(default_thresholds(spec), control_period_s=control_period_s)
    state_t = np.array([t for t, _ in states])
    decoded = [v for _, v in states]
    out = {"joint_vel": 0.0, "tau_est": 0.0, "tilt": 0.0, "commanded_torque": 0.0, "target_jump": 0.0,
           "target_outside_range_rad": 0.0, "lowcmd_gap_s": 0.0, "lowstate_gap_s": 0.0}
    for v in decoded:
        out["joint_vel"] = max(out["joint_vel"], float(np.max(np.abs(v.joint_vel) / (th.joint_vel_fraction
                                                                                      * th.joint_vel_limit))))
        out["tau_est"] = max(out["tau_est"], float(np.max(np.abs(v.joint_tau_est) / (th.tau_est_fraction
                                                                                     * th.joint_torque_limit))))
        roll, pitch = roll_pitch(v.quat_wxyz)
        out["tilt"] = max(out["tilt"], abs(roll) / th.max_roll_rad, abs(pitch) / th.max_pitch_rad)
    prev = None
    for t, c in cmds:
        k = int(np.searchsorted(state_t, t, side="right")) - 1
        if k >= 0 and np.any(driven(c)):
            tau = commanded_torque(c, decoded[k].joint_pos, decoded[k].joint_vel)
            out["commanded_torque"] = max(out["commanded_torque"], float(np.max(
                np.abs(tau) / (th.commanded_torque_factor * th.joint_torque_limit))))
            outside = np.maximum(spec.joint_pos_lower - c.q, c.q - spec.joint_pos_upper)
            out["target_outside_range_rad"] = max(out["target_outside_range_rad"], float(np.max(outside)))
        if prev is not None:
            pt, pc = prev
            both = driven(c) & driven(pc)
            if np.any(both):
                allowed = th.target_jump_factor * th.joint_vel_limit * max(t - pt, th.control_period_s)
                out["target_jump"] = max(out["target_jump"], float(np.max(np.abs(c.q - pc.q)[both] / allowed[both])))
            out["lowcmd_gap_s"] = max(out["lowcmd_gap_s"], t - pt)
        prev = (t, c)
    if len(state_t) > 1:
        out["lowstate_gap_s"] = float(np.max(np.diff(state_t)))
    return {k: round(v, 3) for k, v in out.items()}


def run_baseline(domain: int, workdir: Path, ros: Operator, recorder: WireRecorder | TapRecorder, policy_path: Path,
                 segments=((0.5, 4.0), (1.0, 4.0), (0.0, 2.0)), rt_priority: int = 0, robot: str = "go2") -> dict:
    """Stand up and walk with no fault injected: the monitor must stay OK (no false positive)."""
    workdir.mkdir(parents=True, exist_ok=True)
    ros.reset()
    recorder.clear()
    cfg = RehearsalConfig(domain, workdir, policy_path, rt_priority=rt_priority, robot=robot)
    gc.collect()
    gc.disable()
    try:
        with Rehearsal(cfg, ros, recorder) as r:
            r.bring_up(None)  # standing, monitor OK
            ros.set_cmd_vel(segments[0][0])
            ok, msg = ros.call(interfaces.SRV_WALK)
            if not ok:
                raise RuntimeError(f"walk refused: {msg}")
            for vx, seconds in segments:  # whatever the monitor says: this run measures it
                ros.set_cmd_vel(vx)
                time.sleep(seconds)
            cmds, states = recorder.snapshot()
            safety, policy = dict(ros.safety_state), ros.policy_state
    finally:
        gc.enable()
    log = read_fault_log(r.fault_log) if r.fault_log.exists() else []
    faults = [{"cause": e["cause"], "detail": e["detail"]} for e in log if e["event"] == "fault"]
    result = {"scenario": "baseline_no_fault", "description": "stand up, walk 0.5 then 1.0 m/s, stop; no fault",
              "final_safety_state": safety.get("state"), "final_policy_state": policy, "false_faults": faults,
              "max_fraction_of_threshold": margins(cmds, states, robot=robot), "workdir": str(workdir)}
    result["ok"] = safety.get("state") == "OK" and not faults
    recorder.clear()
    return result
