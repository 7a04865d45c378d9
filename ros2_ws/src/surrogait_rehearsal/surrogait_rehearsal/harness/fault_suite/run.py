"""Running the fault suite: each scenario, and the no-fault baseline, in a fresh rehearsal `Session` of its own.

The session is the demo's (harness.session): the simulator and the robot's three nodes, each with its package's
parameters file, so the suite judges the configuration the robot runs. A scenario brings the rehearsal to its
starting state (READY, or WALK at 0.5 m/s), injects its fault (injections), while an observer in this process
records the wire (observers), and is judged afterwards (evaluation); the baseline measures how close a walk with
no fault comes to each rule (margins).
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

from surrogait_core import interfaces
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety import read_fault_log
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_rehearsal.harness.fault_injection import make_nan_policy
from surrogait_rehearsal.harness.fault_suite.evaluation import MAX_SETTLE_S, evaluate, wait_until_still
from surrogait_rehearsal.harness.fault_suite.injections import NAN_VX_TRIGGER, POLICY, WALK_BEFORE_FAULT_S, Scenario
from surrogait_rehearsal.harness.fault_suite.margins import margins
from surrogait_rehearsal.harness.fault_suite.observers import WireObserver
from surrogait_rehearsal.harness.operator import Operator
from surrogait_rehearsal.harness.processes import ProcessGroup, cpu_seconds
from surrogait_rehearsal.harness.session import Session, SessionConfig


class BringUpError(RuntimeError):
    """The rehearsal did not reach the state a scenario starts from."""


def scenario_config(workdir: Path, domain: int, policy_path: Path, standin_script: Path | None = None,
                    realtime_priority: int = 0, robot: str = "go2") -> SessionConfig:
    """A scenario's session: the robot's whole stack with its packages' parameters files (the demo's), records in
    `workdir`; with `standin_script`, a development stand-in plays the policy node (standing only)."""
    stand_ins = {POLICY: [sys.executable, str(standin_script), "--domain", str(domain)]} if standin_script else {}
    return SessionConfig(workdir, domain=domain, robot=robot, policy=policy_path, sim_log=False, stand_ins=stand_ins,
                         realtime_priority=realtime_priority, operator_name="fault_suite")


class ScenarioRun:
    """One scenario's rehearsal: its session, the operator (`ros`) and the wire observer (`rec`) in this process."""

    def __init__(self, session: Session, recorder: WireObserver):
        self.session, self.rec = session, recorder
        self.ros: Operator = session.operator
        self.cfg = session.config
        self.fault_log = session.files.fault_log
        self.monitor_cpu: float | None = None

    @property
    def group(self) -> ProcessGroup:
        return self.session.group

    @property
    def standin(self) -> bool:
        return POLICY in self.cfg.stand_ins

    def pid(self, name: str) -> int:
        return self.session.pid(name)

    def wait_for(self, what: str, cond: Callable[[], bool], timeout_s: float, bringing_up: bool = False):
        deadline = time.monotonic() + timeout_s
        while not cond():
            self.group.check_alive(self.session.started)
            if bringing_up and self.ros.safety_state.get("state") == "DAMP":
                raise BringUpError(f"the monitor latched while waiting for {what}: {self.ros.safety_state}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout_s} s waiting for {what} "
                                   f"(policy state {self.ros.policy_state!r}, safety {self.ros.safety_state!r}; "
                                   f"logs in {self.session.files.logs})")
            time.sleep(0.02)

    def reach_starting_state(self, walk_vx: float | None, walk_s: float = WALK_BEFORE_FAULT_S):
        """Lowstate flowing, the monitor OK, READY (the session's stand-up); optionally WALK at walk_vx for walk_s.

        Raises BringUpError when the rehearsal cannot get there (e.g. the monitor, rightly, latched on a 100 ms
        stall of an overloaded machine): the scenario never started, it may be retried.
        """
        try:
            self._reach(walk_vx, walk_s)
        except (TimeoutError, RuntimeError) as e:  # SessionError and ProcessExited among them
            raise BringUpError(str(e)) from e
        if self.ros.safety_state.get("state") != "OK":
            raise BringUpError(f"the monitor latched during bring-up: {self.ros.safety_state}")

    def _reach(self, walk_vx: float | None, walk_s: float):
        up = {"bringing_up": True}
        self.wait_for("rt/lowstate", lambda: self.rec.last_state_time() is not None, 30.0, **up)
        self.wait_for("the safety monitor", lambda: self.ros.safety_state.get("state") == "OK", 30.0, **up)
        if self.standin:  # the stand-in stands up by itself
            self.wait_for("READY", lambda: self.ros.policy_state == "READY", 15.0, **up)
        else:
            self.session.stand_up(timeout_s=15.0)
        # An operator's e-stop/reset client is long-lived; a client made just before its first call
        # still finishes discovery meanwhile (that first request arrived ~80 ms late in tests).
        self.ros.wait_service(interfaces.SRV_ESTOP)
        self.ros.wait_service(interfaces.SRV_SAFETY_RESET)
        time.sleep(0.5)
        if walk_vx is not None and not self.standin:
            self.session.walk(walk_vx)
            time.sleep(walk_s)


