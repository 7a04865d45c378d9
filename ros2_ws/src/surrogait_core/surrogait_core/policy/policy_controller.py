"""What the policy node commands each cycle: the state machine, operator input and policy, joined.

ROS-free and clock-free (callers pass `now_s`), so the node's whole decision logic is unit-tested
without rclpy or DDS. The node feeds it inputs (robot state, estimator velocity, safety state,
operator requests) and, once a control period, asks `cycle(now_s)` for the motor targets; between
policy steps it re-sends them at the motor rate, and asks for a cycle at once when
`damping_pending()` says a damping state was entered meanwhile.
Methods are guarded by one lock because the node calls them from three threads (DDS reader,
ROS executor, control loop); every call is short.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from surrogait_core.inputs.preflight import PreflightReport
from surrogait_core.policy.command_input import (
    COMMAND_SLEW_RATE,
    ChordDetector,
    CommandInput,
    CommandSlewLimiter,
    gait_chords,
)
from surrogait_core.policy.dry_run import DryRunTracker
from surrogait_core.policy.gait import leg_phases, stance_mask
from surrogait_core.policy.input_guard import InputGuard, InputGuardConfig
from surrogait_core.policy.policy_fsm import DAMPING_STATES, PolicyFsm, PolicyState, StandUpTrajectory, Transition
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.wire.go2_wire import NUM_MOTORS, LowStateView

REQUESTS = ("stand_up", "walk", "stop_walk", "damp", "reset")
# m/s: no quadruped of these walks faster (the Go2 runs ~4 m/s); an estimated base speed past it is not usable
MAX_BASE_SPEED_M_S = 5.0


@dataclasses.dataclass(frozen=True)
class MotorTargets:
    """Per-motor servo command, SDK order (what go2_wire.fill_motor_commands writes)."""

    q: np.ndarray
    dq: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray

    @classmethod
    def damping(cls, kd: float) -> MotorTargets:
        zeros = np.zeros(NUM_MOTORS)
        return cls(q=zeros, dq=zeros, kp=zeros, kd=np.full(NUM_MOTORS, kd), tau=zeros)

    @classmethod
    def position(cls, q: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> MotorTargets:
        zeros = np.zeros(NUM_MOTORS)
        return cls(q=np.asarray(q, dtype=np.float64), dq=zeros, kp=kp, kd=kd, tau=zeros)

    @property
    def is_damping(self) -> bool:
        return bool(np.all(self.kp == 0.0))


@dataclasses.dataclass(frozen=True)
class ControllerConfig:
    stand_up_duration_s: float = 2.0
    walk_to_ready_s: float = 0.5  # blend from the last policy targets to the default pose on stop_walk
    damping_kd: float = 1.0  # N·m·s/rad in PASSIVE and DAMP
    state_timeout_s: float = 0.06  # 3 control periods without rt/lowstate while stiff → DAMP
    estimator_timeout_s: float = 0.1  # no fresh odometry while walking (if the policy needs it) → DAMP
    command_timeout_s: float = 0.5  # no fresh cmd_vel / stick → zero velocity command
    command_slew_rate: tuple[float, float, float] = COMMAND_SLEW_RATE  # m/s², m/s², rad/s² (CommandSlewLimiter)
    # A gap this long between control cycles is a stall of this process (or of the whole host, as a
    # hypervisor pausing every vCPU); the state and odometry time-outs then count from its return.
    own_stall_s: float = 0.02
    reset_requires_safety_ok: bool = True  # DAMP → PASSIVE only when the safety monitor says OK
    inputs: InputGuardConfig = InputGuardConfig()  # what is checked on the robot's state (input_guard)
    # stand_up only right after a passed pre-flight (`on_preflight`): the node runs one for every stand-up.
    preflight_required: bool = False
    # Suspended dry run: kp and kd of every stiff command scaled by this fraction (0 = off), so a robot hung in a
    # harness moves its legs gently through the policy's motion (docs/robot.md, "Suspended dry run").
    dry_run_gain_fraction: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.dry_run_gain_fraction < 1.0:
            raise ValueError(f"dry_run_gain_fraction must be in [0, 1) (0 = off), got {self.dry_run_gain_fraction}")


PREFLIGHT_VALID_S = 5.0  # a passed pre-flight clears a stand-up this long afterwards, once

@dataclasses.dataclass(frozen=True)
class CycleOutput:
    state: PolicyState
    targets: MotorTargets
    command: np.ndarray  # (vx, vy, yaw rate) being followed
    inference_s: float | None  # onnxruntime time, WALK only
    state_age_s: float | None  # age of the robot state the targets were computed from
    scheduled_stance: np.ndarray | None = None  # WALK: the feet the gait schedule puts on the ground now


class PolicyController:
    def __init__(self, runner: PolicyRunner, config: ControllerConfig = ControllerConfig()):
        contract = runner.contract
        self.runner = runner
        self.config = config
        self.fsm = PolicyFsm(config.stand_up_duration_s)
        self.commands = CommandInput(contract.command_ranges, timeout_s=config.command_timeout_s)
        self.followed = CommandSlewLimiter(config.command_slew_rate)
        self.chords = ChordDetector(extra=gait_chords(contract.gait_names) if contract.gaits else ())
        gain = config.dry_run_gain_fraction or 1.0
        self.kp = np.asarray(contract.kp, dtype=np.float64) * gain
        self.kd = np.asarray(contract.kd, dtype=np.float64) * gain
        self.inputs = InputGuard(config.inputs)
        self.dry_run = DryRunTracker() if config.dry_run_gain_fraction else None  # commanded vs measured, walking
        self._preflight: tuple[PreflightReport, float] | None = None  # the latest, until a stand-up uses it
        self.preflight_wanted = False  # a stand-up was asked (gamepad) without a pre-flight: the node runs one
        self.default_pose = runner.default_joint_pos
        self._lock = threading.RLock()
        self._state: LowStateView | None = None
        self._state_time_s = -np.inf
        self._base_lin_vel_b: np.ndarray | None = None
        self._base_lin_vel_time_s = -np.inf
        self._odom_refused = ""  # why the newest odometry was not taken ("" when it was)
        self._stall_back_s = -np.inf  # when the control loop last came back from a stall of its own
        self._safety_ok: bool | None = None  # None until the safety monitor has spoken
        self._stand_up: StandUpTrajectory | None = None
        # The gait clock: phase (cycles) `_clock_phase0` at robot time `_clock_robot_s` (the inputs' clock: the
        # robot's tick, or this computer's when the tick is frozen), advancing at the current gait's rate. A gait
        # switch re-anchors it, so the phase runs on without a jump.
        self._clock_robot_s = 0.0
        self._clock_phase0 = 0.0
        self._to_default: tuple[StandUpTrajectory, float] | None = None  # (blend, start time) after walking
        self._last_q = self.default_pose.copy()  # last position targets written
        self._last_state = self.fsm.state
        self.events: list[tuple[float, str]] = []  # (time, what happened), for logs and diagnostics

    # ---- inputs ---------------------------------------------------------------------------
    def on_lowstate(self, state: LowStateView, now_s: float, received: int | None = None,
                    crc_ok: bool | None = None) -> None:
        """The newest LowState, taken at `now_s`; `received`: samples that arrived since the previous one taken
        (this one included; None: not counted, the stream's rate is not judged); `crc_ok`: its CRC verdict
        (None: not checked)."""
        with self._lock:
            usable = self.inputs.on_sample(state, now_s, received, crc_ok)
            self.events += [(now_s, what) for what in self.inputs.events]
            self.inputs.events.clear()
            if not usable:
                return
            self._state, self._state_time_s = state, now_s
            self.commands.set_gamepad(state.gamepad, now_s)
            for request in self.chords.update(state.gamepad.keys):
                self._request(request, now_s, source="gamepad")

    def on_cmd_vel(self, vx: float, vy: float, yaw_rate: float, now_s: float) -> None:
        with self._lock:
            self.commands.set_cmd_vel(vx, vy, yaw_rate, now_s)

    def on_base_lin_vel(self, base_lin_vel_b: np.ndarray, now_s: float) -> None:
        """The estimator's base velocity (body frame, m/s). One the policy cannot use (not finite, or faster than a
        quadruped walks: another unit, a diverged filter) is not taken: the last usable one ages out, and the walk
        refusal or the damp that follows names why."""
        v = np.asarray(base_lin_vel_b, dtype=np.float64)
        with self._lock:
            if not np.all(np.isfinite(v)):
                self._odom_refused = f"its velocity {v.tolist()} is not finite"
            elif np.abs(v).max() > MAX_BASE_SPEED_M_S:
                self._odom_refused = (f"its velocity {np.round(v, 2).tolist()} is beyond {MAX_BASE_SPEED_M_S} m/s "
                                      "(not m/s, or a diverged estimate)")
            else:
                self._base_lin_vel_b, self._base_lin_vel_time_s, self._odom_refused = v, now_s, ""

    def on_own_stall(self, gap_s: float, now_s: float) -> None:
        """The control loop did not run for `gap_s` and runs again at `now_s`.

        The robot's state may be waiting in the socket, but this loop had no chance to take it: the state
        and odometry time-outs count from now, and while walking the targets the motors held through the
        stall are held until a state taken after it comes (never the network on a state from before).
        """
        with self._lock:
            self._stall_back_s = now_s
            self.inputs.on_own_stall(now_s)
            self.events.append((now_s, f"control loop stalled for {gap_s * 1e3:.0f} ms (this process or the "
                                       "host was descheduled): holding the targets until a fresh state"))

    def on_safety_state(self, ok: bool, cause: str, now_s: float) -> None:
        """The safety monitor's verdict; DAMP from it latches damping at the next cycle."""
        with self._lock:
            self._safety_ok = ok
            if not ok:
                self._damp(f"safety monitor: {cause}", now_s)

    def request(self, name: str, now_s: float, source: str = "service") -> Transition:
        with self._lock:
            return self._request(name, now_s, source)

    def on_preflight(self, report: PreflightReport, now_s: float) -> None:
        """A pre-flight's verdict; a passed one clears the next stand-up within PREFLIGHT_VALID_S."""
        with self._lock:
            self._preflight = (report, now_s)
            self.preflight_wanted = False
            self.events.append((now_s, report.summary()))

    # ---- the cycle --------------------------------------------------------------------------
    def cycle(self, now_s: float) -> CycleOutput:
        with self._lock:
            state_age = now_s - self._state_time_s if self._state is not None else None
            if self.fsm.state not in DAMPING_STATES and not self._state_fresh(now_s):
                self._damp(f"no rt/lowstate for more than {self.config.state_timeout_s * 1e3:.0f} ms", now_s)
            if self.fsm.state not in DAMPING_STATES and (cause := self.inputs.fault()) is not None:
                self._damp(f"input {cause}", now_s)
            if self.fsm.state is PolicyState.WALK and self.runner.needs_base_lin_vel and not self._odom_fresh(now_s):
                self._damp(f"no state-estimator odometry for more than {self.config.estimator_timeout_s * 1e3:.0f} ms"
                           f"{self._odom_why()}", now_s)
            state = self.fsm.update(now_s)
            if state is not self._last_state:
                self._entered(state, now_s)
            # one cycle per policy step while walking: the followed command slews towards the operator's
            command = (self.followed.step(self.commands.command(now_s), self.runner.contract.control_dt_s)
                       if state is PolicyState.WALK else np.zeros(3))
            inference_s = None
            scheduled = None
            if state in DAMPING_STATES:
                targets = MotorTargets.damping(self.config.damping_kd)
            elif state is PolicyState.STAND_UP:
                targets = MotorTargets.position(self._stand_up.at(self.fsm.stand_up_fraction(now_s)), self.kp, self.kd)
            elif state is PolicyState.READY:
                q = self.default_pose
                if self._to_default is not None:
                    blend, start = self._to_default
                    q = blend.at((now_s - start) / self.config.walk_to_ready_s)
                targets = MotorTargets.position(q, self.kp, self.kd)
            elif self._state_time_s < self._stall_back_s:
                targets = MotorTargets.position(self._last_q, self.kp, self.kd)
            else:
                gait_time_s = self._gait_time_s()
                out = self.runner.step(self._state, command, gait_time_s, self._base_lin_vel_b)
                scheduled = stance_mask(self.runner.gait, leg_phases(self.runner.gait, gait_time_s))
                inference_s = out.inference_s
                frozen = out.observation is not None and \
                    self.inputs.on_observation(out.observation[self.runner.measured_obs_index])
                if out.finite and not frozen:
                    targets = MotorTargets.position(out.joint_targets, self.kp, self.kd)
                    if self.dry_run is not None:
                        self.dry_run.add(targets.q, self._state.joint_pos)
                else:
                    self._damp("policy output is not finite" if not out.finite
                               else self.inputs.frozen_observation_cause(), now_s)
                    state = self.fsm.state
                    self._entered(state, now_s)
                    targets = MotorTargets.damping(self.config.damping_kd)
            if not targets.is_damping:
                self._last_q = targets.q
            return CycleOutput(state, targets, command, inference_s, state_age,
                               scheduled if state is PolicyState.WALK else None)

    def damping_pending(self) -> bool:
        """A damping state was entered since the last cycle (a request from another thread): the motor
        stream must switch to damping now, not up to a control period later."""
        return self.fsm.state in DAMPING_STATES and self._last_state not in DAMPING_STATES

    def input_report(self, now_s: float) -> tuple[dict, dict]:
        """(input issues by cause, facts about the inputs) for diagnostics."""
        with self._lock:
            inputs = self.inputs
            facts = {"clock_source": inputs.clock.source, "lowstate_crc_failures": inputs.crc_failures,
                     "lowstate_crc_checked": inputs.crc_checked}
            if inputs.rate.last_rate_hz is not None:
                facts["lowstate_rate_hz"] = f"{inputs.rate.last_rate_hz:.0f}"
            return inputs.issues(now_s), facts

    @property
    def state(self) -> PolicyState:
        return self.fsm.state

    @property
    def latest_state(self) -> LowStateView | None:
        return self._state

    # ---- internals --------------------------------------------------------------------------
    def _state_fresh(self, now_s: float) -> bool:
        return self._state is not None and \
            now_s - max(self._state_time_s, self._stall_back_s) <= self.config.state_timeout_s

    def _odom_fresh(self, now_s: float) -> bool:
        return self._base_lin_vel_b is not None and \
            now_s - max(self._base_lin_vel_time_s, self._stall_back_s) <= self.config.estimator_timeout_s

    def _odom_why(self) -> str:
        return f"; the newest was not used: {self._odom_refused}" if self._odom_refused else ""

    def _gait_phase(self) -> float:
        # The gait clock runs on the robot's clock (LowState tick), not this computer's: on the robot the two
        # agree, and a rehearsal simulator that falls behind real time stays in step with the policy's gait
        # instead of seeing its phase jump. A frozen tick: this computer's (inputs.sample_clock).
        elapsed_s = max(0.0, self.inputs.robot_time_s - self._clock_robot_s)
        return self._clock_phase0 + elapsed_s / self.runner.gait.period_s

    def _gait_time_s(self) -> float:
        """The runner's gait time: the clock's phase on the current gait's period."""
        return self._gait_phase() * self.runner.gait.period_s

    def _set_gait(self, name: str, now_s: float) -> Transition:
        if name not in self.runner.contract.gait_names:
            return Transition(False, f"gait {name!r} refused: this policy walks with "
                                     f"{', '.join(self.runner.contract.gait_names)}")
        state = self.fsm.state
        if state not in (PolicyState.READY, PolicyState.WALK):
            return Transition(False, f"gait {name!r} refused in {state.value}: gaits change in READY or WALK")
        if state is PolicyState.WALK and self._state is not None:
            self._clock_phase0, self._clock_robot_s = self._gait_phase(), self.inputs.robot_time_s
        self.runner.set_gait(name)
        return Transition(True, f"gait {name} (period {self.runner.gait.period_s:g} s, duty factor "
                                f"{self.runner.gait.duty_factor:g})")

    @property
    def gait(self) -> str:
        return self.runner.gait.name

    def _request(self, name: str, now_s: float, source: str) -> Transition:
        if name == "stand_up":
            result = self._stand_up_request(now_s)
        elif name == "walk":
            if (refusal := self.inputs.refusal("walk", now_s)) is not None:
                result = Transition(False, refusal)
            elif self.runner.needs_base_lin_vel and not self._odom_fresh(now_s):
                result = Transition(False, "walk refused: this policy needs the state estimator's odometry, "
                                           f"and none is fresh (is the estimator node running?){self._odom_why()}")
            else:
                result = self.fsm.walk()
        elif name == "stop_walk":
            result = self.fsm.stop_walk()
        elif name == "damp":
            result = self._damp(f"{source} request", now_s)
        elif name.startswith("gait:"):
            result = self._set_gait(name.removeprefix("gait:"), now_s)
        elif name == "reset":
            safety_ok = bool(self._safety_ok) or (self._safety_ok is None and not self.config.reset_requires_safety_ok)
            result = self.fsm.reset(safety_ok)
        else:
            raise ValueError(f"unknown request {name!r}; expected one of {REQUESTS} or gait:<name>")
        self.events.append((now_s, f"{source} {name}: {result.message}"))
        return result

    def _stand_up_request(self, now_s: float) -> Transition:
        if self.fsm.state is not PolicyState.PASSIVE:
            return self.fsm.stand_up(now_s)  # refused, with the state machine's reason
        if (refusal := self.inputs.refusal("stand_up", now_s)) is not None:
            return Transition(False, refusal)
        if not self._state_fresh(now_s):
            return Transition(False, "stand_up refused: no fresh rt/lowstate (is the robot or simulator up?)")
        if self.config.preflight_required:
            report, at = self._preflight or (None, -np.inf)
            if report is None or now_s - at > PREFLIGHT_VALID_S:
                self.preflight_wanted = True
                return Transition(False, "stand_up refused: no pre-flight yet; it runs now (policy/stand_up runs "
                                         "one itself; policy/pre_flight prints its table)")
            if not report.passed:
                return Transition(False, f"stand_up refused: {report.summary()}")
            self._preflight = None  # one stand-up per pre-flight
        result = self.fsm.stand_up(now_s)
        if result.accepted:
            self._stand_up = StandUpTrajectory(self._state.joint_pos.copy(), self.default_pose.copy())
        return result

    def _damp(self, cause: str, now_s: float) -> Transition:
        first = self.fsm.state is not PolicyState.DAMP
        result = self.fsm.damp(cause)
        if first:
            self.events.append((now_s, f"DAMP: {cause}"))
        return result

    def _entered(self, state: PolicyState, now_s: float) -> None:
        if state is PolicyState.WALK:
            # A walk starts from a clean slate: no stale last action, gait clock at phase 0.
            self.runner.reset()
            self.followed.reset()  # from a standstill
            self.inputs.start_walk()
            self._clock_robot_s, self._clock_phase0 = self.inputs.robot_time_s, 0.0
        # Leaving WALK mid-stride: move the targets to the default pose smoothly, never in one jump.
        from_walk = self._last_state is PolicyState.WALK and state is PolicyState.READY
        self._to_default = (StandUpTrajectory(self._last_q.copy(), self.default_pose.copy()), now_s) if from_walk \
            else None
        self._last_state = state
