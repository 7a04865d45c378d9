"""The demo's operator: drives a scripted session through the policy node's services and cmd_vel,
and records what happened (ground truth, odometry, policy state, diagnostics, safety state).

It talks to the running nodes only through their public ROS interfaces, like an operator's
laptop would; ground truth comes from the simulator's scoring topic and is used only here.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from surrogait_core import interfaces

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
CMD_VEL_RATE_HZ = 20.0


class SessionError(RuntimeError):
    """The session could not go on (a node refused a request or never reached a state)."""


@dataclasses.dataclass(frozen=True)
class Segment:
    name: str
    duration_s: float
    command: tuple[float, float, float]  # vx m/s, vy m/s, yaw rate rad/s (body frame)
    scored: bool = True  # part of the walking segments whose tracking is scored


def demo_segments(quick: bool = False) -> list[Segment]:
    """Walk 0.5 m/s, turn, walk 1.0 m/s, stop (the issue's script); quick mode shortens each."""
    d = 3.0 if quick else 6.0
    return [
        Segment("walk 0.5 m/s", d, (0.5, 0.0, 0.0)),
        Segment("turn (0.5 m/s, 0.5 rad/s)", d, (0.5, 0.0, 0.5)),
        Segment("walk 1.0 m/s", d, (1.0, 0.0, 0.0)),
        Segment("stop", 2.0 if quick else 3.0, (0.0, 0.0, 0.0), scored=False),
    ]


def _quat_to_roll_pitch(q) -> tuple[float, float]:
    w, x, y, z = q.w, q.x, q.y, q.z
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    return float(roll), float(pitch)


class SessionRecorder(Node):
    """Subscriptions that record, publishers and clients that act. Times: time.monotonic()."""

    def __init__(self, context: rclpy.Context | None = None):
        super().__init__("surrogait_demo", context=context)
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.ground_truth: list[list[float]] = []  # t, x, y, z, roll, pitch, vx, vy, vz (body), wx, wy, wz
        self.odometry: list[list[float]] = []  # t, vx, vy, vz (body), z
        self.commands: list[list[float]] = []  # t, vx, vy, yaw rate (what cmd_vel sent)
        self.policy_states: list[tuple[float, str]] = []
        self.safety_states: list[tuple[float, dict]] = []
        self.diagnostics: list[tuple[float, dict[str, str]]] = []  # the policy node's
        self.sim_diagnostics: list[tuple[float, dict[str, str]]] = []  # the simulator's (real-time factor...)
        self.command = (0.0, 0.0, 0.0)
        self.sending = False
        self._cmd_pub = self.create_publisher(Twist, interfaces.CMD_VEL, 10)
        self.create_subscription(Odometry, interfaces.SIM_GROUND_TRUTH, self._on_ground_truth, 50)
        self.create_subscription(Odometry, interfaces.ODOM, self._on_odom, 50)
        self.create_subscription(String, interfaces.POLICY_STATE, self._on_policy_state, LATCHED)
        self.create_subscription(String, interfaces.SAFETY_STATE, self._on_safety_state, LATCHED)
        self.create_subscription(DiagnosticArray, interfaces.DIAGNOSTICS, self._on_diagnostics, 10)
        self.clients_by_name = {name: self.create_client(Trigger, srv) for name, srv in (
            ("stand_up", interfaces.SRV_STAND_UP), ("walk", interfaces.SRV_WALK),
            ("stop_walk", interfaces.SRV_STOP_WALK), ("damp", interfaces.SRV_DAMP),
            ("reset", interfaces.SRV_POLICY_RESET),
            ("safety_reset", interfaces.SRV_SAFETY_RESET))}
        self.create_timer(1.0 / CMD_VEL_RATE_HZ, self._send_command)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _on_ground_truth(self, msg: Odometry) -> None:
        p, v, w = msg.pose.pose.position, msg.twist.twist.linear, msg.twist.twist.angular
        roll, pitch = _quat_to_roll_pitch(msg.pose.pose.orientation)
        with self.lock:
            self.ground_truth.append([self.now(), p.x, p.y, p.z, roll, pitch, v.x, v.y, v.z, w.x, w.y, w.z])

    def _on_odom(self, msg: Odometry) -> None:
        v = msg.twist.twist.linear
        with self.lock:
            self.odometry.append([self.now(), v.x, v.y, v.z, msg.pose.pose.position.z])

    def _on_policy_state(self, msg: String) -> None:
        with self.lock:
            self.policy_states.append((self.now(), msg.data))

    def _on_safety_state(self, msg: String) -> None:
        try:
            verdict = json.loads(msg.data)
        except ValueError:
            verdict = {"state": "UNREADABLE", "raw": msg.data}
        with self.lock:
            self.safety_states.append((self.now(), verdict))

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            with self.lock:
                if status.name.startswith("policy_node"):
                    self.diagnostics.append((self.now(), values))
                elif status.name == "go2_sim":
                    self.sim_diagnostics.append((self.now(), values))

    def _send_command(self) -> None:
        if not self.sending:
            return
        vx, vy, wz = self.command
        msg = Twist()
        msg.linear.x, msg.linear.y, msg.angular.z = vx, vy, wz
        self._cmd_pub.publish(msg)
        with self.lock:
            self.commands.append([self.now(), vx, vy, wz])

    @property
    def policy_state(self) -> str | None:
        with self.lock:
            return self.policy_states[-1][1] if self.policy_states else None

    def save(self, path: Path, segments: list[tuple[Segment, float, float]]) -> Path:
        """Everything recorded, as one .npz (times in seconds since the session started)."""
        with self.lock:
            def table(rows, width):
                return np.asarray(rows, dtype=np.float64).reshape(-1, width)

            np.savez(
                path,
                ground_truth=table(self.ground_truth, 12),
                odometry=table(self.odometry, 5),
                commands=table(self.commands, 4),
                policy_states=json.dumps(self.policy_states),
                safety_states=json.dumps(self.safety_states),
                diagnostics=json.dumps(self.diagnostics),
                sim_diagnostics=json.dumps(self.sim_diagnostics),
                segments=json.dumps([dict(dataclasses.asdict(s), start_s=a, end_s=b) for s, a, b in segments]),
            )
        return path


class Session:
    """Runs the recorder's executor in a thread; the scripted steps run in the caller's thread."""

    def __init__(self, domain_id: int, log: Callable[[str], None] = print):
        # A context of its own: the session talks on `domain_id` whatever else this process does with ROS.
        self.log = log
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = SessionRecorder(self.context)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        self.segments: list[tuple[Segment, float, float]] = []
        self.started: list[str] = []  # names of the rehearsal processes running (set by the caller)

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # the context is shut down on exit
            pass

    def close(self) -> None:
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(timeout=2.0)

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            if time.monotonic() > deadline:
                raise SessionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
            time.sleep(0.05)

    def wait_for_state(self, state: str, timeout_s: float) -> None:
        """Wait until the policy node reports `state`; an unexpected DAMP ends the wait at once."""
        def reached() -> bool:
            current = self.node.policy_state
            if current == "DAMP" and state != "DAMP":
                raise SessionError(f"the policy node went to DAMP while waiting for {state} (see its log)")
            return current == state

        try:
            self.wait_for(f"the policy node to reach {state}", reached, timeout_s)
        except SessionError as e:
            raise SessionError(f"{e} (it is {self.node.policy_state})") from None

    def call(self, request: str, timeout_s: float = 5.0, must_succeed: bool = True) -> tuple[bool, str]:
        client = self.node.clients_by_name[request]
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise SessionError(f"service {client.srv_name} is not available (is the policy node running?)")
        future = client.call_async(Trigger.Request())
        self.wait_for(f"the answer of {client.srv_name}", future.done, timeout_s)
        result = future.result()
        self.log(f"  {request}: {'ok' if result.success else 'refused'} ({result.message})")
        if must_succeed and not result.success:
            raise SessionError(f"{request} was refused: {result.message}")
        return result.success, result.message

    def wait_for_ground_truth(self, timeout_s: float) -> None:
        self.wait_for("the simulator's ground truth", lambda: len(self.node.ground_truth) > 0, timeout_s)

    def latest_ground_truth(self) -> list[float] | None:
        with self.node.lock:
            return self.node.ground_truth[-1] if self.node.ground_truth else None

    def run_segments(self, segments: list[Segment], on_tick: Callable[[Segment, float], None] | None = None,
                     abort_on: Callable[[], str | None] | None = None) -> None:
        """Send each segment's command for its duration (cmd_vel at 20 Hz); stop early if `abort_on` says why."""
        self.node.sending = True
        try:
            for segment in segments:
                self.node.command = segment.command
                start = self.node.now()
                while self.node.now() - start < segment.duration_s:
                    time.sleep(0.1)
                    if on_tick:
                        on_tick(segment, self.node.now() - start)
                    reason = abort_on() if abort_on else None
                    if reason:
                        self.segments.append((segment, start, self.node.now()))
                        raise SessionError(reason)
                self.segments.append((segment, start, self.node.now()))
        finally:
            self.node.command = (0.0, 0.0, 0.0)
            self.node.sending = False

    def save(self, path: Path) -> Path:
        return self.node.save(path, self.segments)

