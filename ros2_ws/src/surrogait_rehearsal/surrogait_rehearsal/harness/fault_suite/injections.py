"""The fault suite's scenarios: what each injects into a running rehearsal, and the causes that show it was caught.

An injector acts on a `ScenarioRun` (run.py): it kills or stops a process, asks the simulator to stop its
LowState stream or to push the robot, writes rogue commands on the wire from a process of its own, or presses
an e-stop (topic, service, gamepad chord), and says when the fault happened (or how to find that on the wire).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from surrogait_core import interfaces
from surrogait_core.policy.command_input import COMMAND_SLEW_RATE
from surrogait_core.robot_links import robot_link
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.rules import driven
from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire import MotorCommands
from surrogait_rehearsal.harness.fault_injection import FIRST_ROGUE_LINE
from surrogait_rehearsal.harness.nodes import go1_ports

if TYPE_CHECKING:
    from surrogait_rehearsal.harness.fault_suite.run import ScenarioRun

ROGUE_JOINT, ROGUE_TARGET = "FR_hip", 1.5  # rad; the hip range is ±1.047 rad (Go2), ±0.863 rad (Go1)
ROGUE_INDEX = load_robot_spec("go2").joint_names.index(ROGUE_JOINT)  # (the Go1's motor order is the same)
NAN_VX_TRIGGER = 0.75  # m/s
POLICY = "policy_node"  # the policy's process: the node, or the development stand-in in its place


def is_rogue(cmd: MotorCommands) -> bool:
    """A command the rogue writer sent (its joint at its target, or NaN), not one of the stack's."""
    q = cmd.q[ROGUE_INDEX]
    return bool(driven(cmd)[ROGUE_INDEX] and (np.isnan(q) or q == ROGUE_TARGET))


@dataclasses.dataclass
class Injection:
    """What an injector did: the fault time (monotonic; None = found from the wire) and its wall time."""

    t_fault: float | None
    note: str = ""
    fault_from_wire: str = ""  # "rogue" | "tilt" | "lowstate_stop": locate the fault instant on the wire
    t_inject: float = 0.0


# How long the robot walks before a fault is injected while walking: the benches keep 2 s; the trot is established
# within its first 0.5 s cycle, and the tests walk 1 s (`bench/safety.py --walk-s 1`).
WALK_BEFORE_FAULT_S = 2.0


@dataclasses.dataclass
class Scenario:
    name: str
    description: str
    inject: Callable[[ScenarioRun], Injection]
    # Causes that show the monitor (or the policy node, "policy_state_damp") caught *this* fault first.
    expected_causes: tuple[str, ...] = ()
    nan_policy: bool = False
    observe_s: float = 3.0  # at least this long after the fault; then until lying still (≤ MAX_SETTLE_S)


def _now_injection(note="", **kw) -> Injection:
    t = time.monotonic()
    return Injection(t, note, t_inject=t, **kw)


def inject_kill9(r: ScenarioRun) -> Injection:
    inj = _now_injection("SIGKILL to the policy node (the last command on the wire precedes it by up to a period)")
    os.kill(r.pid(POLICY), signal.SIGKILL)
    return inj


def inject_sigstop(r: ScenarioRun) -> Injection:
    inj = _now_injection("SIGSTOP to the policy node (hung)")
    os.kill(r.pid(POLICY), signal.SIGSTOP)
    return inj


def inject_lowstate_stop(r: ScenarioRun) -> Injection:
    t = time.monotonic()
    ok, msg = r.ros.call(interfaces.SIM_LOWSTATE_ENABLED, data=False)
    if not ok:
        raise RuntimeError(f"the simulator refused to stop rt/lowstate: {msg}")
    return Injection(None, "go2_sim stops rt/lowstate (sim/lowstate_enabled false)", "lowstate_stop", t_inject=t)


