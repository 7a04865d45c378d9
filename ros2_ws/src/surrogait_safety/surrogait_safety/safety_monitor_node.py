"""safety_monitor: an independent watchdog on the robot's wire.

A thin rclpy shell over `surrogait_core.safety.SafetyMonitor`:
- Go2: DDS readers on rt/lowstate (newest sample) and rt/lowcmd (every sample, raw; ignoring this
  process's own writes, so the monitor only judges what *others* command), polled by the check
  thread, and a writer on rt/lowcmd for its own damping commands;
- Go1: the gateway of the point-to-point UDP link (`surrogait_safety.go1_gateway`): the policy
  node's LowCmds pass through the monitor, which judges each before it reaches the robot and sends
  damping in its place once a rule is violated; it forwards the robot's LowStates back to the
  policy node and to the estimator, and keeps damping commands flowing while nobody drives the
  motors (the Go1 only answers commands). docs/go1.md says what this can and cannot guarantee;
- the policy file's contract (metadata only): the control period and the soft joint range;
- ROS inputs: the estimator's odometry (base height, trusted only while its reported standard
  deviation is small), the policy's state, e-stop topic/service;
- a check thread at `check_rate_hz` (≥ the control rate, so a silent policy is noticed within a
  few ms of its deadline) runs the rules, publishes the latched state on safety/state (transient
  local) and writes damping when nobody else does;
- every event goes to the JSON-lines fault log at `fault_log_path`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool, String
from std_srvs.srv import Trigger

from surrogait_core import interfaces
from surrogait_core.policy.contract import ContractError, read_contract
from surrogait_core.robot_links import robot_link
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.control_loop import DeadlineScheduler
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.runtime.realtime import enter_realtime, freeze_startup_objects
from surrogait_core.runtime.ros_node import declare_params, run_node
from surrogait_core.safety import FaultLog, SafetyMonitor, ThresholdError, thresholds_from_params
from surrogait_core.safety.base_height import LegKinematicsHeight, monitor_base_height
from surrogait_core.safety.thresholds import TUNABLE_FIELDS, default_thresholds
from surrogait_core.wire import go1_wire, go2_wire
from surrogait_core.wire.go2_wire import LowStateView
from surrogait_core.wire.latest_lowstate import LatestLowState
from surrogait_core.wire.lowcmd_stream import LowCmdStream, RepeatFilter
from surrogait_core.wire.network_interface import interface_ipv4
from surrogait_safety.go1_gateway import GatewayAddresses, Go1Gateway
from surrogait_safety.params import PARAMETERS, SafetyMonitorParams  # noqa: F401  (PARAMETERS: launch test)

NODE_NAME = "safety_monitor"
# s past a silence's deadline at which the check looks (its rule fires strictly after the threshold)
SILENCE_DUE_MARGIN_S = 0.0005
THRESHOLD_PREFIX = "thresholds."
# Go1: damping commands this often while nobody drives the motors. The Go1 answers commands only, so
# without them there would be no LowState (no estimator, no e-stop from the gamepad) until the policy
# node streams; a passive robot under damping is what the policy node itself commands while PASSIVE.
GO1_KEEPALIVE_S = 0.02


def expand_log_path(path: str) -> str:
    """`{stamp}` in the configured path becomes the UTC start time, so every run gets its own log."""
    return path.replace("{stamp}", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))


def safety_state_json(latched: bool, cause: str) -> str:
    return json.dumps({"state": "DAMP" if latched else "OK", "cause": cause, "time": time.time()})


class LowStatePoller:
    """rt/lowstate polled at the check rate: the newest sample since the last poll, decoded, and when it arrived.

    The state rules only need the newest sample; taking each of the 500 samples/s in a listener
    cost the monitor a third of a core (deserialisation), polling at 200 Hz a fraction of that.
    A sample taken now arrived since the previous poll; within that interval its source timestamp
    places it exactly when the writer shares this host's clock (rehearsal), and a robot whose clock
    differs cannot push it outside the interval (error ≤ one poll period, never a false silence).
    """

    def __init__(self, participant):
        # A few samples deep (2-3 arrive between polls at 200 Hz): counted for the stream's rate, the newest decoded
        # and its CRC checked.
        self._latest = LatestLowState(participant, depth=16, check_crc=True)
        self._last_poll: float | None = None

    def poll(self) -> tuple[LowStateView, float, int, bool | None] | None:
        """(state, monotonic arrival time, samples since the last poll, its CRC verdict) of the newest sample
        since the last call, or None."""
        now = time.monotonic()
        since_last_poll = 0.0 if self._last_poll is None else now - self._last_poll
        self._last_poll = now
        sample = self._latest.take()
        if sample is None:
            return None
        age = time.time() - sample.source_time_s
        return sample.state, now - min(max(age, 0.0), since_last_poll), sample.received, sample.crc_ok


class SafetyMonitorNode(Node):
    """The monitor's ROS and DDS shell: parameters and contract, the wire, the ROS inputs; `start()` runs the checks."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self._read_params()
        # The watchdog must not be starved into false "stale" verdicts (or late real ones).
        enter_realtime(self.params.realtime_priority, self.get_logger())
        self.lock = threading.Lock()
        self.monitor = SafetyMonitor(self.th, self.params.allow_lowstate_without_crc)
        self.height_from_legs = LegKinematicsHeight(self.spec)
        self.log = FaultLog(self.log_path)
        self.log.write("start", detail=f"safety monitor started (robot {self.spec.name}, {self._wire_name()})",
                       values=self._config_summary(), action="OK")
        self._decoded_state_t = -1.0  # Go1: the arrival time of the newest LowState judged
        self._go1_lowstates = 0  # Go1: LowStates the gateway forwarded (its thread counts)
        self._go1_lowstates_judged = 0
        self._odom_height: tuple[float, float, float] | None = None  # (m, std m, monotonic s)
        self._policy_state = ""
        self.counts = {"lowstate": 0, "lowcmd": 0, "lowcmd_repeated": 0, "lowcmd_dropped": 0, "own_damping": 0}
        self._cmd_repeats = RepeatFilter()
        self.gateway: Go1Gateway | None = None
        if self.link.monitor_is_gateway:
            self._open_go1_gateway()
        else:
            self._open_go2_wire()

        latched_qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                 reliability=ReliabilityPolicy.RELIABLE)
        self.state_pub = self.create_publisher(String, interfaces.SAFETY_STATE, latched_qos)
        self.create_subscription(Odometry, interfaces.ODOM, self._on_odom, 10)
        self.create_subscription(String, interfaces.POLICY_STATE, self._on_policy_state, latched_qos)
        self.create_subscription(Bool, interfaces.ESTOP_TOPIC, self._on_estop_topic, 10)
        self.create_subscription(DiagnosticArray, interfaces.DIAGNOSTICS, self._on_diagnostics, 10)
        self._policy_cause_logged = False
        self.create_service(Trigger, interfaces.SRV_ESTOP, self._on_estop_service)
        self._diag_pub = self.create_publisher(DiagnosticArray, interfaces.DIAGNOSTICS, 10)
        self.create_timer(self.params.diagnostics_period_s, self._publish_diagnostics)
        self.create_service(Trigger, interfaces.SRV_SAFETY_RESET, self._on_reset)
        self._publish_state()
        # The checks run in their own thread on absolute deadlines rather than in an rclpy timer:
        # the executor's per-wake-up cost at 200 Hz was most of the monitor's CPU, and a busy
        # executor (services, subscriptions) can no longer delay a check.
        self._check_lock = threading.Lock()  # one check at a time (the loop and e-stop requests)
        self._running = threading.Event()
        self._running.set()
        self._check_thread = threading.Thread(target=self._check_loop, name="safety_checks", daemon=True)
        watching = (f"gateway {self.params.network_interface} {self._wire_name()}" if self.gateway is not None else
                    f"watching {go2_wire.LOWSTATE_TOPIC} and {go2_wire.LOWCMD_TOPIC} on {self._wire_name()}")
        self.get_logger().info(f"{watching} at {self.params.check_rate_hz:.0f} Hz for the policy "
                               f"{self.params.policy_path} ({1 / self.th.control_period_s:.0f} Hz control); fault "
                               f"log {self.log.path}")

    def _wire_name(self) -> str:
        p = self.params
        if self.link.monitor_is_gateway:
            return (f"UDP 127.0.0.1:{p.udp_policy_port} (policy node) <-> {p.udp_robot_ip}:{p.udp_robot_port} "
                    f"(robot) from port {p.udp_robot_local_port}")
        return f"DDS domain {p.dds_domain} ({p.network_interface})"

    def _open_go2_wire(self) -> None:
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.pub import DataWriter
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_

        ChannelFactoryInitialize(self.params.dds_domain, self.params.network_interface)
        # One participant (it uses the domain config ChannelFactoryInitialize made) for the damping
        # writer and the rt/lowcmd reader, so the reader can ignore exactly the monitor's own writes.
        participant = DomainParticipant(self.params.dds_domain)
        self._cmd_stream = LowCmdStream(participant)
        self._lowcmd_type = LowCmd_
        damping_msg = go2_wire.fill_damping(go2_wire.new_lowcmd(), self.th.damping_kd)
        writer = DataWriter(participant, self._cmd_stream.topic)
        self._send_damping = lambda: writer.write(damping_msg)
        self._state_reader = LowStatePoller(participant)

    def _open_go1_gateway(self) -> None:
        p = self.params
        self._damping_packet = go1_wire.damping_lowcmd(self.th.damping_kd)
        self._latest_lowstate: tuple[bytes, float] | None = None  # set by the gateway thread
        addresses = GatewayAddresses(p.udp_robot_ip, p.udp_robot_port, p.udp_robot_local_port, p.udp_policy_port,
                                     p.udp_estimator_port, p.udp_record_port)
        bind_ip = "" if p.udp_robot_ip.startswith("127.") else (interface_ipv4(p.network_interface) or "")
        self.gateway = Go1Gateway(addresses, self._judge_go1_lowcmd, self._on_go1_lowstate, self._damping_packet,
                                  bind_ip)
        self._send_damping = lambda: self.gateway.send_to_robot(self._damping_packet)
        # Every command waits in the gateway for its thread: hand the GIL over quickly (as the policy node does).
        sys.setswitchinterval(0.0001)

    def start(self) -> None:
        """Start the gateway (Go1) and the check thread, then freeze the start-up heap out of garbage collection."""
        if self.gateway is not None:
            self.gateway.start()
        self._check_thread.start()
        # A full garbage collection over the start-up heap stopped the rt/lowcmd listener for 43 ms in a
        # rehearsal: silence the monitor itself had made up. Started, its heap is frozen (see realtime).
        freeze_startup_objects()

    # --- parameters --------------------------------------------------------------------
    def _read_params(self) -> None:
        """The parameter table, then the `thresholds.` group (defaults from the robot model) and the contract."""
        self.params = p = declare_params(self, SafetyMonitorParams, checked_elsewhere=(THRESHOLD_PREFIX,))
        self.spec = load_robot_spec(p.robot)
        self.link = robot_link(p.robot)
        self.log_path = expand_log_path(p.fault_log_path)
        defaults = default_thresholds(self.spec)
        dynamic = ParameterDescriptor(dynamic_typing=True)
        overrides = {}
        for name in TUNABLE_FIELDS:
            value = self.declare_parameter(THRESHOLD_PREFIX + name, getattr(defaults, name), dynamic).value
            if value != getattr(defaults, name):
                overrides[name] = value
        if THRESHOLD_PREFIX + "control_period_s" in self._parameter_overrides:
            raise ParamError("parameter 'thresholds.control_period_s' is no longer set in YAML: the monitor "
                             "reads the control period from the policy file's contract (policy_path); remove it")
        unknown = sorted(name for name in self._parameter_overrides if not self.has_parameter(name))
        if unknown:
            raise ParamError(f"unknown parameter(s) {unknown} for {NODE_NAME}: check the spelling; the thresholds "
                             f"are {', '.join(THRESHOLD_PREFIX + name for name in TUNABLE_FIELDS)}")
        try:
            contract = read_contract(p.policy_path, robot=self.spec.name)
        except ContractError as e:
            raise ParamError(f"parameter 'policy_path': {e}") from e
        try:
            self.th = thresholds_from_params(self.spec, overrides, contract)
        except ThresholdError as e:
            raise ParamError(f"{e} (set them under '{THRESHOLD_PREFIX}' in the params file)") from e
        if p.check_rate_hz * self.th.control_period_s < 1.0:  # (the contract's control period)
            raise ParamError(f"check_rate_hz {p.check_rate_hz} is below the control rate "
                             f"{1 / self.th.control_period_s:.0f} Hz: silence would be noticed too late")

    def _config_summary(self) -> dict:
        th = {name: getattr(self.th, name) for name in TUNABLE_FIELDS}
        fault_lower, fault_upper = self.th.joint_pos_fault_limits()
        p = self.params
        wire = ({"udp_robot": f"{p.udp_robot_ip}:{p.udp_robot_port}", "udp_robot_local_port": p.udp_robot_local_port,
                 "udp_policy_port": p.udp_policy_port, "udp_estimator_port": p.udp_estimator_port}
                if self.link.monitor_is_gateway else {"dds_domain": p.dds_domain})
        return {"robot": self.spec.name, **wire, "network_interface": p.network_interface,
                "check_rate_hz": p.check_rate_hz, "policy_path": p.policy_path,
                "control_period_s": self.th.control_period_s, "thresholds": th,
                "joint_pos_lower": self.th.joint_pos_lower.tolist(),
                "joint_pos_upper": self.th.joint_pos_upper.tolist(),
                "joint_pos_fault_lower": fault_lower.tolist(),
                "joint_pos_fault_upper": fault_upper.tolist(),
                "joint_vel_limit": self.th.joint_vel_limit.tolist(),
                "joint_torque_limit": self.th.joint_torque_limit.tolist(),
                "min_base_height_m": self.th.min_base_height_m}

    # --- the wire (polled by the check thread, under self.lock) --------------------------
    def _poll_wire(self):
        if self.gateway is not None:
            self._refresh_go1_state()  # the gateway's thread feeds the commands
            return
        self._refresh_state()  # first: the command rules judge a command against the newest state
        for data, arrival_t in self._cmd_stream.poll():
            if self._cmd_repeats.repeated(data):
                cmd = self._cmd_repeats.verdict
                if cmd is None:
                    self.counts["lowcmd_dropped"] += 1
                else:
                    self.counts["lowcmd_repeated"] += 1
                    self.monitor.on_lowcmd(cmd, arrival_t, repeated=True)
                continue
            msg = self._lowcmd_type.deserialize(data)
            # The robot drops these; they move no motor, so they are not judged (only counted).
            if msg.level_flag != go2_wire.LEVEL_LOW or not go2_wire.crc_ok(msg):
                self._cmd_repeats.remember(data, None)
                self.counts["lowcmd_dropped"] += 1
                continue
            cmd = go2_wire.motor_commands(msg)
            self._cmd_repeats.remember(data, cmd)
            self.counts["lowcmd"] += 1
            self.monitor.on_lowcmd(cmd, arrival_t)

    # --- Go1: the gateway's callbacks (its thread) -------------------------------------------
    def _judge_go1_lowcmd(self, packet: bytes, arrival_t: float) -> bytes | None:
        """What reaches the robot for this packet from the policy node: itself, damping instead, or nothing."""
        with self.lock:
            if self._cmd_repeats.repeated(packet):
                cmd = self._cmd_repeats.verdict
                if cmd is None:
                    self.counts["lowcmd_dropped"] += 1
                    return None
                self.counts["lowcmd_repeated"] += 1
                self.monitor.on_lowcmd(cmd, arrival_t, repeated=True)
            else:
                if go1_wire.lowcmd_drop_reason(packet) is not None:  # the robot would drop it: so does the gateway
                    self._cmd_repeats.remember(packet, None)
                    self.counts["lowcmd_dropped"] += 1
                    return None
                cmd = go1_wire.decode_lowcmd(packet).motors
                self._cmd_repeats.remember(packet, cmd)
                self.counts["lowcmd"] += 1
                self.monitor.on_lowcmd(cmd, arrival_t)
            if self.monitor.command_refused():
                self.monitor.on_own_damping(arrival_t)  # what the motors got is the monitor's damping
                return self._damping_packet
        return packet

    def _on_go1_lowstate(self, packet: bytes, arrival_t: float) -> None:
        self._latest_lowstate = (packet, arrival_t)  # decoded by the check thread, only the newest
        self._go1_lowstates += 1

    def _refresh_go1_state(self):
        latest = self._latest_lowstate
        if latest is None or latest[1] == self._decoded_state_t:
            return
        packet, arrival_t = latest
        self._decoded_state_t = arrival_t
        if go1_wire.lowstate_drop_reason(packet) is not None:
            return  # not a LowState the SDK would take; the policy node refuses it too
        self.counts["lowstate"] += 1
        forwarded = self._go1_lowstates
        received, self._go1_lowstates_judged = forwarded - self._go1_lowstates_judged, forwarded
        self.monitor.on_lowstate(go1_wire.decode_lowstate(packet), arrival_t, received)

    def _refresh_state(self):
        latest = self._state_reader.poll()
        if latest is not None:
            self.counts["lowstate"] += 1
            self.monitor.on_lowstate(*latest)

    # --- ROS callbacks -----------------------------------------------------------------
    def _on_odom(self, msg):
        p, q, v, w = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist.linear, \
            msg.twist.twist.angular
        values = {"position": [p.x, p.y, p.z], "orientation": [q.w, q.x, q.y, q.z],
                  "linear_velocity": [v.x, v.y, v.z], "angular_velocity": [w.x, w.y, w.z]}
        # The estimator reports an untrusted height (not converged, fallen behind) as a large z variance.
        var_z = msg.pose.covariance[14]
        std_z = float(np.sqrt(var_z)) if np.isfinite(var_z) and var_z >= 0.0 else float("inf")
        with self.lock:
            self._odom_height = (float(p.z), std_z, time.monotonic())
            self.monitor.on_estimator_values(values, time.monotonic())

    def _on_policy_state(self, msg):
        state = msg.data.strip().upper()
        with self.lock:
            previous, self._policy_state = self._policy_state, state
            self.monitor.on_policy_state(state, time.monotonic())
        if state == "DAMP" and previous != "DAMP":
            # The policy node damped on its own (request, non-finite output, stale state...): log it;
            # its cause follows in its diagnostics.
            self._policy_cause_logged = False
            self.log.write("policy_damp", "policy_state_damp", "the policy node reports DAMP",
                           {"previous": previous}, "none (the policy node damps)")

    def _on_diagnostics(self, msg):
        if self._policy_cause_logged or self._policy_state != "DAMP":
            return
        for status in msg.status:
            if status.name.startswith("policy_node") and status.message.startswith("DAMP"):
                self._policy_cause_logged = True
                self.log.write("policy_damp_cause", "policy_state_damp", status.message,
                               {"policy_diagnostics": status.name}, "none (the policy node damps)")

    def _on_estop_topic(self, msg):
        if msg.data:
            self._estop("topic")

    def _on_estop_service(self, request, response):
        self._estop("service")
        response.success, response.message = True, "e-stop latched: damping"
        return response

    def _estop(self, source: str):
        with self.lock:
            self.monitor.on_estop(source, time.monotonic())
        self._check()  # act now, not at the next tick

    def _on_reset(self, request, response):
        with self.lock:
            self._poll_wire()
            result = self.monitor.request_reset(time.monotonic())
        for ev in result.events:
            self.log.write_event(ev)
        if result.accepted:
            self._publish_state()
            self.get_logger().info(f"reset accepted: {result.reason}")
        else:
            self.get_logger().warning(f"reset refused: {result.reason}")
        response.success, response.message = result.accepted, result.reason
        return response

    # --- the check ---------------------------------------------------------------------
    def _check_loop(self):
        # An overrun (descheduled) is followed by the next check on the grid, never by a burst.
        period_s = 1.0 / self.params.check_rate_hz
        pacer = DeadlineScheduler(period_s)
        while self._running.is_set():
            self._check()
            # A silence falls due between two ticks: look when it does, not up to a period later.
            with self.lock:
                due = self.monitor.silence_deadline()
            wait_s = None if due is None else due + SILENCE_DUE_MARGIN_S - time.monotonic()
            if wait_s is not None and 0.0 < wait_s < period_s:
                time.sleep(wait_s)
                self._check()
            pacer.wait()

    def _check(self):
        with self._check_lock:
            self._check_locked()

    def _check_locked(self):
        now = time.monotonic()
        with self.lock:
            self.monitor.look(now)
            self._poll_wire()
            suspected = self.monitor.silence_suspected(now)
        if suspected:
            # This process may just have been descheduled: let the DDS listener threads deliver
            # what arrived meanwhile before calling the wire silent (costs ≤ 2 ms when it is).
            time.sleep(0.002)
            now = time.monotonic()
        with self.lock:
            if suspected:  # else the wire was read just now: reading it again costs a third of a check
                self.monitor.look(now)  # a host stall can stretch that sleep: the wire was not watched meanwhile
                self._poll_wire()
            self._update_base_height(now)
            result = self.monitor.check(now)
            if result.write_damping:
                self._send_damping()
                self.monitor.on_own_damping(time.monotonic())
                self.counts["own_damping"] += 1
            elif self.gateway is not None and not self.monitor.wire_stiff():
                last = self.gateway.last_robot_send_s
                if last is None or now - last > GO1_KEEPALIVE_S:
                    self._send_damping()
        if result.state_changed:
            self._publish_state()
        for ev in result.events:
            self.log.write_event(ev)
            text = f"{ev.event} {ev.cause}: {ev.detail} -> {ev.action}"
            if ev.event == "fault":
                self.get_logger().error(text)
            else:
                self.get_logger().warning(text)

    def _update_base_height(self, now: float):
        if not self.monitor.standing():
            return
        chosen = monitor_base_height(self._odom_height, self.monitor.state, self.height_from_legs, now,
                                     self.th.estimator_height_max_std_m, self.params.odom_timeout_s)
        if chosen is not None:
            self.monitor.on_base_height(*chosen, now)

    def _publish_diagnostics(self):
        """The latched state, and every input issue by cause (what the fault log names), once a period."""
        with self.lock:
            latched, cause = self.monitor.latched, self.monitor.cause
            issues = self.monitor.inputs.issues()
            watch = self.monitor.inputs
            values = {"state": "DAMP" if latched else "OK", "cause": cause, "clock_source": watch.clock.source,
                      "lowstate_crc_failures": watch.crc_failures, "lowstate_crc_checked": watch.crc_checked,
                      **{k: v for k, v in self.counts.items()}}
            if watch.rate.last_rate_hz is not None:
                values["lowstate_rate_hz"] = f"{watch.rate.last_rate_hz:.0f}"
        values.update({f"input_{c}": issue.detail for c, issue in issues.items()})
        status = DiagnosticStatus(name=f"{NODE_NAME}: inputs and latch", hardware_id=self.spec.name)
        if latched:
            status.level, status.message = DiagnosticStatus.ERROR, f"DAMP: {cause}"
        elif issues:
            status.level, status.message = DiagnosticStatus.WARN, "inputs: " + ", ".join(issues)
        else:
            status.level, status.message = DiagnosticStatus.OK, "OK"
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(array)

    def _publish_state(self):
        msg = String()
        msg.data = safety_state_json(self.monitor.latched, self.monitor.cause)
        self.state_pub.publish(msg)

    def stop(self) -> None:
        """Stop the check thread and close the fault log with the counts."""
        self._running.clear()
        self._check_thread.join(timeout=1.0)
        if self.gateway is not None:
            self.gateway.stop()
            self.counts.update({f"gateway_{k}": v for k, v in dataclasses.asdict(self.gateway.counts).items()})
        self.log.write("stop", detail="safety monitor stopped", values=dict(self.counts),
                       action="DAMP latched" if self.monitor.latched else "OK")
        self.log.close()


def main(argv: list[str] | None = None) -> int:
    return run_node(SafetyMonitorNode, NODE_NAME, argv, errors=(OSError,))


if __name__ == "__main__":
    sys.exit(main())
