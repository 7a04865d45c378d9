"""The policy node: an exported ONNX policy driving a Go2 (unitree_sdk2 DDS) or a Go1 (unitree_legged_sdk
UDP, through the safety monitor) at the contract's rate.

A thin shell over `surrogait_core.policy.policy_controller` (all decisions) and
`surrogait_core.runtime.control_loop` (timing). Two threads:
  - the control thread wakes at absolute deadlines at the motor rate (`command_rate_hz`, 500 by
    default) and writes a LowCmd (with CRC) every time through the robot's link (robot_link: the
    Go2's DDS, lowcmd_writer / surrogait_core.wire.latest_lowstate; go1_link: the Go1's UDP), as the robot's motor
    drivers expect a stream of hundreds of Hz. Once a control period (the contract's, 50 Hz) it
    takes the newest LowState and asks the controller for new motor targets (and, on the Go1,
    checks the SDK's power protection); in between it re-sends the latest ones, except that a
    damping request switches the stream at once. It publishes JointState / Imu at `feedback_rate_hz`;
  - the ROS executor (the main thread, `surrogait_core.runtime.ros_node.run_node`) serves the Trigger
    services and cmd_vel / safety / odometry topics, and logs the controller's events when the
    control thread signals new ones. `policy/stand_up` runs the pre-flight first (a second of rt/lowstate
    from its own reader, judged by `surrogait_core.inputs.preflight`), `policy/pre_flight` runs it alone,
    `policy/dry_run_report` answers the suspended dry run's comparison (docs/robot.md).
Every sample's CRC, the stream's rate, its clock and the IMU are judged by the controller's input guard
(`surrogait_core.policy.input_guard`); issues are named in the log and on /diagnostics.

Run: `policy_node --ros-args --params-file ros2_ws/src/surrogait_policy/config/policy_node.yaml`
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String, UInt8MultiArray
from std_srvs.srv import Trigger

from surrogait_core import interfaces
from surrogait_core.inputs.foot_force import NONE, load_calibration
from surrogait_core.inputs.preflight import (
    PREFLIGHT_DURATION_S,
    PreflightLimits,
    PreflightRecorder,
    PreflightReport,
    run_preflight,
)
from surrogait_core.inputs.sample_clock import CLOCK_FROZEN
from surrogait_core.inputs.sanity import SanityConfig
from surrogait_core.inputs.stream_stats import required_lowstate_rate_hz
from surrogait_core.policy.contract import ContractError
from surrogait_core.policy.input_guard import InputGuardConfig
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_controller import ControllerConfig, MotorTargets, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.control_loop import DeadlineScheduler, LoopStats, Tick
from surrogait_core.runtime.realtime import enter_realtime, freeze_startup_objects
from surrogait_core.runtime.ros_node import declare_params, run_node
from surrogait_policy.params import (
    PARAMETERS,  # noqa: F401  (the node's parameter table, read by the launch-file test)
    PolicyNodeParams,
    commands_per_policy_step,
    feedback_every_n_cycles,
)
from surrogait_policy.robot_link import LinkError, RobotLink, damp_on_protection, open_link
from surrogait_policy.sport_mode import SportModeError

NODE_NAME = "policy_node"
SRV_RESET = interfaces.SRV_POLICY_RESET
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
# policy/state keeps the session's recent states for late joiners, not only the newest: a listener that matches
# after a transition (the session recorder; DDS discovery can take over a second) still gets every state in
# order. A reader of depth 1 still gets just the newest.
STATE_HISTORY = QoSProfile(depth=32, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                           reliability=ReliabilityPolicy.RELIABLE)
SHUTDOWN_DAMPING_S = 0.2  # damping LowCmds streamed on exit so the motors are never left stiff
# Loop timing in diagnostics: the last 10 s. Its percentiles run on the control thread once per
# diagnostics period, so the window stays small enough (≈ 1 ms) not to delay the next LowCmd.
DIAGNOSTICS_WINDOW_S = 10.0


class PolicyNode(Node):
    """The ROS shell around a PolicyController; `start()` opens the robot's link and starts the control thread."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self.params = declare_params(self, PolicyNodeParams)
        policy = OnnxPolicy(Path(self.params.policy_path).expanduser(), robot=self.params.robot)
        contract = policy.contract
        spec = load_robot_spec(self.params.robot)
        if tuple(contract.joint_names) != tuple(spec.joint_names):
            raise ContractError(f"{self.params.policy_path}: the policy's joint order {list(contract.joint_names)} is "
                                f"not the {spec.name}'s SDK motor order {list(spec.joint_names)}; re-export it")
        self.joint_names = list(contract.joint_names)
        p = self.params
        min_rate_hz = required_lowstate_rate_hz(contract.control_dt_s)
        config = ControllerConfig(
            stand_up_duration_s=p.stand_up_duration_s,
            damping_kd=p.damping_kd,
            state_timeout_s=p.state_timeout_s,
            estimator_timeout_s=p.estimator_timeout_s,
            command_timeout_s=p.cmd_vel_timeout_s,
            command_slew_rate=(p.command_accel_m_s2, p.command_accel_m_s2, p.command_yaw_accel_rad_s2),
            reset_requires_safety_ok=p.reset_requires_safety_ok,
            inputs=InputGuardConfig(SanityConfig(min_rate_hz=min_rate_hz, check_feet=p.foot_force_units != NONE),
                                    allow_without_crc=p.allow_lowstate_without_crc,
                                    frozen_observation_steps=p.frozen_observation_steps),
            preflight_required=p.preflight_before_stand_up,
            dry_run_gain_fraction=p.dry_run_gain_fraction,
        )
        # What the pre-flight holds the robot to: the rate the contract needs, gaps no longer than the safety
        # monitor's stale-state threshold (2.5 control periods), the folded pose unless hung for a dry run.
        self.preflight_limits = PreflightLimits(min_rate_hz=min_rate_hz, max_gap_ms=2.5e3 * contract.control_dt_s,
                                                allow_without_crc=p.allow_lowstate_without_crc,
                                                folded_envelope=p.dry_run_gain_fraction == 0.0,
                                                min_battery_v=25.0 if p.robot == "go2" else 20.0)
        self._preflight_lock = threading.Lock()
        self._feed_recorder: PreflightRecorder | None = None  # a pre-flight fed by the control loop (Go1)
        self._preflight_thread: threading.Thread | None = None
        self.controller = PolicyController(PolicyRunner(policy), config)
        self.commands_per_step = commands_per_policy_step(self.params.command_rate_hz, contract.control_dt_s)
        command_dt_s = contract.control_dt_s / self.commands_per_step
        self.scheduler = DeadlineScheduler(command_dt_s)
        self._next_policy_cycle = 0  # scheduler cycle index of the next policy step
        self._diagnostics_window = int(DIAGNOSTICS_WINDOW_S / command_dt_s)
        # A benchmark run keeps every cycle (an hour at 500 Hz); otherwise the diagnostics window.
        self.stats = LoopStats(command_dt_s, window=2_000_000 if self.params.timing_log_path
                               else self._diagnostics_window)
        self.get_logger().info(
            f"policy {self.params.policy_path} for the {contract.robot}: {contract.obs_size} obs -> "
            f"{contract.action_size} actions at {1 / contract.control_dt_s:.0f} Hz, LowCmd streamed at "
            f"{1 / command_dt_s:.0f} Hz; estimator terms: {list(contract.estimator_terms) or 'none'}"
        )

        self._state_pub = self.create_publisher(String, interfaces.POLICY_STATE, STATE_HISTORY)
        self._joint_pub = self.create_publisher(JointState, interfaces.JOINT_STATES, 10)
        self._imu_pub = self.create_publisher(Imu, interfaces.IMU, 10)
        self._diag_pub = self.create_publisher(DiagnosticArray, interfaces.DIAGNOSTICS, 10)
        self.create_subscription(Twist, interfaces.CMD_VEL, self._on_cmd_vel, 10)
        self.create_subscription(String, interfaces.SAFETY_STATE, self._on_safety_state, LATCHED)
        if self.controller.runner.needs_base_lin_vel:
            self.create_subscription(Odometry, interfaces.ODOM, self._on_odom, 10)
        self.create_service(Trigger, interfaces.SRV_STAND_UP, self._on_stand_up)
        self.create_service(Trigger, interfaces.SRV_PRE_FLIGHT, self._on_pre_flight)
        self.create_service(Trigger, interfaces.SRV_DRY_RUN_REPORT, self._on_dry_run_report)
        for request, name in (("walk", interfaces.SRV_WALK),
                              ("stop_walk", interfaces.SRV_STOP_WALK), ("damp", interfaces.SRV_DAMP),
                              ("reset", SRV_RESET)):
            self.create_service(Trigger, name, self._trigger_handler(request))
        # A multi-gait policy: one Trigger per gait its contract lists (policy/gait/trot, ...).
        for gait in contract.gaits:
            self.create_service(Trigger, interfaces.SRV_GAIT_PREFIX + gait.name,
                                self._trigger_handler(f"gait:{gait.name}"))
        self._gait_pub = self.create_publisher(String, interfaces.POLICY_GAIT, LATCHED)
        # While walking, the gait schedule's stance feet each policy step: the estimator's contacts when the
        # foot sensors cannot be used.
        self._stance_pub = self.create_publisher(UInt8MultiArray, interfaces.POLICY_GAIT_STANCE, 10)
        self._stance_msg = UInt8MultiArray()
        self._scheduled: np.ndarray | None = None
        self._published_gait: str | None = None
        self.create_timer(self.params.diagnostics_period_s, self._publish_diagnostics)
        # Events are logged on the executor when the control thread signals new ones: a polling
        # timer would wake the executor (≈ 0.5 ms of Python each time) whether or not there are any.
        self._events_guard = self.create_guard_condition(self._log_events)
        self._events_logged = 0
        self._events_signalled = 0
        # JointState / Imu every n-th cycle: they are for people and tools, not for control.
        self.feedback_every_n_cycles = feedback_every_n_cycles(self.params.feedback_rate_hz, command_dt_s)
        self._published_state: PolicyState | None = None
        self._loop_summary: dict[str, float] = {}  # made by the control thread, published by the executor
        self._next_summary_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._control_loop, name="control_loop", daemon=True)
        self._link: RobotLink | None = None

    # ---- the wire ---------------------------------------------------------------------------
    def start(self) -> None:
        """Open the robot's link (Go2: DDS, the sport mode released if asked; Go1: UDP, up once the robot
        answers), go real-time, freeze the start-up heap, run."""
        self._link = open_link(self.params, MotorTargets.damping(self.params.damping_kd), self.scheduler.period_s,
                               self.get_logger().info)
        if self.params.realtime_priority:
            # Every thread of this process (ROS executor, DDS) one step below the control thread. The control
            # thread needs the GIL; if a normal-priority thread holding it were preempted by other processes, the
            # real-time thread would wait on it (priority inversion through the GIL).
            enter_realtime(max(1, self.params.realtime_priority - 1), self.get_logger())
        frozen = freeze_startup_objects()
        self.get_logger().info(f"{frozen} start-up objects frozen out of garbage collection")
        self._thread.start()

    def stop(self) -> None:
        """Stop the control thread, stream damping for SHUTDOWN_DAMPING_S, save the timings if asked."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
        if self._link is not None:
            damping = MotorTargets.damping(self.params.damping_kd)
            for _ in range(max(1, round(SHUTDOWN_DAMPING_S / self.scheduler.period_s))):
                self._link.write(damping)
                time.sleep(self.scheduler.period_s)
            self._link.close()
        if self.params.timing_log_path:
            self._save_timing(Path(self.params.timing_log_path))
        if self.controller.dry_run is not None:
            self.get_logger().info(self.controller.dry_run.report(self.controller.runner.contract.control_dt_s))

    def _control_loop(self) -> None:
        # The control loop preempts other processes (and this process's other threads) when its deadline comes.
        enter_realtime(self.params.realtime_priority, self.get_logger(), this_thread_only=True)
        self.scheduler.start()
        source_time_s = None  # the state's stamp: its publisher's clock (Go2 DDS), its receipt here (Go1 UDP)
        targets = MotorTargets.damping(self.params.damping_kd)  # until the first controller cycle
        state = self.controller.state
        last_wake_s = None
        while not self._stop.is_set():
            tick = self.scheduler.wait()
            if last_wake_s is not None and tick.wake_s - last_wake_s > self.controller.config.own_stall_s:
                self.controller.on_own_stall(tick.wake_s - last_wake_s, tick.wake_s)
            last_wake_s = tick.wake_s
            inference_s = latency = None
            policy_step = tick.index >= self._next_policy_cycle
            try:
                if policy_step:
                    # Steps stay on a whole multiple of the stream even after skipped deadlines.
                    self._next_policy_cycle = (tick.index // self.commands_per_step + 1) * self.commands_per_step
                    sample = self._link.take()
                    if sample is not None:
                        self.controller.on_lowstate(sample.state, tick.wake_s, sample.received, sample.crc_ok)
                        source_time_s = sample.source_time_s
                        if (recorder := self._feed_recorder) is not None:
                            recorder.add(sample.state, tick.wake_s, crc_ok=sample.crc_ok, received=sample.received)
                    damp_on_protection(self._link, self.controller, tick.wake_s)
                if policy_step or self.controller.damping_pending():
                    out = self.controller.cycle(tick.wake_s)
                    targets, state, inference_s = out.targets, out.state, out.inference_s
                    self._scheduled = out.scheduled_stance
                # Inside the guard: targets the robot's packet cannot carry (Go1WireError) are refused
                # before anything is sent, and damping goes out instead.
                self._link.write(targets)
            except Exception as e:  # a bug must never leave the motors stiff and silent
                if self.controller.state is not PolicyState.DAMP:
                    self.controller.request("damp", tick.wake_s, source=f"control-loop error {type(e).__name__}: {e}")
                targets, state = MotorTargets.damping(self.params.damping_kd), PolicyState.DAMP
                self._link.write(targets)
            written = time.monotonic()
            if policy_step and source_time_s is not None:
                # State-to-command latency: from the state's publication (Go2; the Go1's UDP carries no stamp:
                # from its receipt) to this LowCmd. The Go2's stamp is the publisher's clock, so the number is
                # exact in rehearsal (one host) and indicative on the robot.
                latency = time.time() - source_time_s
            self.stats.record(tick, written - tick.wake_s, inference_s, latency)
            self._after_lowcmd(tick, state)

    # ---- ROS side -----------------------------------------------------------------------------
    def _after_lowcmd(self, tick: Tick, state: PolicyState) -> None:
        """The cycle's ROS side, in its slack after the LowCmd went out."""
        try:
            if state is not self._published_state:  # every change, at once: operators and the monitor act on it
                self._state_pub.publish(String(data=state.value))
                self._published_state = state
            if self.controller.gait != self._published_gait:
                self._gait_pub.publish(String(data=self.controller.gait))
                self._published_gait = self.controller.gait
            if (scheduled := self._scheduled) is not None:
                self._scheduled = None
                self._stance_msg.data = [int(v) for v in scheduled]
                self._stance_pub.publish(self._stance_msg)
            if tick.index % self.feedback_every_n_cycles == 0:
                self._publish_robot_state()
            if tick.wake_s >= self._next_summary_s and self.stats.cycles >= 2:  # a period needs two wake-ups
                # Computed here rather than on the executor, where these percentiles (≈ 1 ms) held the GIL
                # when the next cycle woke: a 0.6-0.8 ms late wake-up every second.
                self._loop_summary = self.stats.summary(last=self._diagnostics_window)
                self._next_summary_s = tick.wake_s + self.params.diagnostics_period_s
            if self.controller.preflight_wanted and (self._preflight_thread is None
                                                     or not self._preflight_thread.is_alive()):
                # A stand-up asked without a pre-flight (the gamepad's chord): run one off this thread, then stand.
                self._preflight_thread = threading.Thread(target=self._preflight_then_stand_up, name="preflight",
                                                          daemon=True)
                self._preflight_thread.start()
            if len(self.controller.events) != self._events_signalled:
                self._events_signalled = len(self.controller.events)
                self._events_guard.trigger()
        except Exception as e:  # best effort: it must never stop the LowCmd stream
            if self.context.ok():  # (quiet once the ROS context is gone, should this thread outlive stop())
                self.get_logger().error(f"publishing feedback failed: {e}", throttle_duration_sec=5.0)

    def _publish_robot_state(self) -> None:
        robot = self.controller.latest_state
        if robot is None:
            return
        stamp = self.get_clock().now().to_msg()
        joints = JointState(name=self.joint_names, position=robot.joint_pos.tolist(),
                            velocity=robot.joint_vel.tolist(), effort=robot.joint_tau_est.tolist())
        joints.header.stamp = stamp
        self._joint_pub.publish(joints)
        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, "imu"
        q, w, a = imu.orientation, imu.angular_velocity, imu.linear_acceleration
        q.w, q.x, q.y, q.z = (float(v) for v in robot.quat_wxyz)
        w.x, w.y, w.z = (float(v) for v in robot.gyro_b)
        a.x, a.y, a.z = (float(v) for v in robot.accel_b)
        self._imu_pub.publish(imu)

    # ---- pre-flight ---------------------------------------------------------------------------
    def run_preflight(self) -> PreflightReport:
        """Record a second of rt/lowstate, judge it, log the table, tell the controller; returns the report."""
        with self._preflight_lock:
            capture = self._preflight_capture(PREFLIGHT_DURATION_S)
            p = self.params
            serial = capture.health.serial if capture.health is not None else None
            calibration, problem = load_calibration(p.foot_force_calibration_dir, p.robot, serial) \
                if p.foot_force_units == "raw" else (None, "")
            report = run_preflight(capture, self.preflight_limits, robot=p.robot, foot_force_units=p.foot_force_units,
                                   calibration=calibration, calibration_problem=problem)
            # One call site per severity (rclpy 7 raises when one site logs at a second severity).
            if report.passed:
                self.get_logger().info("pre-flight:\n" + report.table())
            else:
                self.get_logger().warning("pre-flight:\n" + report.table())
            self.controller.on_preflight(report, time.monotonic())
            return report

    def _preflight_capture(self, duration_s: float):
        capture = getattr(self._link, "preflight_capture", None)
        if capture is not None:
            return capture(duration_s)
        # The Go1's socket has one reader, the control loop: it feeds the recorder while the capture lasts.
        recorder = PreflightRecorder(duration_s)
        refused_before = getattr(self._link, "refused", 0)
        self._feed_recorder = recorder
        deadline = time.monotonic() + duration_s + 0.5
        while not recorder.done(time.monotonic()) and time.monotonic() < deadline:
            time.sleep(0.02)
        self._feed_recorder = None
        recorder.crc_checked += recorder.received
        recorder.crc_failures += getattr(self._link, "refused", 0) - refused_before
        return recorder.capture()

    def _preflight_then_stand_up(self) -> None:
        if self.run_preflight().passed:
            self.controller.request("stand_up", time.monotonic(), source="gamepad (pre-flight passed)")

    def _on_stand_up(self, _req: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self.params.preflight_before_stand_up and self.controller.state is PolicyState.PASSIVE:
            self.run_preflight()
        result = self.controller.request("stand_up", time.monotonic())
        response.success, response.message = result.accepted, result.message
        return response

    def _on_pre_flight(self, _req: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        report = self.run_preflight()
        response.success, response.message = report.passed, report.table()
        return response

    def _on_dry_run_report(self, _req: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        tracker = self.controller.dry_run
        if tracker is None:
            response.success, response.message = False, "not a dry run (dry_run_gain_fraction is 0)"
        else:
            response.success = bool(tracker.joints()) and not tracker.suspects()
            response.message = tracker.report(self.controller.runner.contract.control_dt_s)
        return response

    def _trigger_handler(self, request: str):
        def handle(_req: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            result = self.controller.request(request, time.monotonic())
            response.success, response.message = result.accepted, result.message
            return response

        return handle

    def _on_cmd_vel(self, msg: Twist) -> None:
        self.controller.on_cmd_vel(msg.linear.x, msg.linear.y, msg.angular.z, time.monotonic())

    def _on_odom(self, msg: Odometry) -> None:
        v = msg.twist.twist.linear  # REP 105: the twist is in base_link, the body frame the policy expects
        self.controller.on_base_lin_vel(np.array([v.x, v.y, v.z]), time.monotonic())

    def _on_safety_state(self, msg: String) -> None:
        try:
            verdict = json.loads(msg.data)
            ok, cause = verdict["state"] == "OK", str(verdict.get("cause", ""))
        except (ValueError, KeyError, TypeError):
            ok, cause = False, f"unreadable safety state {msg.data!r}"  # fail safe
        self.controller.on_safety_state(ok, cause or "DAMP", time.monotonic())

    def _log_events(self) -> None:
        events = self.controller.events
        logger = self.get_logger()
        for _, what in events[self._events_logged:]:
            # One call site per severity: rclpy's logger keeps a context per call site (code position)
            # and Jazzy's rclpy 7 raises when one site logs at a second severity, which would kill the node
            # at its first DAMP after an INFO event (Kilted's deprecated `warn` wrapper hid that).
            if "DAMP" in what:
                logger.warning(what)
            else:
                logger.info(what)
        self._events_logged = len(events)

    def _publish_diagnostics(self) -> None:
        summary = self._loop_summary
        state = self.controller.state
        status = DiagnosticStatus(name=f"{NODE_NAME}: control loop", hardware_id=self.params.robot)
        issues, input_facts = self.controller.input_report(time.monotonic())
        if state is PolicyState.DAMP:
            status.level, status.message = DiagnosticStatus.ERROR, f"DAMP: {self.controller.fsm.damp_cause}"
        elif issues:
            # Inputs the node adapts to (a frozen tick, stuck foot sensors) or refuses to stand or walk on.
            status.level = DiagnosticStatus.WARN
            status.message = f"{state.value}; inputs: " + "; ".join(
                f"{cause}" + (" (gait clock on this computer's clock)" if cause == CLOCK_FROZEN else "")
                for cause in issues)
        elif summary.get("period_dev_p99_ms", 0.0) > 1.0:
            status.level, status.message = DiagnosticStatus.WARN, f"{state.value}; loop jitter above 1 ms"
        else:
            status.level, status.message = DiagnosticStatus.OK, state.value
        period_s = self.scheduler.period_s
        values = {"state": state.value, "command_rate_hz": f"{1 / period_s:g}",
                  "policy_rate_hz": f"{1 / (period_s * self.commands_per_step):g}",
                  "overruns": self.scheduler.overruns, "skipped": self.scheduler.skipped}
        values.update({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in summary.items()})
        values.update(input_facts)
        values.update({f"input_{cause}": issue.detail for cause, issue in issues.items()})
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(array)

    def _save_timing(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        summary = dict(self.stats.summary(), overruns=self.scheduler.overruns, skipped=self.scheduler.skipped,
                       command_period_ms=self.scheduler.period_s * 1e3,
                       policy_period_ms=self.scheduler.period_s * self.commands_per_step * 1e3)
        np.savez(path, **{f: self.stats.series(f) for f in LoopStats.FIELDS}, summary=json.dumps(summary))


def main(argv: list[str] | None = None) -> int:
    # Line-buffered output so a parent process (the demo, a test) sees messages as they happen.
    sys.stdout.reconfigure(line_buffering=True)
    # The control thread must get the GIL soon after it wakes; the hand-over interval shows up
    # directly as loop jitter (Python's default 5 ms; 0.5 ms gave a 500 Hz stream 0.6 ms p99 lateness,
    # 0.1 ms gives 0.29 ms: bench/control_loop.py).
    sys.setswitchinterval(0.0001)
    return run_node(PolicyNode, NODE_NAME, argv, errors=(ContractError, SportModeError, LinkError))


if __name__ == "__main__":
    raise SystemExit(main())
