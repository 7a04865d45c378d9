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
from surrogait_rehearsal.harness.operator import Segment, SessionError
from surrogait_rehearsal.harness.session import Session, SessionConfig, walk_test_segments
from surrogait_rehearsal.report import fall_metrics, load_session, read_fault_log, tracking_metrics
from surrogait_rehearsal.sim.wire_profile import WireProfile

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


def profile_params(workdir: Path, profile: str, allow_without_crc: bool,
                   extra: dict[str, dict] | None = None) -> dict[str, dict]:
    """Each node's parameters over its package's file: the simulator on `profile`, the stack told what it runs on
    (CRC allowed or not, raw foot force, a calibration folder of this session's own), then `extra` on top."""
    raw = WireProfile.parse(profile).foot_force == "raw"
    stack = {"allow_lowstate_without_crc": allow_without_crc,
             "foot_force_calibration_dir": str(Path(workdir).resolve() / "foot_force_calibration"),
             **({"foot_force_units": "raw"} if raw else {})}
    params = {"go2_sim": {"wire_profile": profile, "motor_model": "driver"}, "policy_node": dict(stack),
              "estimator_node": dict(stack), "safety_monitor": {"allow_lowstate_without_crc": allow_without_crc}}
    for node, more in (extra or {}).items():
        params[node] = {**params.get(node, {}), **more}
    return params


def _stand_up(session: Session, outcome: ProfileOutcome, raw: bool) -> bool:
    """stand_up until accepted; a lasting refusal is recorded (and, with raw foot force, calibration follows once)."""
    op = session.operator
    op.wait_for("the policy node", lambda: op.policy_state is not None, 60.0, abort_on=session.why_dead)
    deadline = time.monotonic() + 25.0
    calibrated = False
    while True:
        ok, message = op.call(interfaces.SRV_STAND_UP, timeout_s=10.0)
        if ok:
            return True
        if op.policy_state == "DAMP":
            raise SessionError(f"the policy node went to DAMP before standing up: {message}")
        if NOT_UP_YET not in message:
            outcome.refusals.append(message)
            if not (raw and not calibrated):
                return False
            ok, answer = op.call(interfaces.SRV_CALIBRATE_FEET_UNLOADED, timeout_s=10.0)
            outcome.calibration.append(answer)
            if not ok:
                return False
            calibrated = True
        if time.monotonic() > deadline:
            outcome.refusals.append(message)
            return False
        time.sleep(0.5)
        if (why := session.why_dead()) is not None:
            raise SessionError(why)


def profile_session(session: Session, outcome: ProfileOutcome, raw: bool, segments: list[Segment],
                    ask: tuple[str, ...] = ()) -> None:
    op = session.operator
    if not _stand_up(session, outcome, raw):
        return
    op.wait_for_state("READY", 15.0)
    if raw:
        time.sleep(1.0)  # standing still on four feet
        ok, answer = op.call(interfaces.SRV_CALIBRATE_FEET_STANDING, timeout_s=10.0)
        outcome.calibration.append(answer)
        if not ok:
            raise SessionError(f"the standing calibration step was refused: {answer}")
    op.set_cmd_vel(*segments[0].command)
    ok, message = op.call(interfaces.SRV_WALK, timeout_s=10.0)
    if not ok:
        outcome.refusals.append(message)
        return
    outcome.entered_walk = True
    noted_in = segments[1] if len(segments) > 1 else segments[0]

    def note_statuses(segment: Segment, elapsed: float) -> None:  # the nodes' diagnostics mid-walk
        if segment is noted_in and elapsed >= 2.0 and not outcome.statuses:
            with op.lock:
                latest = {status.name: status for status in op.statuses}
            outcome.statuses = {name: (s.level, s.message, dict(s.values)) for name, s in latest.items()}

    session.run_segments(segments, on_tick=note_statuses)
    op.call(interfaces.SRV_STOP_WALK, must_succeed=True)
    op.wait_for_state("READY", 5.0)
    for service in ask:
        outcome.answers[service] = op.call(service, timeout_s=10.0)
    op.call(interfaces.SRV_DAMP, must_succeed=True)
    op.wait_for_state("DAMP", 5.0)
    outcome.walked = True


def rehearse_profile(workdir: Path, *, domain: int, profile: str, allow_without_crc: bool = False,
                     policy: Path | None = None, extra: dict[str, dict] | None = None,
                     segments: list[Segment] | None = None, ask: tuple[str, ...] = (),
                     log: Callable[[str], None] = print) -> ProfileOutcome:
    """One rehearsal on `profile`; its records (session.npz, sim_log.npz, safety_fault_log.jsonl, logs/) in
    `workdir`. `extra`: more parameters per node; `segments`: instead of the walk test's; `ask`: Trigger services
    called after the walk (their answers in `outcome.answers`)."""
    outcome = ProfileOutcome(profile, allow_without_crc)
    raw = WireProfile.parse(profile).foot_force == "raw"
    config = SessionConfig(Path(workdir), domain=domain, robot="go2", policy=policy,
                           params=profile_params(workdir, profile, allow_without_crc, extra),
                           operator_name="surrogait_wire_profile")
    start = time.monotonic()
    with Session(config, log=log) as session:
        try:
            session.start()
            profile_session(session, outcome, raw, segments or walk_test_segments(), ask)
        except SessionError as e:
            outcome.error = str(e)
        files = session.files
    outcome.seconds = time.monotonic() - start
    events = read_fault_log(files.fault_log)
    outcome.faults = [e for e in events if e.get("event") == "fault"]
    outcome.input_events = [e for e in events if e.get("event") in ("input", "input_cleared")]
    if outcome.entered_walk:
        session_record = load_session(files.session)
        tracking = tracking_metrics(session_record)
        outcome.segments = [{"name": s["name"], "command": s["command"], "vx_mean": s["vx_mean"]}
                            for s in tracking["segments"] if s["scored"]]
        outcome.vx_rmse = tracking["walking_vx_rmse"]
        outcome.fell = bool(fall_metrics(session_record)["fell"])
    return outcome
