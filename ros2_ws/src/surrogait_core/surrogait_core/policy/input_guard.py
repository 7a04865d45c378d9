"""The policy node's inputs, judged: which LowStates it may use, on which clock, and what it must refuse.

Per sample (`on_sample`, once a control period, with the count of samples that arrived since the last):
- a sample whose CRC fails is refused (unless `allow_without_crc`, simulators only) and the cause kept
  for the operator's answer;
- its robot time comes from `SampleClock` (tick, or this computer's clock when the tick is frozen);
- the stream's rate and the IMU and foot sensors go through `InputSanity`.
Per policy step in WALK (`on_observation`): the measured part of the observation (IMU, encoders, the
estimator's velocity: what a live robot's sensors never repeat exactly) unchanged for
`frozen_observation_steps` steps is a fault: the network would be walking on a stale picture of the robot
(a stream re-sending one sample, a dead sensor bus). The gait clock, command and last action are left
out: they change on their own and would hide it.

What follows from each cause (docs/robot.md, "Inputs the stack checks"):
- refused: stand_up and walk while the rate is low, an IMU check fails or samples fail their CRC;
- DAMP while the motors are stiff (STAND_UP, READY, WALK): the rate low, an IMU check failed, a frozen
  observation; a CRC-failing stream damps through the state time-out (no usable state);
- adapted, with a warning: a frozen tick (host clock), stuck foot sensors (the policy does not read them).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from surrogait_core.inputs.sample_clock import CLOCK_FROZEN, SampleClock
from surrogait_core.inputs.sanity import IMU_CAUSES, RATE_LOW, InputIssue, InputSanity, SanityConfig
from surrogait_core.inputs.stream_stats import SampleRate
from surrogait_core.wire.go2_wire import LowStateView

LOWSTATE_CRC = "lowstate_crc"
OBSERVATION_FROZEN = "observation_frozen"
REFUSING_CAUSES = (RATE_LOW, *IMU_CAUSES)  # stand_up and walk are refused while one is present
DAMPING_CAUSES = (RATE_LOW, *IMU_CAUSES)  # the motors are damped when one appears while they are stiff
CRC_REFUSAL_MEMORY_S = 1.0  # a CRC refusal this recent still explains why no state is fresh


@dataclasses.dataclass(frozen=True)
class InputGuardConfig:
    sanity: SanityConfig = SanityConfig()
    allow_without_crc: bool = False  # simulators that leave LowState's crc unset; never on the robot
    frozen_observation_steps: int = 10  # 0.2 s at 50 Hz

    def __post_init__(self) -> None:
        if self.frozen_observation_steps < 2:
            raise ValueError(f"frozen_observation_steps must be >= 2, got {self.frozen_observation_steps}")


class InputGuard:
    def __init__(self, config: InputGuardConfig = InputGuardConfig()):
        self.config = config
        self.clock = SampleClock(name="rt/lowstate")
        self.rate = SampleRate(window_s=1.0)
        self.sanity = InputSanity(config.sanity)
        self.robot_time_s = 0.0  # of the latest usable sample
        self.crc_failures = 0
        self.crc_checked = 0
        self._crc_refused_s: float | None = None
        self._same_observation = 0
        self._last_observation: np.ndarray | None = None
        self._reported: set[str] = set()
        self.events: list[str] = []  # issues raised and cleared, for the node's log (taken by the controller)

    # -- samples -------------------------------------------------------------------------------------
    def on_sample(self, state: LowStateView, now_s: float, received: int | None = None,
                  crc_ok: bool | None = None) -> bool:
        """One taken sample (and `received` − 1 before it that were not taken; None: not counted, the rate is
        not judged); True if it may be used."""
        if received is not None:
            self.sanity.on_rate(self.rate.add(received, now_s))
        if crc_ok is not None:
            self.crc_checked += 1
            if not crc_ok:
                self.crc_failures += 1
                if not self.config.allow_without_crc:
                    self._crc_refused_s = now_s
                    self._report()
                    return False
        self.robot_time_s = self.clock.time_s(state.tick_ms, now_s)
        self.sanity.on_state(state, now_s)
        self._report()
        return True

    def on_own_stall(self, now_s: float) -> None:
        """This process did not take samples for a while: the rate window restarts (the stream went on)."""
        self.rate.restart(now_s)

    # -- observations -----------------------------------------------------------------------------------
    def on_observation(self, observation: np.ndarray) -> bool:
        """One WALK step's observation; True once it has not changed for `frozen_observation_steps` steps."""
        if self._last_observation is not None and np.array_equal(observation, self._last_observation):
            self._same_observation += 1
        else:
            self._same_observation = 1
            self._last_observation = np.array(observation, copy=True)
        return self._same_observation >= self.config.frozen_observation_steps

    def start_walk(self) -> None:
        self._same_observation = 0
        self._last_observation = None

    def frozen_observation_cause(self) -> str:
        return (f"{OBSERVATION_FROZEN}: the measured part of the policy's observation (IMU, joints) has not "
                f"changed for {self._same_observation} steps while walking: rt/lowstate repeats one sample")

    # -- verdicts ---------------------------------------------------------------------------------------
    def issues(self, now_s: float) -> dict[str, InputIssue]:
        """Every input issue present now, by cause (diagnostics)."""
        issues = self.sanity.issues()
        if self.clock.on_host:
            issues[CLOCK_FROZEN] = InputIssue(CLOCK_FROZEN, self.clock.cause, {"clock": "host"})
        if self._crc_recent(now_s):
            issues[LOWSTATE_CRC] = InputIssue(LOWSTATE_CRC, self.crc_refusal(), {
                "failures": self.crc_failures, "checked": self.crc_checked})
        elif self.crc_failures and self.config.allow_without_crc:
            issues[LOWSTATE_CRC] = InputIssue(LOWSTATE_CRC, f"{self.crc_failures} of {self.crc_checked} rt/lowstate "
                                              "samples failed their CRC and were used (allow_lowstate_without_crc: "
                                              "simulators only)", {"failures": self.crc_failures})
        return issues

    def refusal(self, request: str, now_s: float) -> str | None:
        """Why `request` (stand_up, walk) must be refused now, or None."""
        issues = self.sanity.issues()
        causes = [issues[c].detail for c in REFUSING_CAUSES if c in issues]
        if self._crc_recent(now_s):
            causes.append(self.crc_refusal())
        return f"{request} refused: " + "; ".join(causes) if causes else None

    def fault(self) -> str | None:
        """A cause to damp stiff motors for, or None."""
        issues = self.sanity.issues()
        for cause in DAMPING_CAUSES:
            if cause in issues:
                return f"{cause}: {issues[cause].detail}"
        return None

    def crc_refusal(self) -> str:
        return (f"rt/lowstate samples fail their CRC ({self.crc_failures} of {self.crc_checked} checked): a corrupted "
                "link, or a simulator that leaves crc unset; set allow_lowstate_without_crc: true for simulators "
                "only, never on the robot")

    def _crc_recent(self, now_s: float) -> bool:
        return self._crc_refused_s is not None and now_s - self._crc_refused_s <= CRC_REFUSAL_MEMORY_S

    def _report(self) -> None:
        """Events for issues raised and cleared since the last sample (the clock's fallback once)."""
        current = dict(self.sanity.issues())
        if self.clock.on_host:
            current[CLOCK_FROZEN] = InputIssue(CLOCK_FROZEN, self.clock.cause, {})
        if self._crc_refused_s is not None:
            current[LOWSTATE_CRC] = InputIssue(LOWSTATE_CRC, self.crc_refusal(), {})
        elif self.crc_failures:  # allowed: said once, for the log
            current[LOWSTATE_CRC] = InputIssue(LOWSTATE_CRC, "rt/lowstate samples fail their CRC and are used "
                                               "(allow_lowstate_without_crc: simulators only)", {})
        for cause in current.keys() - self._reported:
            self.events.append(f"input {cause}: {current[cause].detail}")
        for cause in self._reported - current.keys():
            self.events.append(f"input {cause} cleared")
        self._reported = set(current)  # a CRC refusal and the clock's fallback stay for the session