def inject_nan_policy(r: ScenarioRun) -> Injection:
    # The policy node slews the command it follows (surrogait_core.policy.command_input), from the walking command
    # (or, entering WALK, from a standstill), so its network sees the trigger crossed only (trigger - followed vx) /
    # slew rate after the request: that is when the output turns NaN and the fault begins (within one control
    # period), not when the operator asks for 1.0 m/s.
    walking = r.ros.policy_state == "WALK"
    followed_vx = r.ros.command[0] if walking else 0.0
    delay_s = max(0.0, NAN_VX_TRIGGER - followed_vx) / COMMAND_SLEW_RATE[0]
    note = (f"cmd_vel vx {followed_vx} -> 1.0: the followed command crosses the trigger {NAN_VX_TRIGGER} m/s "
            f"{delay_s:.2f} s later and the ONNX outputs NaN")
    if walking:
        t = time.monotonic()
        r.ros.set_cmd_vel(1.0)
        return Injection(t + delay_s, note, t_inject=t)
    # Standing (READY): the network only runs in WALK, so the fault starts with the walk request.
    r.ros.set_cmd_vel(1.0)
    time.sleep(0.1)
    t = time.monotonic()
    r.ros.call(interfaces.SRV_WALK)
    return Injection(t + delay_s, f"walk, then {note}", t_inject=t)


def _rogue(r: ScenarioRun, target: str, note: str) -> Injection:
    t = time.monotonic()
    argv = [sys.executable, "-m", "surrogait_rehearsal.harness.fault_injection", "rogue", "--domain", str(r.cfg.domain),
            "--interface", "lo", "--robot", r.cfg.robot, "--joint", ROGUE_JOINT, "--target", target]
    gateway = robot_link(r.cfg.robot).monitor_is_gateway
    if gateway:  # the rogue sends where the policy node does: the monitor's gateway
        argv += ["--udp-port", str(go1_ports(r.cfg.domain).policy)]
    # Normal scheduling: a real-time process importing its modules for a second would starve the
    # policy node (same priority, FIFO) and show up as a silent policy before the rogue ever writes.
    rogue = r.group.start("rogue", argv, boost=False)
    if gateway:
        # The gateway keeps the rogue's commands from the robot: the fault begins when the rogue sends.
        r.wait_for("the rogue's first command", lambda: FIRST_ROGUE_LINE in rogue.log, 15.0)
        time.sleep(0.3)
        os.kill(r.pid("rogue"), signal.SIGKILL)
        sent = float(rogue.log.split(FIRST_ROGUE_LINE, 1)[1].split()[0])
        return Injection(sent, note + " (to the gateway; the time its first command was sent)", t_inject=t)
    r.wait_for("the rogue's first command", lambda: any(is_rogue(c) for c in r.rec.recent_commands(20)), 15.0)
    time.sleep(0.3)
    os.kill(r.pid("rogue"), signal.SIGKILL)
    return Injection(None, note, "rogue", t_inject=t)


def inject_rogue_limit(r: ScenarioRun) -> Injection:
    limit = load_robot_spec(r.cfg.robot).joint_pos_upper[ROGUE_INDEX]
    return _rogue(r, str(ROGUE_TARGET), f"rogue process writes stiff LowCmds with {ROGUE_JOINT} -> {ROGUE_TARGET} "
                  f"rad (limit {limit:.3f}) at 50 Hz for 0.3 s, then SIGKILL")


def inject_rogue_nan(r: ScenarioRun) -> Injection:
    return _rogue(r, "nan", f"rogue process writes stiff LowCmds with {ROGUE_JOINT} -> NaN at 50 Hz for 0.3 s, "
                  "then SIGKILL")


def inject_push(r: ScenarioRun) -> Injection:
    t = time.monotonic()
    # A roll-rate kick (as from a blow at the shoulder): 20 rad/s tilts a standing Go2 ≈ 0.44 rad,
    # 28 rad/s ≈ 0.84 rad; a sideways 1.6 m/s push rolls it right over.
    r.ros.push(angular=(28.0, 0.0, 0.0))
    return Injection(None, "sim/push: roll rate 28 rad/s added to the base", "tilt", t_inject=t)


def inject_estop_topic(r: ScenarioRun) -> Injection:
    inj = _now_injection("std_msgs/Bool true on safety/estop")
    r.ros.estop_topic()
    return inj


def inject_estop_service(r: ScenarioRun) -> Injection:
    r.ros.wait_service(interfaces.SRV_ESTOP)
    inj = _now_injection("safety/estop Trigger service")
    r.ros.call(interfaces.SRV_ESTOP)
    return inj


def inject_estop_gamepad(r: ScenarioRun) -> Injection:
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
ROBOT_SCENARIOS = {"go2": tuple(SCENARIOS), "go1": GO1_SCENARIOS}  # each robot's suite