class _Rehearsed:
    """A scenario's session from start to stop, with the cyclic GC held off meanwhile: the recorder keeps every
    sample, and a collection over thousands of them stalls this process for 50-100 ms (seen as fake gaps on the
    wire), so it collects between scenarios, not during one."""

    def __init__(self, config: SessionConfig, ros: Operator, recorder: WireObserver):
        self.session = Session(config, operator=ros, log=lambda _: None)
        self.run = ScenarioRun(self.session, recorder)

    def __enter__(self) -> ScenarioRun:
        gc.collect()
        gc.disable()
        try:
            self.session.start()
        except BaseException:
            self.__exit__()
            raise
        return self.run

    def __exit__(self, *exc) -> None:
        try:
            self.session.stop(grace_s=5.0, term_s=None)  # SIGINT, then SIGKILL after 5 s
        finally:
            gc.enable()


def run_scenario(sc: Scenario, domain: int, workdir: Path, ros: Operator, recorder: WireObserver,
                 policy_path: Path, standin_script: Path | None = None, walk_vx: float | None = 0.5,
                 try_reset: bool = False, realtime_priority: int = 0, robot: str = "go2",
                 walk_s: float = WALK_BEFORE_FAULT_S) -> dict:
    workdir.mkdir(parents=True, exist_ok=True)
    if sc.nan_policy and standin_script is None:
        policy_path = make_nan_policy(policy_path, workdir / "policy_nan.onnx", NAN_VX_TRIGGER)
    ros.reset()
    recorder.clear()
    config = scenario_config(workdir, domain, policy_path, standin_script, realtime_priority, robot)
    t_wall_offset = time.time() - time.monotonic()
    tilt_limit = default_thresholds(load_robot_spec(robot)).max_roll_rad
    with _Rehearsed(config, ros, recorder) as r:
        inj, reset, cmds, states = _run_in_rehearsal(sc, r, ros, recorder, walk_vx, try_reset, walk_s)
    phase = "standing (READY)" if walk_vx is None or standin_script is not None else f"walking (WALK, cmd vx {walk_vx})"
    result = evaluate(sc, inj, cmds, states, r.fault_log, t_wall_offset, ros, tilt_limit, phase, robot)
    if recorder.stamp_lag_max_s is not None:  # the observer's own delay, kept out of the latency above
        result["observer_stamp_lag_max_ms"] = round(recorder.stamp_lag_max_s * 1e3, 1)
    if recorder.history_overflows:  # the wire was not seen whole: no verdict can stand on it
        result["observer_history_overflows"], result["ok"] = recorder.history_overflows, False
    recorder.clear()
    result["workdir"] = str(workdir)
    result["monitor_cpu_share"] = r.monitor_cpu
    if reset is not None:
        result["reset"] = reset
    return result


def _run_in_rehearsal(sc: Scenario, r: ScenarioRun, ros: Operator, recorder: WireObserver, walk_vx: float | None,
                      try_reset: bool, walk_s: float):
    r.reach_starting_state(walk_vx, walk_s)
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


def run_baseline(domain: int, workdir: Path, ros: Operator, recorder: WireObserver, policy_path: Path,
                 segments=((0.5, 4.0), (1.0, 4.0), (0.0, 2.0)), realtime_priority: int = 0,
                 robot: str = "go2", gait: str | None = None) -> dict:
    """Stand up and walk with no fault injected: the monitor must stay OK (no false positive). `gait`: a multi-gait
    policy's gait to walk in (switched to while standing; None: the one it starts in)."""
    workdir.mkdir(parents=True, exist_ok=True)
    ros.reset()
    recorder.clear()
    config = scenario_config(workdir, domain, policy_path, realtime_priority=realtime_priority, robot=robot)
    with _Rehearsed(config, ros, recorder) as r:
        r.reach_starting_state(None)  # standing, monitor OK
        if gait is not None:
            ros.call(interfaces.SRV_GAIT_PREFIX + gait, must_succeed=True)
        r.session.walk(segments[0][0])
        for vx, seconds in segments:  # whatever the monitor says: this run measures it
            ros.set_cmd_vel(vx)
            time.sleep(seconds)
        cmds, states = recorder.snapshot()
        safety, policy = dict(ros.safety_state), ros.policy_state
    log = read_fault_log(r.fault_log) if r.fault_log.exists() else []
    faults = [{"cause": e["cause"], "detail": e["detail"]} for e in log if e["event"] == "fault"]
    result = {"scenario": "baseline_no_fault", "description": "stand up, walk 0.5 then 1.0 m/s, stop; no fault",
              "gait": gait or ros.gait,
              "final_safety_state": safety.get("state"), "final_policy_state": policy, "false_faults": faults,
              "max_fraction_of_threshold": margins(cmds, states, robot=robot), "workdir": str(workdir)}
    result["ok"] = safety.get("state") == "OK" and not faults
    recorder.clear()
    return result
