"""A rehearsal per wire profile: does the stack walk on this rt/lowstate, or refuse it with its reason?

The real processes (simulator with `wire_profile`, estimator, safety monitor, policy node) start as the
launch file starts them; an operator then does what one would on a robot:

1. stand_up (the policy node runs its pre-flight first). A refusal other than "no fresh rt/lowstate yet"
   (the stream not up) is kept as the profile's answer; with raw foot force the answer is expected to be
   "calibrate first", so the operator calls estimator/calibrate_feet_unloaded (the robot lies: its feet
   are unloaded) and stands up again;
2. in READY, with raw foot force, estimator/calibrate_feet_standing;
3. walk through the walk test's segments, stop, damp.

The outcome says whether it walked, what was refused and why, the safety monitor's faults and input events,
and whether the robot ever stood still while in WALK (the failure this issue is about: a frozen gait clock).
The tests (tests/rehearsal_sim/test_wire_profiles.py) and bench/wire_profiles.py run it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from surrogait_core import interfaces
from surrogait_rehearsal.demo import walk_test_segments
from surrogait_rehearsal.harness.operator import Operator, Segment, SessionError
from surrogait_rehearsal.harness.processes import (
    REHEARSAL_NICENESS,
    ProcessGroup,
    launch_rehearsal,
    shipped_policy_path,
)
from surrogait_rehearsal.report import fall_metrics, load_session, read_fault_log, tracking_metrics
from surrogait_rehearsal.walk_rehearsal import walk_overrides
from surrogait_rehearsal.wire_profile import WireProfile

STILL_FRACTION = 0.3  # a walking segment whose mean forward speed is below this fraction of its command: standing still
NOT_UP_YET = "no fresh rt/lowstate"  # a refusal that only means the stream has not reached the node yet


@dataclasses.dataclass
class ProfileOutcome:
    profile: str
    allow_without_crc: bool
    walked: bool = False  # WALK reached and every segment completed
    refusals: list[str] = dataclasses.field(default_factory=list)  # what the policy node refused, in order
    calibration: list[str] = dataclasses.field(default_factory=list)  # the estimator's answers
    error: str = ""  # why the session stopped early ("" when it completed or ended on a refusal)
    faults: list[dict] = dataclasses.field(default_factory=list)  # the monitor's fault lines
    input_events: list[dict] = dataclasses.field(default_factory=list)  # the monitor's input lines
    statuses: dict[str, tuple[int, str, dict]] = dataclasses.field(default_factory=dict)  # diagnostics while walking
    segments: list[dict] = dataclasses.field(default_factory=list)  # per walking segment: command, mean vx
    vx_rmse: float | None = None
    fell: bool = False
    entered_walk: bool = False
    seconds: float = 0.0
    answers: dict[str, tuple[bool, str]] = dataclasses.field(default_factory=dict)  # `ask` services, after walking

    @property
    def stood_still_in_walk(self) -> bool:
        """Entered WALK and, in some walking segment, hardly moved forward."""
        if not self.entered_walk:
            return False
        if not self.segments:
            return True  # in WALK without a completed segment to show it moved
        return any(s["command"][0] > 0 and s["vx_mean"] < STILL_FRACTION * s["command"][0] for s in self.segments)

    @property
    def verdict(self) -> str:
        if self.walked:
            return "walks"
        if self.refusals and not self.entered_walk:
            return "refuses"
        return "fails"


def profile_overrides(workdir: Path, domain: int, profile: str, allow_without_crc: bool,
                      policy: Path | None = None, extra: dict[str, dict] | None = None) -> dict[str, dict]:
    """Each node's parameters: the walk rehearsal's, the simulator on `profile`, the stack told what it runs on,
    then `extra` (node: parameters) on top."""
    overrides = walk_overrides(workdir, "go2", domain, policy or shipped_policy_path("go2"), "driver",
                               {"wire_profile": profile})
    raw = WireProfile.parse(profile).foot_force == "raw"
    calibration_dir = str(workdir / "foot_force_calibration")
    for node in ("policy_node", "estimator_node"):
        overrides[node] = {**overrides[node], "allow_lowstate_without_crc": allow_without_crc,
                           "foot_force_calibration_dir": calibration_dir,
                           **({"foot_force_units": "raw"} if raw else {})}
    overrides["safety_monitor"] = {**overrides["safety_monitor"], "allow_lowstate_without_crc": allow_without_crc}
    for node, params in (extra or {}).items():
        overrides[node] = {**overrides[node], **params}
    return overrides


def _stand_up(operator: Operator, group: ProcessGroup, outcome: ProfileOutcome, raw: bool) -> bool:
    """stand_up until accepted; a lasting refusal is recorded (and, with raw foot force, calibration follows once)."""
    deadline = time.monotonic() + 25.0
    calibrated = False
    while True:
        ok, message = operator.call("stand_up", timeout_s=10.0)
        if ok:
            return True
        if operator.policy_state == "DAMP":
            raise SessionError(f"the policy node went to DAMP before standing up: {message}")
        if NOT_UP_YET not in message:
            outcome.refusals.append(message)
            if not (raw and not calibrated):
                return False
            ok, answer = operator.call(interfaces.SRV_CALIBRATE_FEET_UNLOADED, timeout_s=10.0)
            outcome.calibration.append(answer)
            if not ok:
                return False
            calibrated = True
        if time.monotonic() > deadline:
            outcome.refusals.append(message)
            return False
        time.sleep(0.5)
        if (why := group.why_dead()) is not None:
            raise SessionError(why)


def profile_session(operator: Operator, group: ProcessGroup, outcome: ProfileOutcome, raw: bool,
                    segments: list[Segment] | None = None, ask: tuple[str, ...] = ()) -> None:
    operator.wait_for("the policy node", lambda: operator.policy_state is not None, 60.0, abort_on=group.why_dead)
    if not _stand_up(operator, group, outcome, raw):
        return
    operator.wait_for_state("READY", 15.0)
    if raw:
        time.sleep(1.0)  # standing still on four feet
        ok, answer = operator.call(interfaces.SRV_CALIBRATE_FEET_STANDING, timeout_s=10.0)
        outcome.calibration.append(answer)
        if not ok:
            raise SessionError(f"the standing calibration step was refused: {answer}")
    ok, message = operator.call("walk", timeout_s=10.0)
    if not ok:
        outcome.refusals.append(message)
        return
    outcome.entered_walk = True

    def abort() -> str | None:
        if operator.policy_state == "DAMP":
            return "the policy node went to DAMP"
        return group.why_dead()

    segments = segments or walk_test_segments()

    noted_in = segments[1] if len(segments) > 1 else segments[0]

    def note_statuses(segment, elapsed: float) -> None:  # the nodes' diagnostics mid-walk (2 s into the 2nd segment)
        if segment is noted_in and elapsed >= 2.0 and not outcome.statuses:
            outcome.statuses = {name: (status.level, status.message, dict(status.values))
                                for name, status in _statuses(operator).items()}

    operator.run_segments(segments, on_tick=note_statuses, abort_on=abort)
    operator.call("stop_walk", must_succeed=True)
    operator.wait_for_state("READY", 5.0)
    for service in ask:
        outcome.answers[service] = operator.call(service, timeout_s=10.0)
    operator.call("damp", must_succeed=True)
    operator.wait_for_state("DAMP", 5.0)
    outcome.walked = True


def _statuses(operator: Operator) -> dict:
    with operator.lock:
        latest = {}
        for status in operator.statuses:
            latest[status.name] = status
        return latest


def rehearse_profile(workdir: Path, *, domain: int, profile: str, allow_without_crc: bool = False,
                     policy: Path | None = None, extra: dict[str, dict] | None = None,
                     segments: list[Segment] | None = None, ask: tuple[str, ...] = (),
                     log: Callable[[str], None] = print) -> ProfileOutcome:
    """One rehearsal on `profile`; its records (session.npz, sim_log.npz, fault_log.jsonl, logs/) in `workdir`.
    `extra`: more parameters per node; `segments`: instead of the walk test's; `ask`: Trigger services called
    after the walk (their answers in `outcome.answers`)."""
    workdir.mkdir(parents=True, exist_ok=True)
    outcome = ProfileOutcome(profile, allow_without_crc)
    raw = WireProfile.parse(profile).foot_force == "raw"
    start = time.monotonic()
    with ProcessGroup(workdir / "logs", domain, config_dir=workdir, niceness=REHEARSAL_NICENESS) as group:
        operator = Operator(domain, log=log, name="surrogait_wire_profile")
        try:
            launch_rehearsal(group, operator,
                             profile_overrides(workdir, domain, profile, allow_without_crc, policy, extra), log=log)
            profile_session(operator, group, outcome, raw, segments, ask)
        except SessionError as e:
            outcome.error = str(e)
        finally:
            operator.save(workdir / "session.npz")
            operator.close()
    outcome.seconds = time.monotonic() - start
    events = read_fault_log(workdir / "fault_log.jsonl")
    outcome.faults = [e for e in events if e.get("event") == "fault"]
    outcome.input_events = [e for e in events if e.get("event") in ("input", "input_cleared")]
    session = load_session(workdir / "session.npz")
    if outcome.entered_walk:
        tracking = tracking_metrics(session)
        outcome.segments = [{"name": s["name"], "command": s["command"], "vx_mean": s["vx_mean"]}
                            for s in tracking["segments"] if s["scored"]]
        outcome.vx_rmse = tracking["walking_vx_rmse"]
        outcome.fell = bool(fall_metrics(session)["fell"])
    return outcome
