"""The safety monitor's core: which rules apply when, the DAMP latch, who damps, and reset.

ROS-free and clock-free: every input carries the monotonic time it was observed at, and
`check(now)` is called at the monitor's rate (≥ the control rate). The node feeds it what
it sees on the wire (rt/lowstate, rt/lowcmd written by *others*), the estimator's height,
the policy's state and e-stop requests, and acts on what `check` returns: publish the
latched state, write damping LowCmds, log events.

Rule gating (why each rule applies when it does):
- always: NaN/inf, e-stop, command targets/jumps/torques, joint velocity, base tilt.
- only while motors are driven: stale state, silent command stream, estimated torque — a robot
  lying passive is not endangered by a pause in the state stream (a simulator or a robot starting up).
- only while the robot is meant to stand (policy state READY or WALK and motors driven):
  joint position past the soft range and base too low — a robot lying down or standing up sits
  legitimately near its knee limit and low.
- only while walking: a stalled policy (the stream goes on, its targets stop changing).

The command stream: the policy node re-sends its latest targets at the motor rate (500 Hz) and
changes them once a control period. The monitor learns the stream's period from the wire, so a
silence is noticed a few periods after it starts whatever the rate; a repeated LowCmd (same bytes)
is only timed, since every rule gave its verdict on the first copy.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from surrogait_core.safety import rules
from surrogait_core.safety.input_watch import InputWatch
from surrogait_core.safety.rules import Violation
from surrogait_core.safety.thresholds import SafetyThresholds
from surrogait_core.wire.go2_wire import LowStateView, MotorCommands

STANDING_POLICY_STATES = ("READY", "WALK")
# Causes after which waiting for the policy node to damp only adds delay: it is silent, or it is
# blind (no robot state; its own state timeout equals ours). The monitor damps at once.
CAUSES_DAMPED_AT_ONCE = ("policy_silent", "lowstate_stale")
STREAM_PERIOD_SMOOTHING = 0.05  # weight of each new inter-arrival time in the stream-period estimate


@dataclasses.dataclass(frozen=True)
class SafetyEvent:
    """One fault-log line: what happened, why, the numbers, and what the monitor did."""

    t_mono: float
    # "fault" | "reset" | "reset_refused" | "monitor_damping_on" | "monitor_damping_off" (at reset) | "monitor_stall"
    # | "input" | "input_cleared" (rt/lowstate as an input: input_watch)
    event: str
    cause: str
    detail: str
    values: dict[str, Any]
    action: str


@dataclasses.dataclass
class CheckResult:
    latched: bool
    cause: str  # "" when OK
    write_damping: bool  # the node must write one damping LowCmd now
    state_changed: bool  # publish the safety state
    events: list[SafetyEvent]


@dataclasses.dataclass
class ResetResult:
    accepted: bool
    reason: str
    events: list[SafetyEvent]


class SafetyMonitor:
    def __init__(self, thresholds: SafetyThresholds, allow_lowstate_without_crc: bool = False):
        self.th = thresholds
        self.inputs = InputWatch(thresholds, allow_lowstate_without_crc)  # rt/lowstate itself, as an input
        self.state: LowStateView | None = None
        self.state_t: float | None = None
        self.cmd: MotorCommands | None = None  # latest LowCmd written by others
        self.cmd_t: float | None = None
        self.cmd_changed_t: float | None = None  # when the stiff targets last changed
        self.stream_resumed_t: float | None = None  # when others' stream last came back from a silence
        self.watch_resumed_t: float | None = None  # when the monitor last came back from a stall of its own
        self._stall_events: list[SafetyEvent] = []
        self._looked_t: float | None = None  # the monitor's latest look at the clock (own-stall detection)
        self.stream_period_s: float | None = None  # others' LowCmd stream period, learned from the wire
        self.walk_t: float | None = None  # when the policy state last became WALK
        self.first_stiff_t: float | None = None  # first stiff command ever seen (stale-before-state rule)
        self.ext_damping_t: float | None = None  # latest external damping command
        self.ext_stiff_t: float | None = None  # latest external stiff command
        self.own_damping_t: float | None = None  # latest damping command the monitor wrote
        self.base_height: tuple[float, str, float] | None = None  # (m, source, t)
        self.policy_state: str = ""
        self._pending: list[Violation] = []  # violations seen between checks (commands, e-stops)
        self._persist_since: dict[str, float] = {}
        self.latched = False
        self.cause = ""
        self.latch_t: float | None = None
        self._logged_causes: set[str] = set()
        self.writing = False

    # --- inputs ----------------------------------------------------------------------------

    def on_lowstate(self, state: LowStateView, now: float, received: int | None = None,
                    crc_ok: bool | None = None) -> None:
        """The newest rt/lowstate, arrived at `now`; `received`: samples since the previous one taken (None: not
        counted, the rate is not judged); `crc_ok`: its CRC verdict (None: not checked). A sample that fails its
        CRC is not judged by (unless allowed, simulators only)."""
        if not self.inputs.on_sample(state, now, received, crc_ok):
            return
        self.state, self.state_t = state, now

    def on_lowcmd(self, cmd: MotorCommands, now: float, repeated: bool = False) -> None:
        """A LowCmd written by someone else: command rules run on every new one, none is missed.

        `repeated`: the same message as the previous one (a stream re-sending its targets); it is
        only timed, since the rules already judged its content.
        """
        if self.cmd_t is not None:
            if now - self.cmd_t > self.policy_silent_s():
                # After a silence (a whole host descheduled, say) the writer's first command can repeat the
                # targets it held before, its next policy step one cycle later. The stalled-policy rule times
                # a stream that goes on, so its clock starts again here; the silence was the silent rule's.
                self.stream_resumed_t = now
            dt = min(max(now - self.cmd_t, 0.0), self.th.control_period_s)  # a silence is not a period
            self.stream_period_s = dt if self.stream_period_s is None else \
                self.stream_period_s + STREAM_PERIOD_SMOOTHING * (dt - self.stream_period_s)
        stiff = bool(np.any(rules.driven(cmd)))
        if not repeated:
            violations = rules.check_command_finite(cmd) + rules.check_command_targets(cmd, self.th)
            if self.cmd is not None and self.cmd_t is not None:
                violations += rules.check_command_jump(cmd, self.cmd, now - self.cmd_t, self.th)
            if self.state is not None:
                violations += rules.check_commanded_torque(cmd, self.state.joint_pos, self.state.joint_vel, self.th)
            self._pending += violations
            if stiff and (self.cmd is None or not np.array_equal(cmd.q, self.cmd.q)):
                self.cmd_changed_t = now
        if stiff:
            self.ext_stiff_t = now
            if self.first_stiff_t is None:
                self.first_stiff_t = now
        if cmd.is_damping:
            self.ext_damping_t = now
        self.cmd, self.cmd_t = cmd, now

    def on_own_damping(self, now: float) -> None:
        self.own_damping_t = now

    def on_base_height(self, height_m: float, source: str, now: float) -> None:
        self.base_height = (float(height_m), source, now)

    def on_estimator_values(self, values: dict[str, Any], now: float) -> None:
        """The estimator's output (e.g. odometry pose and twist): NaN/inf there is a fault too."""
        bad = [name for name, x in values.items() if not np.all(np.isfinite(np.asarray(x, dtype=np.float64)))]
        if bad:
            self._pending.append(Violation("estimator_not_finite", f"NaN/inf in the estimator's {', '.join(bad)}",
                                           {"fields": bad}))

    def on_policy_state(self, state: str, now: float | None = None) -> None:
        state = state.strip().upper()
        if state == "WALK" and self.policy_state != "WALK":
            self.walk_t = now if now is not None else self.cmd_t
        self.policy_state = state

    def look(self, now: float) -> None:
        """The monitor reads the clock at `now` to judge: a gap since its previous look longer than
        `monitor_stall_s` was its own stall (even inside one check, as a short sleep stretched by the host)."""
        if self._looked_t is not None and now - self._looked_t > self.th.monitor_stall_s:
            self.on_own_stall(now - self._looked_t, now)
        self._looked_t = now if self._looked_t is None else max(self._looked_t, now)

    def on_own_stall(self, gap_s: float, now: float) -> None:
        """The monitor itself was not running for `gap_s` (descheduled, alone or with the whole host, as a
        hypervisor pauses every vCPU at once) and runs again `now`.

        It cannot have seen a silence while it did not look: the writers, stalled with it or not, get one
        silence (or staleness) threshold from now to show they are alive. A policy that died meanwhile is
        damped that threshold after the monitor is back, the earliest a frozen monitor could act anyway.
        """
        self.watch_resumed_t = now
        self.inputs.on_own_stall(now)
        if not self.wire_stiff():
            return  # nothing driven, nothing timed (a start-up's first checks can be this far apart): no notice
        self._stall_events.append(SafetyEvent(
            now, "monitor_stall", "monitor_stall", f"the monitor did not run for {gap_s * 1e3:.0f} ms (> "
            f"{self.th.monitor_stall_s * 1e3:.0f} ms): the host or this process was descheduled",
            {"gap_s": gap_s, "threshold_s": self.th.monitor_stall_s}, "silence and staleness timed from now"))

    def on_estop(self, source: str, now: float) -> None:
        self._pending.append(Violation(f"estop_{source}", f"e-stop requested by {source}", {"source": source}))

    # --- derived facts ---------------------------------------------------------------------

    def wire_stiff(self) -> bool:
        """Is the latest command on the wire (anyone's, the monitor's own included) a stiff one?"""
        if self.cmd is None or not np.any(rules.driven(self.cmd)):
            return False
        return self.own_damping_t is None or self.cmd_t >= self.own_damping_t

    def command_refused(self) -> bool:
        """Must a gateway keep the latest command from the motors? Latched, or the command rules (or an
        e-stop) found a violation that the next `check` will latch. (The Go1's monitor forwards each
        command itself, so it can refuse one before it reaches the robot; on the Go2's shared wire
        the monitor can only damp after it.)"""
        return self.latched or bool(self._pending)

    def standing(self) -> bool:
        return self.policy_state in STANDING_POLICY_STATES and self.wire_stiff()

    def _latest_wire_t(self) -> float | None:
        times = [t for t in (self.cmd_t, self.own_damping_t) if t is not None]
        return self._watched_since(max(times)) if times else None

    def _watched_since(self, t: float) -> float:
        """`t`, or the monitor's return from its own stall if later: silences are timed while it watched."""
        return t if self.watch_resumed_t is None else max(t, self.watch_resumed_t)

    def policy_silent_s(self) -> float:
        return self.th.policy_silent_s(self.stream_period_s)

    def silence_deadline(self) -> float | None:
        """When the stale-state or silent-policy rule would fire if nothing more arrives (the clock of `now`), or
        None while nothing is driven. The check wakes for it rather than on its next tick: up to a check period
        (5 ms at 200 Hz) sooner inside the 60 ms a silence has to be damped in."""
        if not self.wire_stiff():
            return None
        deadlines = []
        if self.state_t is not None:
            deadlines.append(self._watched_since(self.state_t) + self.th.stale_state_s)
        last_wire_t = self._latest_wire_t()
        if last_wire_t is not None:
            deadlines.append(last_wire_t + self.policy_silent_s())
        return min(deadlines, default=None)

    def silence_suspected(self, now: float) -> bool:
        """Would a stale-state or silent-policy rule fire now? (The node confirms before trusting it.)"""
        stiff = self.wire_stiff()
        stale = stiff and self.state_t is not None and now - self._watched_since(self.state_t) > self.th.stale_state_s
        last_wire_t = self._latest_wire_t()
        silent = stiff and last_wire_t is not None and now - last_wire_t > self.policy_silent_s()
        return stale or silent

    # --- rules -----------------------------------------------------------------------------

    def active_violations(self, now: float) -> list[Violation]:
        """Every rule that is violated right now (pending command/e-stop violations excluded)."""
        out: list[Violation] = []
        stiff = self.wire_stiff()
        # Stale robot state while the motors are driven: it flowed and stopped, or it never came.
        if stiff and self.state_t is not None and now - self._watched_since(self.state_t) > self.th.stale_state_s:
            out.append(Violation("lowstate_stale", f"no rt/lowstate for {(now - self.state_t) * 1e3:.0f} ms "
                                 f"(> {self.th.stale_state_s * 1e3:.0f} ms)",
                                 {"age_s": now - self.state_t, "threshold_s": self.th.stale_state_s}))
        elif self.state_t is None and stiff and self.first_stiff_t is not None \
                and now - self._watched_since(self.first_stiff_t) > self.th.stale_state_s:
            out.append(Violation("lowstate_stale", "stiff commands on the wire but no rt/lowstate ever received",
                                 {"age_s": None, "threshold_s": self.th.stale_state_s}))
        # Silent policy: the motors hold a stiff command and no new command comes.
        last_wire_t = self._latest_wire_t()
        silent_s = self.policy_silent_s()
        if stiff and last_wire_t is not None and now - last_wire_t > silent_s:
            out.append(Violation("policy_silent", f"no rt/lowcmd for {(now - last_wire_t) * 1e3:.0f} ms while the "
                                 f"motors are stiff (> {silent_s * 1e3:.0f} ms)",
                                 {"age_s": now - last_wire_t, "threshold_s": silent_s}))
        # Stalled policy: walking, the stream goes on, but the targets stopped changing.
        elif stiff and self.policy_state == "WALK" and self.cmd_changed_t is not None:
            since = self._watched_since(max(t for t in (self.cmd_changed_t, self.walk_t, self.stream_resumed_t)
                                            if t is not None))
            if now - since > self.th.policy_stalled_s:
                out.append(Violation(
                    "policy_stalled", f"walking, but the LowCmd targets have not changed for {(now - since) * 1e3:.0f} "
                    f"ms (> {self.th.policy_stalled_s * 1e3:.0f} ms): the stream goes on, the policy does not",
                    {"age_s": now - since, "threshold_s": self.th.policy_stalled_s}))
        s = self.state
        if s is not None:
            finite = rules.check_state_finite(s.quat_wxyz, s.gyro_b, s.accel_b, s.joint_pos, s.joint_vel,
                                              s.joint_tau_est)
            out += finite
            out += rules.check_gamepad_estop(s.gamepad.keys)
            if not finite:
                out += rules.check_joint_velocity(s.joint_vel, self.th)
                out += rules.check_attitude(s.quat_wxyz, self.th)
                if stiff:
                    out += self._persistent("estimated_torque", rules.check_estimated_torque(s.joint_tau_est, self.th),
                                            self.th.tau_est_persist_s, now)
                    # The driver keeps computing kp·(q*−q)+… from the held command as the joints move.
                    out += rules.check_commanded_torque(self.cmd, s.joint_pos, s.joint_vel, self.th)
                if self.standing():
                    out += rules.check_joint_position(s.joint_pos, self.th)
        if self.standing() and self.base_height is not None:
            height, source, _ = self.base_height
            out += rules.check_base_height(height, source, self.th)
        out += self.inputs.violations(stiff, self.standing())
        return out

    def _persistent(self, key: str, violations: list[Violation], hold_s: float, now: float) -> list[Violation]:
        if not violations:
            self._persist_since.pop(key, None)
            return []
        since = self._persist_since.setdefault(key, now)
        return violations if now - since >= hold_s else []

    # --- the periodic check ----------------------------------------------------------------

    def check(self, now: float) -> CheckResult:
        violations = self._pending + self.active_violations(now)
        self._pending = []
        events, self._stall_events = self._stall_events, []
        # Inputs raised or cleared: named in the fault log; the faults among them latch below as violations.
        events += [SafetyEvent(now, event, cause, detail, values,
                               "reported" if event == "input_cleared" else self._input_action(cause))
                   for event, cause, detail, values in self.inputs.changes()]
        changed = False
        if violations and not self.latched:
            self.latched, self.cause, self.latch_t = True, violations[0].cause, now
            self._logged_causes = set()
            changed = True
        for v in violations:
            if v.cause in self._logged_causes:
                continue
            self._logged_causes.add(v.cause)
            action = "latch DAMP" if v.cause == self.cause and changed else f"already latched ({self.cause})"
            events.append(SafetyEvent(now, "fault", v.cause, v.detail, v.values, action))
        write = self._decide_damping(now, violations)
        if write and not self.writing:
            self.writing = True
            events.append(SafetyEvent(now, "monitor_damping_on", self.cause, "no damping-only LowCmd stream from "
                                      "the policy node on the wire: the monitor writes damping itself until reset",
                                      self._wire_summary(now), f"write damping kd={self.th.damping_kd:.3f}"))
        return CheckResult(self.latched, self.cause, write, changed, events)

    def _input_action(self, cause: str) -> str:
        if any(v.cause == cause for v in self.inputs.violations(self.wire_stiff(), self.standing())):
            return "fault (see the fault line)"
        return "none: the stack adapts or refuses (docs/robot.md, 'Inputs the stack checks')"

    def _recent(self, t: float | None, now: float) -> bool:
        return t is not None and now - t <= self.th.damping_grace_s

    def _decide_damping(self, now: float, violations: list[Violation]) -> bool:
        if not self.latched:
            return False
        if self.writing:
            # Once the monitor has had to step in it keeps damping until reset: the writer that failed
            # once is not trusted again, and two writers both damping is safe (no flapping either).
            return True
        others_damp = self._recent(self.ext_damping_t, now) and self.ext_damping_t >= self.latch_t
        others_stiff = self._recent(self.ext_stiff_t, now)
        at_once = any(v.cause in CAUSES_DAMPED_AT_ONCE for v in violations)
        grace_over = now - self.latch_t >= self.th.damping_grace_s
        if at_once:
            return True
        # After the grace period: stiff commands still on the wire, or no damping at all.
        if grace_over and (others_stiff or not others_damp):
            return True
        return False

    def _wire_summary(self, now: float) -> dict[str, Any]:
        def age(t):
            return None if t is None else round(now - t, 4)

        return {"ext_damping_age_s": age(self.ext_damping_t), "ext_stiff_age_s": age(self.ext_stiff_t),
                "lowstate_age_s": age(self.state_t)}

    # --- reset -----------------------------------------------------------------------------

    def safe_to_reset(self, now: float) -> tuple[bool, str, dict[str, Any]]:
        """Safe = fresh robot state, lying still (joints and base), motors not driven, no rule violated."""
        s = self.state
        if s is None or self.state_t is None or now - self.state_t > self.th.stale_state_s:
            return False, "no fresh rt/lowstate: cannot tell that the robot is safe", {}
        max_dq = float(np.max(np.abs(s.joint_vel)))
        max_gyro = float(np.max(np.abs(s.gyro_b)))
        values = {"max_joint_vel": max_dq, "max_gyro": max_gyro}
        if not np.isfinite(max_dq) or max_dq > self.th.reset_max_joint_vel:
            return False, f"joints still moving ({max_dq:.2f} rad/s > {self.th.reset_max_joint_vel} rad/s)", values
        if not np.isfinite(max_gyro) or max_gyro > self.th.reset_max_gyro:
            return False, f"base still moving ({max_gyro:.2f} rad/s > {self.th.reset_max_gyro} rad/s)", values
        if self.wire_stiff() or self._recent(self.ext_stiff_t, now):
            return False, "stiff commands are on the wire: put the policy node in DAMP/PASSIVE first", values
        active = self.active_violations(now)
        if active:
            values["active"] = [v.cause for v in active]
            return False, "fault still active: " + "; ".join(v.detail for v in active), values
        return True, "robot lying still, motors not driven, no fault active", values

    def request_reset(self, now: float) -> ResetResult:
        if not self.latched:
            return ResetResult(True, "not latched: nothing to reset", [])
        ok, reason, values = self.safe_to_reset(now)
        if not ok:
            ev = SafetyEvent(now, "reset_refused", self.cause, reason, values, "stay latched (DAMP)")
            return ResetResult(False, reason, [ev])
        events = [SafetyEvent(now, "reset", self.cause, reason, values, "unlatch (OK)")]
        if self.writing:
            events.append(SafetyEvent(now, "monitor_damping_off", self.cause, "reset", {}, "stop writing"))
        self.latched, self.cause, self.latch_t, self.writing = False, "", None, False
        self._pending, self._persist_since, self._logged_causes = [], {}, set()
        return ResetResult(True, reason, events)
