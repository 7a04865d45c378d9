"""The rehearsal simulator process: a MuJoCo Go2 that speaks the robot's unitree_sdk2 DDS protocol.

    go2_sim --ros-args --params-file config/go2_sim.yaml

Robot side (unitree_sdk2py, DDS domain `dds_domain` on `network_interface`): publishes
rt/lowstate at `lowstate_rate_hz`, takes rt/lowcmd (CRC, head and level flag checked; bad ones
dropped and counted) and runs the motors' PD from the last valid one: at every physics step
(`motor_model: driver`, as the robot) or once per arriving LowCmd, torque held
(`on_command`). Before the first valid LowCmd the motors are passive.

ROS side (ROS_DOMAIN_ID from the environment), for scoring and fault injection only:
  sim/ground_truth (nav_msgs/Odometry: world pose, body-frame twist), sim/push (Twist),
  sim/gamepad (Joy -> wireless_remote), sim/lowstate_enabled (SetBool), /diagnostics.

The physics loop runs on the main thread with absolute deadlines; ROS callbacks run on an
executor thread and DDS callbacks on the SDK's listener thread; they only exchange small
values under a lock.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np

from surrogait_core import go2_wire, interfaces
from surrogait_core.control_loop import DeadlineScheduler
from surrogait_rehearsal.go2_sim_config import PARAMETERS, ParamError, SimNodeConfig
from surrogait_rehearsal.go2_sim_core import Go2Sim, GroundTruth
from surrogait_rehearsal.lowstate_writer import LowStateWriter
from surrogait_rehearsal.motor_driver import MOTOR_MODELS, LowCmdGate
from surrogait_rehearsal.sim_time import SimTimeEvery

EXIT_BAD_CONFIG = 2
_NO_GAMEPAD = [0] * 40


class SimIO:
    """State shared between the ROS callbacks and the physics loop."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lowstate_enabled = True
        self.wireless_remote = list(_NO_GAMEPAD)
        self.pending_push: tuple[np.ndarray, np.ndarray] | None = None
        self.realtime_factor = float("nan")
        self.late_steps = 0
        self.resyncs = 0
        self.lowstates_published = 0


def _read_params(node) -> dict[str, object]:
    from rcl_interfaces.msg import ParameterDescriptor

    values = {}
    for name, (default, description) in PARAMETERS.items():
        values[name] = node.declare_parameter(name, default, ParameterDescriptor(description=description)).value
    return values


class Go2SimRosSide:
    """The ROS node: ground truth, fault injection, diagnostics. Thin: no physics here."""

    def __init__(self, node, io: SimIO, gate: LowCmdGate, config: SimNodeConfig) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import Twist
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import Joy
        from std_srvs.srv import SetBool

        self.node, self.io, self.gate, self.config = node, io, gate, config
        self._odom_pub = node.create_publisher(Odometry, interfaces.SIM_GROUND_TRUTH, 10)
        self._diag_pub = node.create_publisher(DiagnosticArray, interfaces.DIAGNOSTICS, 10)
        node.create_subscription(Twist, interfaces.SIM_PUSH, self._on_push, 10)
        node.create_subscription(Joy, interfaces.SIM_GAMEPAD, self._on_gamepad, 10)
        node.create_service(SetBool, interfaces.SIM_LOWSTATE_ENABLED, self._on_lowstate_enabled)
        node.create_timer(1.0, self._publish_diagnostics)
        self._odom = Odometry()
        self._odom.header.frame_id = "world"
        self._odom.child_frame_id = "base_link"
        self.sim_time_s = 0.0

    def _on_push(self, msg) -> None:
        lin = np.array([msg.linear.x, msg.linear.y, msg.linear.z])
        ang = np.array([msg.angular.x, msg.angular.y, msg.angular.z])
        if not (np.all(np.isfinite(lin)) and np.all(np.isfinite(ang))):
            self.node.get_logger().warning("ignoring a push with non-finite values")
            return
        with self.io.lock:
            self.io.pending_push = (lin, ang)
        self.node.get_logger().info(f"push: linear {lin.tolist()} m/s, angular {ang.tolist()} rad/s (world)")

    def _on_gamepad(self, msg) -> None:
        axes = list(msg.axes) + [0.0] * (4 - len(msg.axes))
        keys = frozenset(k for k, bit in go2_wire.KEY_BITS.items() if bit < len(msg.buttons) and msg.buttons[bit])
        raw = go2_wire.encode_gamepad(go2_wire.Gamepad(keys, *(float(a) for a in axes[:4])))
        with self.io.lock:
            self.io.wireless_remote = raw

    def _on_lowstate_enabled(self, request, response):
        with self.io.lock:
            self.io.lowstate_enabled = bool(request.data)
        response.success = True
        response.message = f"rt/lowstate {'enabled' if request.data else 'stopped'}"
        self.node.get_logger().warning(response.message)
        return response

    def publish_ground_truth(self, gt: GroundTruth) -> None:
        m = self._odom
        m.header.stamp = self.node.get_clock().now().to_msg()
        p, q = m.pose.pose.position, m.pose.pose.orientation
        p.x, p.y, p.z = (float(v) for v in gt.base_pos_w)
        q.w, q.x, q.y, q.z = (float(v) for v in gt.base_quat_wxyz)
        lin, ang = m.twist.twist.linear, m.twist.twist.angular
        lin.x, lin.y, lin.z = (float(v) for v in gt.base_lin_vel_b)
        ang.x, ang.y, ang.z = (float(v) for v in gt.base_ang_vel_b)
        self._odom_pub.publish(m)

    def _publish_diagnostics(self) -> None:
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

        stats = self.gate.snapshot()
        with self.io.lock:
            rtf, late, resyncs = self.io.realtime_factor, self.io.late_steps, self.io.resyncs
            enabled, published = self.io.lowstate_enabled, self.io.lowstates_published
        status = DiagnosticStatus(name="go2_sim", hardware_id="mujoco_go2")
        values = {
            "sim_time_s": f"{self.sim_time_s:.3f}",
            "motor_model": self.config.sim.motor_model,
            "realtime_factor": f"{rtf:.3f}",
            "late_steps": str(late),
            "resyncs": str(resyncs),
            "lowcmd_accepted": str(stats.accepted),
            "lowcmd_dropped": str(stats.dropped_total),
            **{f"lowcmd_dropped_{k}": str(v) for k, v in stats.dropped.items()},
            "lowstate_enabled": str(enabled),
            "lowstates_published": str(published),
        }
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        problems = []
        if stats.dropped_total:
            problems.append(f"{stats.dropped_total} LowCmds dropped")
        if self.config.realtime_factor > 0 and rtf < 0.9 * self.config.realtime_factor:
            problems.append(f"behind real time (factor {rtf:.2f})")
        if not enabled:
            problems.append("rt/lowstate stopped (fault injection)")
        status.level = DiagnosticStatus.WARN if problems else DiagnosticStatus.OK
        status.message = "; ".join(problems) or "running"
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.node.get_clock().now().to_msg()
        self._diag_pub.publish(arr)


