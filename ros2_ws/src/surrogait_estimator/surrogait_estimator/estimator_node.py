"""estimator_node: the robot's LowState in, odometry + contacts + diagnostics out.

    estimator_node --ros-args --params-file config/estimator.yaml

Go2: reads rt/lowstate through its own cyclonedds reader on the unitree_sdk2 DDS domain. Go1: reads the
LowState packets the safety monitor (the robot's only UDP peer) forwards to 127.0.0.1:`udp_lowstate_port`
(go1_lowstate_stream). Not the policy node's JointState/Imu: it sees exactly the samples the policy sees,
at the robot's full 500 Hz with the foot forces (JointState/Imu carry neither foot force nor the robot's
tick), and it keeps running when the policy node is stopped or restarted, which is when odometry is most
useful for debugging.

Publishes (names from surrogait_core.interfaces):
  odom                 nav_msgs/Odometry, header odom, child base_link (REP 105): pose in odom,
                       twist in base_link, both with covariances; at most every `publish_decimation`-th
                       accepted sample. Stamped with the time of the robot sample it describes (this
                       host's clock), not the time of publication. pose.covariance[14] (z variance)
                       is the filter's own while the height can be trusted and >= 1 m^2 while it
                       cannot (surrogait_core.estimator.trust: the safety monitor's input).
  estimator/contacts   std_msgs/UInt8MultiArray, 1 = stance, SDK leg order FR, FL, RR, RL
  /diagnostics         diagnostic_msgs/DiagnosticArray: samples taken, skipped, lost and refused (by
                       reason; a Go1 packet of the wrong length or CRC as rejected_packet_<reason>),
                       latency, height trust, filter health

TF: tf2_ros and tf2_msgs are not installable here (no wheels), so no /tf is broadcast; the
odometry message carries the same odom -> base_link transform (pose) for a relay to re-publish.

Threads: the estimator thread sleeps until LowState samples wait in the reader, takes them all,
processes the newest it has time for (`CatchUpBudget`; older ones are skipped and counted) and
publishes; the main thread spins the executor (diagnostics timer). They share one lock.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from rclpy.node import Node
from std_msgs.msg import MultiArrayDimension, UInt8MultiArray
from std_srvs.srv import Trigger

from surrogait_core import interfaces
from surrogait_core.estimator import CatchUpBudget, HeightTrust, ProprioSample, SampleAge, StateEstimator
from surrogait_core.estimator.estimator import ERROR, OK, WARN, rotation_from_quat_wxyz
from surrogait_core.inputs.foot_force import (
    NONE,
    RAW,
    CalibrationError,
    FootForceSource,
    calibration_path,
    serial_name,
    standing_foot_loads_n,
    standing_step,
    unloaded_step,
)
from surrogait_core.inputs.sample_clock import SampleClock
from surrogait_core.robot_links import UDP, robot_link
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.runtime.realtime import enter_realtime, freeze_startup_objects
from surrogait_core.runtime.ros_node import EXIT_FAILED, declare_params, report_error, run_node, spin_until
from surrogait_core.wire import go1_wire
from surrogait_core.wire.go2_wire import LowStateView
from surrogait_estimator.covariance import pose_covariance, twist_covariance
from surrogait_estimator.go1_lowstate_stream import LOOPBACK, Go1LowStateStream
from surrogait_estimator.lowstate_stream import LowStateStream, RawLowState
from surrogait_estimator.params import PARAMETERS, EstimatorNodeConfig  # noqa: F401  (PARAMETERS: launch test)

NODE_NAME = "estimator_node"
CALIBRATION_SAMPLES = 250  # 0.5 s at 500 Hz per calibration step
_LEVEL_BYTES = {OK: b"\x00", WARN: b"\x01", ERROR: b"\x02"}


class EstimatorNode(Node):
    """The estimator, its lock, its publishers and its LowState reader; `run` adds the estimator thread."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self.config = config = declare_params(self, EstimatorNodeConfig)
        try:
            self.spec = load_robot_spec(config.robot)
            self.estimator = StateEstimator(self.spec, config.estimator)
        except (OSError, ValueError) as e:  # a missing or malformed robot description
            raise ParamError(f"cannot load the {config.robot} model: {e}") from e
        self.clock = SampleClock(name="rt/lowstate" if config.robot == "go2" else "LowState")
        self.feet = FootForceSource(config.foot_force_units, config.robot, config.foot_force_calibration_dir)
        self._feet_reason_logged = self.feet.reason
        self._clock_warned = False
        self._robot_known = False
        self._crc = None  # the Go2's LowState CRC (the Go1's packets are checked by their stream)
        self.crc_refused = 0
        self._schedule: tuple[np.ndarray, float] | None = None  # the policy's gait schedule, when it arrived
        self._collect: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None  # a calibration step's samples
        self._collect_n = 0
        self._collected = threading.Event()
        self.catch_up = CatchUpBudget(config.catch_up_budget_s)
        self.sample_age = SampleAge()
        self.lock = threading.Lock()
        self.received = 0
        self._accepted_since_publish = 0
        self._last_receive_mono: float | None = None
        self._last_take_mono: float | None = None
        self._last_diag_mono = 0.0
        self._latency_s: float | None = None
        self._max_latency_s = 0.0
        self._trust: HeightTrust | None = None  # the verdict on the latest published estimate
        self._failure: list[BaseException] = []  # what ended the estimator thread, if anything did
        self._refused_seen = 0  # packets the stream refused (Go1: length, CRC), as of the last take
        self._last_rejection = ""  # the latest refusal of either kind, once the stream has refused packets

        self._odom_pub = self.create_publisher(Odometry, interfaces.ODOM, 10)
        self._contacts_pub = self.create_publisher(UInt8MultiArray, interfaces.CONTACTS, 10)
        self._diag_pub = self.create_publisher(DiagnosticArray, interfaces.DIAGNOSTICS, 10)
        self._odom = Odometry()
        self._odom.header.frame_id = config.odom_frame
        self._odom.child_frame_id = config.base_frame
        self._contacts = UInt8MultiArray()
        self._contacts.layout.dim = [MultiArrayDimension(label="FR,FL,RR,RL", size=4, stride=4)]
        self.create_timer(1.0 / config.diagnostics_rate_hz, self.publish_diagnostics)
        self.create_subscription(UInt8MultiArray, interfaces.POLICY_GAIT_STANCE, self._on_gait_stance, 10)
        self.create_service(Trigger, interfaces.SRV_CALIBRATE_FEET_UNLOADED, self._on_calibrate_unloaded)
        self.create_service(Trigger, interfaces.SRV_CALIBRATE_FEET_STANDING, self._on_calibrate_standing)

        enter_realtime(config.realtime_priority, self.get_logger())
        self.link = robot_link(config.robot)
        self.lowstate_name = self.link.lowstate
        if self.link.protocol == UDP:  # forwarded by the safety monitor, the link's gateway
            self._stream, self.decode = self._open_go1_lowstate(config.udp_lowstate_port), go1_wire.decode_lowstate
            source = f"Go1 LowState on UDP {LOOPBACK}:{config.udp_lowstate_port} (forwarded by the safety monitor)"
        else:
            self._stream, self.decode = self._open_dds_lowstate(config)
            from surrogait_core.wire.go2_lowstate_layout import LowStateCrc

            self._crc = LowStateCrc()
            source = f"rt/lowstate on DDS domain {config.dds_domain} ({config.network_interface})"
        self.get_logger().info(
            f"state estimator for {config.robot}: {source} -> {interfaces.ODOM} every {config.publish_decimation} "
            f"samples, {interfaces.CONTACTS}, {interfaces.DIAGNOSTICS} at {config.diagnostics_rate_hz:g} Hz"
        )

    @staticmethod
    def _open_dds_lowstate(config: EstimatorNodeConfig) -> tuple[LowStateStream, Callable[[bytes], LowStateView]]:
        """The Go2's rt/lowstate reader on unitree_sdk2 DDS and its CDR decoder."""
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize

        from surrogait_core.wire.go2_wire_image import LowStateDecoder

        try:
            # Configures the DDS domain (interface included) that the participant below joins.
            ChannelFactoryInitialize(config.dds_domain, config.network_interface)
            stream = LowStateStream(DomainParticipant(config.dds_domain))
        except Exception as e:
            raise ParamError(f"cannot start DDS on domain {config.dds_domain}, interface "
                             f"{config.network_interface!r}: {e}") from e
        return stream, LowStateDecoder().decode

    @staticmethod
    def _open_go1_lowstate(port: int) -> Go1LowStateStream:
        try:
            return Go1LowStateStream(port)
        except OSError as e:
            raise ParamError(f"cannot receive the Go1's LowState on UDP {LOOPBACK}:{port} ({e}): is another "
                             "estimator_node running? udp_lowstate_port must be the port the safety monitor "
                             "forwards LowState to") from e

    def run(self, stop: threading.Event) -> int:
        """The estimator thread, and the executor on this thread, until `stop` (SIGINT/SIGTERM or a failure)."""
        worker = threading.Thread(target=self._estimate_while, args=(stop,), name="estimator", daemon=True)
        freeze_startup_objects()  # full collections over the start-up heap stalled it ~45 ms mid-walk (see realtime)
        worker.start()
        try:
            spin_until(self, stop)
        finally:
            stop.set()
            worker.join(timeout=2.0)
            self._stream.close()
            health = self.estimator.health()
            self.get_logger().info(
                f"stopped: {self.received} samples received, {health.accepted} accepted, "
                f"{health.skipped_samples} skipped (catching up), {health.dropped_samples} lost before reaching "
                f"this node, {health.rejected_total + self._stream.refused_total + self.crc_refused} rejected "
                f"{health.rejected | self._packet_refusals() | {'crc': self.crc_refused}}")
        if self._failure:
            report_error(NODE_NAME, f"reading {self.lowstate_name} failed: {self._failure[0]!r}")
            return EXIT_FAILED
        return 0

    def _estimate_while(self, stop: threading.Event) -> None:
        """The estimator thread: sleep until samples wait, take them all, hand them over; until `stop`."""
        try:
            while not stop.is_set():
                if self._stream.wait(0.1):
                    self.on_batch(self._stream.take_all())
                    self._count_refused_packets()
        except Exception as e:  # reported by the main thread, which then exits with an error
            self._failure.append(e)
            stop.set()

    # -- estimator thread ------------------------------------------------------------------------
    def _count_refused_packets(self) -> None:
        """Packets the stream refused in its last take (Go1: length, CRC): received, counted by reason,
        reported at once (at most every 20 ms) as the estimator's own refusals are."""
        refused = self._stream.refused_total
        if refused == self._refused_seen:
            return
        with self.lock:
            self.received += refused - self._refused_seen
            self._refused_seen = refused
            self._last_rejection = f"packet_{self._stream.last_refusal}"
        if time.monotonic() - self._last_diag_mono > 0.02:
            self.publish_diagnostics()

    def _packet_refusals(self) -> dict[str, int]:
        return {f"packet_{reason}": n for reason, n in self._stream.refused.items()}

    def on_batch(self, batch: list[RawLowState]) -> None:
        """Every sample that waited in the reader, oldest first, taken just now."""
        if not batch:
            return
        take_mono = time.monotonic()
        with self.lock:
            since_take = None if self._last_take_mono is None else take_mono - self._last_take_mono
            self._last_take_mono = self._last_receive_mono = take_mono
            newest_age_s = self.sample_age.at_take(batch[-1].source_time_s, time.time(), since_take)
            self.received += len(batch)
            keep = self.catch_up.plan(len(batch))
            if keep < len(batch):
                self.estimator.note_skipped(len(batch) - keep)
            new_rejection, published = False, None
            scheduled = self._fresh_schedule(take_mono)
            for raw in batch[len(batch) - keep :]:
                if self._crc is not None and not self.config.allow_lowstate_without_crc and \
                        not self._crc.check(raw.data):
                    self.crc_refused += 1
                    self._last_rejection = "crc"
                    new_rejection = True
                    continue
                if not self._robot_known:
                    self._robot_known = True
                    self.feet.on_robot(self._crc.health(raw.data).serial if self._crc is not None else None)
                view = self.decode(raw.data)
                t = self.clock.time_s(view.tick_ms, raw.source_time_s)
                forces = self.feet.newtons(view.foot_force, view.joint_vel, t)
                sample = ProprioSample.from_lowstate(view, time_s=t)
                if forces is not None:
                    sample.foot_force = forces
                if self._collect is not None and len(self._collect) < self._collect_n:
                    self._collect.append((view.foot_force, view.joint_pos, view.quat_wxyz))
                    if len(self._collect) >= self._collect_n:
                        self._collected.set()
                est = self.estimator.step(sample, scheduled, contact_from_kinematics=forces is None)
                if est is None:
                    new_rejection = True
                    continue
                self._accepted_since_publish += 1
                published = (est, raw)
            if published is not None and self._accepted_since_publish >= self.config.publish_decimation:
                self._accepted_since_publish = 0
                est, raw = published
                self._publish_estimate(est, newest_age_s + (batch[-1].source_time_s - raw.source_time_s), take_mono)
            if new_rejection and self._last_rejection != "crc":
                self._last_rejection = self.estimator.health().last_rejection
            self.catch_up.record(keep, time.monotonic() - take_mono)
            notes = self._input_changes()
        for note in notes:
            self.get_logger().warning(note)
        # A refused sample is reported at once (at most every 20 ms), not only at the next tick.
        if (new_rejection or notes) and time.monotonic() - self._last_diag_mono > 0.02:
            self.publish_diagnostics()

    def _input_changes(self) -> list[str]:
        """What changed about the inputs (clock fallback, foot forces usable or not): log lines. Under the lock."""
        notes = []
        if self.clock.on_host and not self._clock_warned:
            self._clock_warned = True
            notes.append(f"lowstate_clock_frozen: {self.clock.cause}")
        if self.feet.reason != self._feet_reason_logged:
            self._feet_reason_logged = self.feet.reason
            notes.append("foot forces usable again: contacts from foot force" if not self.feet.reason else
                         f"foot forces unusable ({self.feet.reason}): contacts from leg kinematics and the gait "
                         "schedule")
        return notes

    def _fresh_schedule(self, now_mono: float) -> np.ndarray | None:
        schedule = self._schedule
        if schedule is None or now_mono - schedule[1] > self.config.gait_schedule_timeout_s:
            return None
        return schedule[0]

    def _on_gait_stance(self, msg: UInt8MultiArray) -> None:
        if len(msg.data) == 4:
            self._schedule = (np.array([bool(v) for v in msg.data]), time.monotonic())

    # -- foot-force calibration (executor thread) --------------------------------------------------
    def _collect_samples(self, n: int, timeout_s: float = 3.0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        with self.lock:
            self._collected.clear()
            self._collect, self._collect_n = [], n
        self._collected.wait(timeout_s)
        with self.lock:
            samples, self._collect = self._collect, None
        return samples

    def _calibration_refusal(self) -> str | None:
        if self.config.foot_force_units != RAW:
            return f"foot_force_units is {self.config.foot_force_units}: only raw sensor counts are calibrated"
        if not self._robot_known:
            return f"no {self.lowstate_name} yet: is the robot on?"
        return None

    def _save_calibration(self, calibration) -> str:
        path = calibration.save(calibration_path(self.config.foot_force_calibration_dir, self.config.robot,
                                                 self.feet.serial))
        with self.lock:
            self.feet.set_calibration(calibration)
        return str(path)

    def _on_calibrate_unloaded(self, _req, response):
        """Offsets: the robot lying down (or hung), feet unloaded and still."""
        response.success = False
        if (refusal := self._calibration_refusal()) is not None:
            response.message = refusal
            return response
        samples = self._collect_samples(CALIBRATION_SAMPLES)
        try:
            calibration = unloaded_step(np.array([s[0] for s in samples]), self.config.robot,
                                        serial_name(self.feet.serial))
        except CalibrationError as e:
            response.message = f"unloaded step refused: {e}"
            return response
        return self._saved(response, calibration, lambda path: (
            f"foot-force offsets {np.round(calibration.offset_counts, 1).tolist()} counts saved to {path}; "
            f"stand the robot up, then call {interfaces.SRV_CALIBRATE_FEET_STANDING}"))

    def _on_calibrate_standing(self, _req, response):
        """Gains: the robot standing still on four feet, against the model's load on each."""
        response.success = False
        if (refusal := self._calibration_refusal()) is not None:
            response.message = refusal
            return response
        calibration = self.feet.calibration
        if calibration is None:
            response.message = (f"no unloaded step yet for this robot: lay it down (feet unloaded) and call "
                                f"{interfaces.SRV_CALIBRATE_FEET_UNLOADED} first")
            return response
        samples = self._collect_samples(CALIBRATION_SAMPLES)
        try:
            raw = np.array([s[0] for s in samples])
            joint_pos = np.mean([s[1] for s in samples], axis=0)
            quat = np.mean([s[2] for s in samples], axis=0)
            with self.lock:  # the estimator thread shares the kinematics' Pinocchio data
                kin = self.estimator.kinematics
                rot = rotation_from_quat_wxyz(quat)
                feet_w = kin.foot_positions(joint_pos) @ rot.T
                com_w = rot @ kin.com_b(joint_pos)
            loads = standing_foot_loads_n(self.spec.total_mass_kg, com_w, feet_w, self.config.gravity_mps2)
            calibration = standing_step(calibration, raw, loads)
        except (CalibrationError, ValueError) as e:
            response.message = f"standing step refused: {e}"
            return response
        return self._saved(response, calibration, lambda path: (
            f"foot-force gains {np.round(calibration.newtons_per_count, 3).tolist()} N/count (model "
            f"loads {np.round(loads, 1).tolist()} N) saved to {path}: contacts from foot force"))

    def _saved(self, response, calibration, saying):
        """Save a calibration step and answer its service: success, `saying(path)`, logged."""
        path = self._save_calibration(calibration)
        response.success = True
        response.message = saying(path)
        self.get_logger().info(response.message)
        return response

    def _publish_estimate(self, est, age_at_take_s: float, take_mono: float) -> None:
        """Publish `est`, whose sample was `age_at_take_s` old when its batch was taken at `take_mono`."""
        # The pose is the robot's at its sample's time: stamp that instant, on this host's clock. The clock is
        # read before the age is: a stall in between (this process descheduled) makes the estimate look older
        # than it is, never fresher. Read the other way round, a trusted estimate from before a 0.3 s stall was
        # once stamped after it (test_a_stalled_estimator_..., rehearsal log 2026-12-07).
        now_ns = self.get_clock().now().nanoseconds
        latency_s = age_at_take_s + (time.monotonic() - take_mono)
        trust = self.estimator.height_trust(latency_s)
        self._trust, self._latency_s = trust, latency_s
        self._max_latency_s = max(self._max_latency_s, latency_s)
        m = self._odom
        stamp_ns = now_ns - int(latency_s * 1e9)
        m.header.stamp.sec, m.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        pos, q = m.pose.pose.position, m.pose.pose.orientation
        pos.x, pos.y, pos.z = (float(v) for v in est.position_w)
        q.w, q.x, q.y, q.z = (float(v) for v in est.quat_wxyz)
        m.pose.covariance = pose_covariance(est, self.config.orientation_std_rad, trust.reported_z_var_m2)
        lin, ang = m.twist.twist.linear, m.twist.twist.angular
        lin.x, lin.y, lin.z = (float(v) for v in est.base_lin_vel_b)
        ang.x, ang.y, ang.z = (float(v) for v in est.base_ang_vel_b)
        m.twist.covariance = twist_covariance(est, self.config.gyro_std_radps)
        self._odom_pub.publish(m)
        self._contacts.data = [int(s) for s in est.stance]
        self._contacts_pub.publish(self._contacts)

    # -- executor thread (and the estimator thread, on rejections) -------------------------------
    def publish_diagnostics(self) -> None:
        with self.lock:
            now = time.monotonic()
            self._last_diag_mono = now
            health = self.estimator.health()
            est = self.estimator.last_estimate
            trust = self._trust
            silent_s = None if self._last_receive_mono is None else now - self._last_receive_mono
            level, message = health.level, health.message
            packet_refusals = self._packet_refusals()
            last_rejection = self._last_rejection if self._refused_seen else health.last_rejection
            if silent_s is None:
                level, message = ERROR, f"no {self.lowstate_name} yet on {self._source_hint()}"
            elif silent_s > self.config.lowstate_timeout_s:
                level, message = ERROR, f"no {self.lowstate_name} for {silent_s:.2f} s"
            elif level == OK and (self.clock.on_host or (self.feet.reason and self.feet.units != NONE)):
                level = WARN
                message = "; ".join(m for m in (
                    "tracking" if health.level == OK else health.message,
                    "lowstate_clock_frozen: time from the samples' stamps" if self.clock.on_host else "",
                    f"contacts from leg kinematics ({self.feet.reason})" if self.feet.reason else "") if m)
            elif level == OK and self._latency_s is not None and (
                    self._latency_s > self.config.estimator.trust.max_latency_s):
                level, message = WARN, f"behind the stream: estimate {self._latency_s * 1e3:.0f} ms old"
            values = {
                "received": self.received,
                "accepted": health.accepted,
                "skipped_samples": health.skipped_samples,
                "rejected_total": health.rejected_total + sum(packet_refusals.values()) + self.crc_refused,
                "rejected_crc": self.crc_refused,
                "clock_source": self.clock.source,
                "foot_force": self.feet.units if not self.feet.reason else f"unusable: {self.feet.reason}",
                **{f"rejected_{k}": v for k, v in (health.rejected | packet_refusals).items()},
                "last_rejection": last_rejection,
                "dropped_samples": health.dropped_samples,
                "long_gaps": health.long_gaps,
                "filter_resets": health.resets,
                "samples_since_reset": health.samples_since_reset,
                "nis_per_dof": f"{health.nis_per_dof:.3f}",
                "slip_rejections": health.slip_rejections,
                "latency_ms": "" if self._latency_s is None else f"{self._latency_s * 1e3:.1f}",
                "latency_max_ms": f"{self._max_latency_s * 1e3:.1f}",
                "cost_per_sample_ms": f"{self.catch_up.cost_s * 1e3:.3f}",
                "height_trusted": "false" if trust is None else str(trust.trusted).lower(),
                "height_untrusted_reason": "nothing published yet" if trust is None else trust.reason,
            }
            if est is not None:
                values["velocity_std_mps"] = f"{float(np.sqrt(np.max(np.diag(est.base_lin_vel_cov_b)))):.4f}"
                values["height_m"] = f"{est.height_m:.4f}"
                values["height_std_m"] = f"{float(np.sqrt(est.position_cov_w[2, 2])):.4f}"
                values["stance_FR_FL_RR_RL"] = "".join(str(int(s)) for s in est.stance)
        status = DiagnosticStatus(level=_LEVEL_BYTES[level], name=f"{NODE_NAME}: state estimator",
                                  message=message, hardware_id=self.config.robot)
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        arr.status = [status]
        self._diag_pub.publish(arr)

    def _source_hint(self) -> str:
        if self.link.protocol == UDP:
            return (f"UDP {LOOPBACK}:{self.config.udp_lowstate_port} (does the safety monitor run and forward "
                    "the robot's LowState to this port?)")
        return f"DDS domain {self.config.dds_domain}, interface {self.config.network_interface}"


def main(argv: list[str] | None = None) -> int:
    return run_node(EstimatorNode, NODE_NAME, argv)


if __name__ == "__main__":
    sys.exit(main())
