"""The rehearsal's ROS operator: one client for the demo, the fault suite, the benches and the tests.

It talks to the running nodes only through their public ROS interfaces, as an operator's laptop
would: the policy node's and the safety monitor's services, cmd_vel, policy/state, safety/state,
odometry and diagnostics; plus the simulator's scoring and fault-injection interfaces (ground
truth, push, gamepad, sim/lowstate_enabled), which no robot has. It runs its own rclpy context on
the rehearsal's domain (whatever else the process does with ROS), spun in a thread; the caller's
thread acts and waits. What arrives is recorded with its arrival time `t` (seconds since the
operator started) until `reset()`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np

from surrogait_core import interfaces
from surrogait_core.runtime.dds_transport import frequent_announcements
from surrogait_core.wire import go2_wire

CMD_VEL_RATE_HZ = 20.0
MAX_LOGGED_SPIN_ERRORS = 5  # tracebacks printed; later ones are only counted (spin_errors)
MAX_SPIN_FAILURES_IN_A_ROW = 20  # the ROS thread gives up (spin_failure): a broken executor, not one bad message
# Row layouts of the recordings. `save` writes the first 12 ground-truth and 5 odometry columns (the
# session file the report reads, `report.GT`); `stamp` is the message's header stamp and `arrival` the
# wall-clock time it arrived (both on the clock the simulator and the estimator stamp with). A ground-truth
# row's `t` is when the state was (`state_time`), an odometry row's when it arrived, both on the session clock.
GROUND_TRUTH_COLUMNS = ("t", "x", "y", "z", "roll", "pitch", "vx", "vy", "vz", "wx", "wy", "wz", "stamp", "arrival")
ODOMETRY_COLUMNS = ("t", "vx", "vy", "vz", "z", "stamp", "arrival", "x", "y", "z_var")  # z_var: pose.covariance[14]
COMMAND_COLUMNS = ("t", "vx", "vy", "yaw_rate")
# Short names of the services an operator calls, and their types.
SERVICES = {
    "stand_up": (interfaces.SRV_STAND_UP, "Trigger"),
    "walk": (interfaces.SRV_WALK, "Trigger"),
    "stop_walk": (interfaces.SRV_STOP_WALK, "Trigger"),
    "damp": (interfaces.SRV_DAMP, "Trigger"),
    "reset": (interfaces.SRV_POLICY_RESET, "Trigger"),
    "safety_reset": (interfaces.SRV_SAFETY_RESET, "Trigger"),
    "estop": (interfaces.SRV_ESTOP, "Trigger"),
    "lowstate_enabled": (interfaces.SIM_LOWSTATE_ENABLED, "SetBool"),
}
_BY_SERVICE_NAME = {srv: (srv, kind) for srv, kind in SERVICES.values()}


SIMULATOR_STATUSES = ("go2_sim", "go1_sim", "gazebo_bridge")  # diagnostics of whatever plays the robot


class SessionError(RuntimeError):
    """The session could not go on (a node refused a request, never answered or never reached a state)."""


@dataclasses.dataclass(frozen=True)
class Segment:
    name: str
    duration_s: float
    command: tuple[float, float, float]  # vx m/s, vy m/s, yaw rate rad/s (body frame)
    scored: bool = True  # part of the walking segments whose tracking is scored


@dataclasses.dataclass(frozen=True)
class Status:
    """One diagnostic status as it arrived (`wall`: time.time() then)."""

    t: float
    wall: float
    name: str
    level: int
    message: str
    values: dict[str, str]


def _roll_pitch(q) -> tuple[float, float]:
    w, x, y, z = q.w, q.x, q.y, q.z
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(min(1.0, max(-1.0, 2 * (w * y - z * x))))
    return roll, pitch


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


# A ground-truth row's time is when the robot was in that state, on the session's clock: its arrival less its age by
# the simulator's stamp (system time, this host). A harness starved of CPU beside the rehearsal's real-time processes
# receives ground truth in bursts hundreds of ms late: timed by arrival, a Go1 walk's 1.0 m/s segment scored states
# from before the step to 1.0 m/s (vx RMSE 0.18-0.20 where the robot tracked at 0.14; rehearsal log 2026-12-07 (3)).
# A stamp on another clock (a simulator on simulation time) gives no age: such rows keep their arrival time.
MAX_STAMP_AGE_S = 5.0


def state_time(arrival_session_s: float, stamp_unix_s: float, arrival_unix_s: float) -> float:
    """The session time of a state stamped `stamp_unix_s` that arrived at `arrival_session_s` (`arrival_unix_s`)."""
    age_s = arrival_unix_s - stamp_unix_s
    return arrival_session_s - age_s if 0.0 <= age_s <= MAX_STAMP_AGE_S else arrival_session_s


class Operator:
    """A ROS node `name` on `domain_id`: subscriptions that record, publishers and service clients that act.

    cmd_vel: `set_cmd_vel` publishes at once and then at 20 Hz until `set_cmd_vel(None)`. Service calls
    (`call`) return (success, message) and log through `log` when one is given.
    """

    def __init__(self, domain_id: int, log: Callable[[str], None] | None = None, name: str = "surrogait_operator"):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import Twist
        from nav_msgs.msg import Odometry
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import Joy
        from std_msgs.msg import Bool, String
        from std_srvs.srv import SetBool, Trigger

        from surrogait_core.runtime.ros_node import node_executor

        self._msg = types.SimpleNamespace(Twist=Twist, Joy=Joy, Bool=Bool, String=String)
        self._srv = {"Trigger": Trigger, "SetBool": SetBool}
        self.latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                  reliability=ReliabilityPolicy.RELIABLE)
        self.log = log
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.reset()
        self.context = rclpy.Context()
        # Announcing itself every 0.5 s, not 3 s: a process started after it (the simulator) can miss its one answer
        # to the newcomer's first announcement and would find it only at the next (dds_transport's docstring).
        with frequent_announcements():
            rclpy.init(context=self.context, domain_id=domain_id)
            self.node = rclpy.create_node(name, context=self.context)
        n = self.node
        n.create_subscription(Odometry, interfaces.SIM_GROUND_TRUTH, self._on_ground_truth, 100)
        n.create_subscription(Odometry, interfaces.ODOM, self._on_odom, 100)
        n.create_subscription(String, interfaces.POLICY_STATE, self._on_policy_state, self.latched)
        n.create_subscription(String, interfaces.POLICY_GAIT, self._on_gait, self.latched)
        n.create_subscription(String, interfaces.SAFETY_STATE, self._on_safety_state, self.latched)
        n.create_subscription(DiagnosticArray, interfaces.DIAGNOSTICS, self._on_diagnostics, 50)
        # Made now, so discovery is done by the time they are used (a fault's instant is when it is sent).
        self._cmd_pub = n.create_publisher(Twist, interfaces.CMD_VEL, 10)
        self._push_pub = n.create_publisher(Twist, interfaces.SIM_PUSH, 10)
        self._gamepad_pub = n.create_publisher(Joy, interfaces.SIM_GAMEPAD, 10)
        self._estop_pub = n.create_publisher(Bool, interfaces.ESTOP_TOPIC, 10)
        self._safety_pub = None  # made on the first publish_safety (transient local: delivered on matching)
        self._clients = {srv: n.create_client(self._srv[kind], srv) for srv, kind in SERVICES.values()}
        n.create_timer(1.0 / CMD_VEL_RATE_HZ, self._send_command)
        # The nodes' executor (the EventsExecutor where this rclpy has one): the SingleThreadedExecutor rebuilt its
        # wait set in Python at every message, a third of a core in every rehearsal's test process.
        self._executor = node_executor(n)
        self._executor.add_node(n)
        self._stop = threading.Event()
        self.spin_errors: list[str] = []  # exceptions out of callbacks, in order (the thread went on after each)
        self.spin_failure = ""  # set when the ROS thread gave up: every wait raises with it
        self._thread = threading.Thread(target=self._spin, name="operator", daemon=True)
        self._thread.start()

    # --- recording -------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget everything recorded (and stop sending cmd_vel): a new rehearsal starts."""
        with self.lock:
            self.ground_truth: list[list[float]] = []  # GROUND_TRUTH_COLUMNS
            self.odometry: list[list[float]] = []  # ODOMETRY_COLUMNS
            self.commands: list[list[float]] = []  # COMMAND_COLUMNS: what cmd_vel sent
            self.policy_states: list[tuple[float, str]] = []
            self.gaits: list[tuple[float, str]] = []  # the gait the policy walks with, on every change
            self.safety_states: list[tuple[float, dict]] = []
            self.statuses: list[Status] = []  # every diagnostic status
            self.command = (0.0, 0.0, 0.0)
            self.sending = False
            self.segments: list[tuple[Segment, float, float]] = []  # run_segments' segments, (start t, end t)

    def now(self) -> float:
        """Seconds since the operator started (the recordings' `t`)."""
        return time.monotonic() - self.t0

    def _spin(self) -> None:
        """The operator's ROS thread. An exception out of a callback is logged with its traceback and the thread
        goes on: re-raised, it once ended this thread unseen (a daemon thread's traceback went to a pipe nobody
        read), and every later wait for ground truth timed out at 60 s (rehearsal log 2026-12-07). If callbacks keep
        failing, the thread stops and every wait says why (`spin_failure`)."""
        failures_in_a_row = 0
        while not self._stop.is_set():
            try:
                self._executor.spin_once(timeout_sec=0.05)
                failures_in_a_row = 0
            except Exception as e:
                if not self.context.ok():  # the context is shut down on close
                    return
                failures_in_a_row += 1
                self.spin_errors.append(f"{type(e).__name__}: {e}")
                if len(self.spin_errors) <= MAX_LOGGED_SPIN_ERRORS:
                    print(f"operator: a ROS callback failed (the operator goes on):\n{traceback.format_exc()}",
                          file=sys.stderr, flush=True)
                if failures_in_a_row >= MAX_SPIN_FAILURES_IN_A_ROW:
                    self.spin_failure = f"its ROS thread stopped after {failures_in_a_row} failures in a row, the " \
                                        f"last: {self.spin_errors[-1]}"
                    return

    def _on_ground_truth(self, msg) -> None:
        p, v, w = msg.pose.pose.position, msg.twist.twist.linear, msg.twist.twist.angular
        roll, pitch = _roll_pitch(msg.pose.pose.orientation)
        stamp, arrival = _stamp(msg), time.time()
        row = [state_time(self.now(), stamp, arrival), p.x, p.y, p.z, roll, pitch, v.x, v.y, v.z, w.x, w.y, w.z,
               stamp, arrival]
        with self.lock:
            self.ground_truth.append(row)

    def _on_odom(self, msg) -> None:
        p, v = msg.pose.pose.position, msg.twist.twist.linear
        row = [self.now(), v.x, v.y, v.z, p.z, _stamp(msg), time.time(), p.x, p.y, msg.pose.covariance[14]]
        with self.lock:
            self.odometry.append(row)

    def _on_policy_state(self, msg) -> None:
        with self.lock:
            self.policy_states.append((self.now(), msg.data.strip().upper()))

    def _on_gait(self, msg) -> None:
        with self.lock:
            self.gaits.append((self.now(), msg.data.strip()))

    @property
    def gait(self) -> str | None:
        """The policy's latest gait (None before the policy node said)."""
        with self.lock:
            return self.gaits[-1][1] if self.gaits else None

    def _on_safety_state(self, msg) -> None:
        try:
            verdict = json.loads(msg.data)
        except ValueError:
            verdict = {"state": "UNREADABLE", "raw": msg.data}
        with self.lock:
            self.safety_states.append((self.now(), verdict))

    def _on_diagnostics(self, msg) -> None:
        t, wall = self.now(), time.time()
        rows = [Status(t, wall, s.name, s.level[0] if isinstance(s.level, bytes) else int(s.level), s.message,
                       {kv.key: kv.value for kv in s.values}) for s in msg.status]
        with self.lock:
            self.statuses.extend(rows)

    @property
    def policy_state(self) -> str | None:
        """The policy node's latest state (None before the first)."""
        with self.lock:
            return self.policy_states[-1][1] if self.policy_states else None

    @property
    def safety_state(self) -> dict:
        """The safety monitor's latest verdict ({} before the first)."""
        with self.lock:
            return dict(self.safety_states[-1][1]) if self.safety_states else {}

    @property
    def base_height_gt(self) -> float | None:
        """The latest ground-truth base height."""
        with self.lock:
            return self.ground_truth[-1][3] if self.ground_truth else None

    def latest_ground_truth(self) -> list[float] | None:
        with self.lock:
            return self.ground_truth[-1] if self.ground_truth else None

    def table(self, kind: str) -> np.ndarray:
        """A recording as an array: "ground_truth", "odometry" or "commands" (columns: *_COLUMNS)."""
        width = {"ground_truth": GROUND_TRUTH_COLUMNS, "odometry": ODOMETRY_COLUMNS, "commands": COMMAND_COLUMNS}
        with self.lock:
            return np.asarray(getattr(self, kind), dtype=np.float64).reshape(-1, len(width[kind]))

    def latest_statuses(self) -> dict[str, dict[str, str]]:
        """Each diagnostic status's latest values by status name, with its message under "_message"."""
        with self.lock:
            return {s.name: s.values | {"_message": s.message} for s in self.statuses}

    # --- acting --------------------------------------------------------------------------------------

    def _publish_command(self) -> None:
        vx, vy, wz = self.command
        msg = self._msg.Twist()
        msg.linear.x, msg.linear.y, msg.angular.z = float(vx), float(vy), float(wz)
        self._cmd_pub.publish(msg)
        with self.lock:
            self.commands.append([self.now(), vx, vy, wz])

    def _send_command(self) -> None:
        if self.sending:
            self._publish_command()

    def set_cmd_vel(self, vx: float | None, vy: float = 0.0, yaw_rate: float = 0.0) -> None:
        """Send this velocity command now and at 20 Hz from now on; None stops sending."""
        if vx is None:
            self.sending, self.command = False, (0.0, 0.0, 0.0)
            return
        self.command, self.sending = (vx, vy, yaw_rate), True
        self._publish_command()

    def push(self, angular: tuple[float, float, float] = (0.0, 0.0, 0.0),
             linear: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        """sim/push: added once to the simulated base's velocity (world frame)."""
        msg = self._msg.Twist()
        msg.linear.x, msg.linear.y, msg.linear.z = (float(v) for v in linear)
        msg.angular.x, msg.angular.y, msg.angular.z = (float(v) for v in angular)
        self._push_pub.publish(msg)

    def gamepad(self, keys: frozenset[str]) -> None:
        """sim/gamepad: these keys held (sticks centred) until the next call."""
        msg = self._msg.Joy()
        msg.axes = [0.0, 0.0, 0.0, 0.0]
        msg.buttons = [0] * 16
        for k in keys:
            msg.buttons[go2_wire.KEY_BITS[k]] = 1
        self._gamepad_pub.publish(msg)

    def estop_topic(self) -> None:
        self._estop_pub.publish(self._msg.Bool(data=True))

    def publish_safety(self, state: str, cause: str = "") -> None:
        """Publish a safety verdict on safety/state, as the safety monitor does (for tests without one)."""
        if self._safety_pub is None:
            self._safety_pub = self.node.create_publisher(self._msg.String, interfaces.SAFETY_STATE, self.latched)
        self._safety_pub.publish(self._msg.String(data=json.dumps({"state": state, "cause": cause,
                                                                   "time": time.time()})))

    def _client(self, service: str):
        name, kind = SERVICES.get(service) or _BY_SERVICE_NAME.get(service, (service, "Trigger"))
        if name not in self._clients:
            self._clients[name] = self.node.create_client(self._srv[kind], name)
        return name, kind, self._clients[name]

    def wait_service(self, service: str, timeout_s: float = 10.0) -> None:
        """Until `service` (a short name of SERVICES or a service name) is offered; SessionError if not."""
        name, _, client = self._client(service)
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise SessionError(f"service {name} is not available")

    def call(self, service: str, timeout_s: float = 5.0, *, data: bool | None = None,
             must_succeed: bool = False) -> tuple[bool, str]:
        """Call a Trigger service (a SetBool one with `data`) and return (success, message).

        SessionError when it is not offered or does not answer within `timeout_s`, or (`must_succeed`)
        when it refuses.
        """
        name, kind, client = self._client(service)
        if not client.wait_for_service(timeout_sec=timeout_s):
            raise SessionError(f"service {name} is not available (is its node running?)")
        request = self._srv[kind].Request()
        if kind == "SetBool":
            request.data = bool(data)
        future = client.call_async(request)
        deadline = time.monotonic() + timeout_s
        while not future.done():
            if time.monotonic() > deadline:
                raise SessionError(f"timed out after {timeout_s:.0f} s waiting for the answer of {name}")
            time.sleep(0.002)
        result = future.result()
        if self.log is not None:
            self.log(f"  {service}: {'ok' if result.success else 'refused'} ({result.message})")
        if must_succeed and not result.success:
            raise SessionError(f"{service} was refused: {result.message}")
        return bool(result.success), str(result.message)

    # --- waiting -------------------------------------------------------------------------------------

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout_s: float, *,
                 abort_on: Callable[[], str | None] | None = None, poll_s: float = 0.05) -> None:
        """Until `predicate()`; SessionError after `timeout_s`, or at once when `abort_on()` gives a reason."""
        deadline = time.monotonic() + timeout_s
        while not predicate():
            if self.spin_failure:
                raise SessionError(f"the operator cannot see the rehearsal ({self.spin_failure}) while waiting for "
                                   f"{what}")
            reason = abort_on() if abort_on is not None else None
            if reason:
                raise SessionError(reason)
            if time.monotonic() > deadline:
                raise SessionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
            time.sleep(poll_s)

    def wait_for_state(self, state: str, timeout_s: float) -> None:
        """Until the policy node reports `state`; an unexpected DAMP ends the wait at once."""
        def reached() -> bool:
            current = self.policy_state
            if current == "DAMP" and state != "DAMP":
                raise SessionError(f"the policy node went to DAMP while waiting for {state} (see its log)")
            return current == state

        try:
            self.wait_for(f"the policy node to reach {state}", reached, timeout_s)
        except SessionError as e:
            raise SessionError(f"{e} (it is {self.policy_state})") from None

    # --- a scripted session ---------------------------------------------------------------------------

    def run_segments(self, segments: list[Segment], on_tick: Callable[[Segment, float], None] | None = None,
                     abort_on: Callable[[], str | None] | None = None) -> None:
        """Send each segment's command for its duration; stop early (SessionError) if `abort_on` says why."""
        try:
            for segment in segments:
                self.set_cmd_vel(*segment.command)
                start = self.now()
                while self.now() - start < segment.duration_s:
                    time.sleep(0.1)
                    if on_tick:
                        on_tick(segment, self.now() - start)
                    reason = abort_on() if abort_on else None
                    if reason:
                        self.segments.append((segment, start, self.now()))
                        raise SessionError(reason)
                self.segments.append((segment, start, self.now()))
        finally:
            self.set_cmd_vel(None)

    def save(self, path: Path) -> Path:
        """The session as one .npz (times in seconds since the operator started), as the report reads it."""
        ground_truth, odometry, commands = self.table("ground_truth"), self.table("odometry"), self.table("commands")
        with self.lock:
            diagnostics = [(s.t, s.values) for s in self.statuses if s.name.startswith("policy_node")]
            sim_diagnostics = [(s.t, s.values) for s in self.statuses if s.name in SIMULATOR_STATUSES]
            np.savez(
                path,
                ground_truth=ground_truth[:, :12],
                # the simulator's stamp of each row (system time, as its recording's stamp_unix_s): the bridge from
                # the session's clock to the simulation's (surrogait_rehearsal.gait_clips)
                ground_truth_stamp_unix_s=ground_truth[:, 12],
                ground_truth_arrival_unix_s=ground_truth[:, 13],
                odometry=odometry[:, :5],
                commands=commands,
                policy_states=json.dumps(self.policy_states),
                gaits=json.dumps(self.gaits),
                safety_states=json.dumps(self.safety_states),
                diagnostics=json.dumps(diagnostics),
                sim_diagnostics=json.dumps(sim_diagnostics),
                segments=json.dumps([dict(dataclasses.asdict(s), start_s=a, end_s=b) for s, a, b in self.segments]),
            )
        return path

    def close(self) -> None:
        import rclpy

        self._stop.set()
        self._thread.join(timeout=2.0)
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