def run_physics(sim: Go2Sim, config: SimNodeConfig, gate: LowCmdGate, io: SimIO, publish_lowstate,
                publish_ground_truth, stop: threading.Event, recorder=None, video=None, ros_side=None,
                lowcmd_stream=None) -> None:
    """The real-time loop: motor torques + physics every step, then whatever is due (lowstate, ground truth, logs).

    A LowCmd that arrives during a step is seen at the start of the next one (its sequence number
    changed): under `on_command` that is when its torque is computed, from the state measured then.
    `lowcmd_stream` (a LowCmdStream) is polled here at every step rather than handled by a DDS listener:
    at 500 Hz a Python callback per message competed with this loop for the GIL.
    """
    dt = sim.model.opt.timestep
    writer = LowStateWriter()
    # Everything allocated so far (ROS, DDS, MuJoCo, numpy) lives until exit: exempt it from the
    # cyclic garbage collector: a full pass over this heap took ~60 ms here, 30 missed physics steps.
    gc.collect()
    gc.freeze()
    # Anchored after the set-up, so no catch-up burst. Catching up on stalls of up to 0.1 s keeps
    # simulated time on wall time; after a longer one (a suspended process) it skips ahead.
    pacer = DeadlineScheduler(dt, realtime_factor=config.realtime_factor, max_lag_s=0.1)
    lowstate_due = SimTimeEvery(config.lowstate_rate_hz, dt)
    gt_due = SimTimeEvery(config.ground_truth_rate_hz, dt)
    stats_due = SimTimeEvery(10.0, dt)
    while not stop.is_set():
        pacer.wait()
        with io.lock:
            push, io.pending_push = io.pending_push, None
            enabled, remote = io.lowstate_enabled, io.wireless_remote
        if push is not None:
            sim.push(*push)
        if lowcmd_stream is not None:
            for data, _ in lowcmd_stream.poll():
                gate.receive_sample(data)
        cmd_seq, cmd = gate.latest_numbered()
        sim.step(cmd, cmd_seq)
        t = sim.time_s
        if lowstate_due.due(t) and enabled:
            publish_lowstate(writer.fill(sim.readout(), int(round(t * 1000.0)), remote))
            with io.lock:
                io.lowstates_published += 1
        if gt_due.due(t):
            publish_ground_truth(sim.ground_truth())
        if recorder is not None:
            recorder.maybe_record(cmd, gate.counts, enabled)
        if video is not None:
            video.maybe_capture(sim.data)
        if stats_due.due(t):
            with io.lock:
                io.realtime_factor = pacer.measured_realtime_factor()
                io.late_steps, io.resyncs = pacer.late_steps, pacer.resyncs
            if ros_side is not None:
                ros_side.sim_time_s = t
        if config.duration_s and t >= config.duration_s - 0.5 * dt:
            break


def _error(msg: str) -> None:
    print(f"go2_sim: error: {msg}", file=sys.stderr, flush=True)


def main() -> None:
    """Console-script entry point (`go2_sim`)."""
    code = run(sys.argv)
    # Everything is written and closed by now. Leave without the interpreter's teardown: the DDS
    # libraries' global destructors (Fast DDS for ROS, Cyclone for the SDK) in the same process
    # can abort at exit ("terminate called without an active exception") on a loaded machine,
    # which would turn a clean stop into a crash exit code.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(argv: list[str]) -> int:
    """The simulator process; returns its exit code (0 ok, 1 failure while running, 2 bad configuration)."""
    # First thing: a SIGINT/SIGTERM during the start-up (seconds on a loaded machine) must still
    # end the process cleanly, even when started in the background with SIGINT ignored.
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    try:
        rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as e:  # e.g. a params file that is not valid YAML
        _error(f"cannot start ROS with arguments {argv[1:]}: {e}")
        return EXIT_BAD_CONFIG
    node = None
    try:
        from rclpy.exceptions import ParameterException

        node = rclpy.create_node("go2_sim")
        try:
            config = SimNodeConfig.from_params(_read_params(node))
        except (ParamError, ParameterException) as e:
            _error(str(e))
            return EXIT_BAD_CONFIG
        return _run(node, config, SingleThreadedExecutor, stop)
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def _run(node, config: SimNodeConfig, executor_cls, stop: threading.Event) -> int:
    from cyclonedds.domain import DomainParticipant
    from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
    from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

    from surrogait_core.lowcmd_stream import LowCmdStream
    from surrogait_rehearsal.sim_recorder import SimRecorder
    from surrogait_rehearsal.sim_video import VideoRecorder

    log = node.get_logger()

    for name, path in (("video_path", config.video_path), ("log_path", config.log_path)):
        if path:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                _error(f"{name} {path!r}: cannot create its folder ({e.strerror}); choose a writable path")
                return EXIT_BAD_CONFIG
    if config.sched_fifo_priority:
        # Before any thread starts, so the DDS and ROS threads inherit it: a robot's control
        # processes run real-time for the same reason.
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(config.sched_fifo_priority))
            log.info(f"running under SCHED_FIFO priority {config.sched_fifo_priority}")
        except (OSError, AttributeError) as e:
            log.warning(f"cannot use SCHED_FIFO ({e}); running with normal scheduling")
    sim = Go2Sim(config.sim)
    gate = LowCmdGate()
    io = SimIO()
    try:
        ChannelFactoryInitialize(config.dds_domain, config.network_interface)
    except Exception as e:
        _error(f"cannot start DDS on domain {config.dds_domain}, interface {config.network_interface!r}: {e}")
        return EXIT_BAD_CONFIG
    lowstate_pub = ChannelPublisher(go2_wire.LOWSTATE_TOPIC, LowState_)
    lowstate_pub.Init()
    lowcmd_stream = LowCmdStream(DomainParticipant(config.dds_domain))  # after ChannelFactoryInitialize: its config

    ros_side = Go2SimRosSide(node, io, gate, config)
    executor = executor_cls()
    executor.add_node(node)
    spin = threading.Thread(target=executor.spin, name="ros_executor", daemon=True)
    spin.start()

    recorder = SimRecorder(config.log_path, sim, config.log_rate_hz) if config.log_path else None
    video = None
    exit_code = 0
    try:
        if config.video_path:
            video = VideoRecorder(sim.spec.scene_path, config.video_path, config.video_fps, config.video_width,
                                  config.video_height)
        log.info(f"Go2 simulator: DDS domain {config.dds_domain} on {config.network_interface}, "
                 f"physics {1.0 / sim.model.opt.timestep:.0f} Hz, lowstate {config.lowstate_rate_hz:g} Hz, "
                 f"start {config.sim.initial_pose}, realtime factor {config.realtime_factor:g}, "
                 f"motor model {config.sim.motor_model} ({MOTOR_MODELS[config.sim.motor_model]})")
        t0 = time.monotonic()
        run_physics(sim, config, gate, io, lowstate_pub.Write, ros_side.publish_ground_truth, stop,
                    recorder, video, ros_side, lowcmd_stream)
        wall = time.monotonic() - t0
        stats = gate.snapshot()
        log.info(f"stopped at sim time {sim.time_s:.2f} s after {wall:.2f} s wall; LowCmds accepted "
                 f"{stats.accepted}, dropped {stats.dropped}")
    except Exception as e:
        _error(f"{type(e).__name__}: {e}")
        exit_code = 1
    finally:
        if video is not None:
            try:
                video.close()
                log.info(f"video: {config.video_path} ({video.frames_written} frames, "
                         f"{video.frames_skipped} skipped)")
            except RuntimeError as e:
                _error(str(e))
                exit_code = 1
        if recorder is not None:
            recorder.flush()
            log.info(f"recording: {config.log_path} ({recorder.num_rows} rows)")
        executor.shutdown(timeout_sec=2.0)
        spin.join(timeout=2.0)
        lowstate_pub.Close()
    return exit_code


if __name__ == "__main__":
    main()
