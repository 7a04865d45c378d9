"""The rehearsal simulator process: a MuJoCo Go2 (or Go1) that speaks the robot's low-level protocol.

    go2_sim --ros-args --params-file config/go2_sim.yaml
    go1_sim --ros-args --params-file config/go1_sim.yaml     (go1_sim_node: the same node, a Go1 by default)

Robot side, `robot: go2` (unitree_sdk2py, DDS domain `dds_domain` on `network_interface`):
publishes rt/lowstate at `lowstate_rate_hz`, takes rt/lowcmd. `robot: go1` (no DDS at all): the
robot's end of unitree_legged_sdk's UDP link at `udp_host`:`udp_port`, answering each accepted
LowCmd with one LowState (go1_udp_robot). Either way bad LowCmds (length, CRC, head, level flag,
non-finite) are dropped and counted, and the motors run their PD from the last valid one: at
every physics step (`motor_model: driver`, as the robot) or once per arriving LowCmd, torque held
(`on_command`). Before the first valid LowCmd the motors are passive.

ROS side (ROS_DOMAIN_ID from the environment), for scoring and fault injection only:
  sim/ground_truth (nav_msgs/Odometry: world pose, body-frame twist), sim/push (Twist),
  sim/gamepad (Joy -> wireless_remote), sim/lowstate_enabled (SetBool), /diagnostics.

The physics loop runs on the main thread with absolute deadlines and polls the robot's wire at
every step; ROS callbacks run on an executor thread; they only exchange small values under a lock.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import Joy
from std_srvs.srv import SetBool

from surrogait_core import interfaces
from surrogait_core.runtime.control_loop import DeadlineScheduler
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.runtime.ros_node import EXIT_FAILED, declare_params, report_error, run_node
from surrogait_core.wire import go2_wire
from surrogait_rehearsal.sim.ground_truth_msg import fill_odometry
from surrogait_rehearsal.sim.motor_driver import MOTOR_MODELS, LowCmdGate
from surrogait_rehearsal.sim.mujoco.config import PARAMETERS, SimNodeConfig  # noqa: F401  (PARAMETERS: launch test)
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, GroundTruth
from surrogait_rehearsal.sim.recorder import close_recordings
from surrogait_rehearsal.sim.robot_side_inputs import RobotSideInputs
from surrogait_rehearsal.sim.sim_time import SimTimeEvery

NODE_NAME = "go2_sim"


class SimIO(RobotSideInputs):
    """State shared between the ROS callbacks and the physics loop."""

    def __init__(self) -> None:
        super().__init__()
        self.pending_push: tuple[np.ndarray, np.ndarray] | None = None
        self.realtime_factor = float("nan")
        self.late_steps = 0
        self.resyncs = 0
        self.lowstates_published = 0


class Go2DdsLink:
    """The Go2's end of unitree_sdk2 DDS: rt/lowcmd polled into the gate before each step (at 500 Hz a
    Python callback per message competed with the physics loop for the GIL), rt/lowstate published
    at `lowstate_rate_hz` of simulated time after it."""

    def __init__(self, config: SimNodeConfig, dt_s: float) -> None:
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher
        from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_

        from surrogait_core.wire.lowcmd_stream import LowCmdStream
        from surrogait_rehearsal.sim.lowstate_writer import LowStateWriter

        try:
            ChannelFactoryInitialize(config.dds_domain, config.network_interface)
        except Exception as e:
            raise ParamError(f"cannot start DDS on domain {config.dds_domain}, interface "
                             f"{config.network_interface!r}: {e}") from e
        self._publisher = ChannelPublisher(go2_wire.LOWSTATE_TOPIC, LowState_)
        self._publisher.Init()
        # After ChannelFactoryInitialize: its configuration (the interface) applies.
        self._stream = LowCmdStream(DomainParticipant(config.dds_domain))
        self._writer = LowStateWriter()
        self._due = SimTimeEvery(config.lowstate_rate_hz, dt_s)
        self.ready_line = (f"Go2 simulator: DDS domain {config.dds_domain} on {config.network_interface}, "
                           f"physics {1.0 / dt_s:.0f} Hz, lowstate {config.lowstate_rate_hz:g} Hz")

    def before_step(self, sim: Go2Sim, gate: LowCmdGate, lowstate_enabled: bool, wireless_remote: list[int]) -> int:
        for data, _ in self._stream.poll():
            gate.receive_sample(data)
        return 0

    def after_step(self, sim: Go2Sim, lowstate_enabled: bool, wireless_remote: list[int]) -> int:
        t = sim.time_s
        if not (self._due.due(t) and lowstate_enabled):
            return 0
        self._publisher.Write(self._writer.fill(sim.readout(), int(round(t * 1000.0)), wireless_remote))
        return 1

    def close(self) -> None:
        self._publisher.Close()


class Go1UdpLink:
    """The Go1's end of unitree_legged_sdk's UDP link (go1_udp_robot): LowCmds judged and answered
    before each step, so each LowState reports the state measured before its command acts."""

    def __init__(self, config: SimNodeConfig, gate: LowCmdGate, dt_s: float) -> None:
        from surrogait_rehearsal.sim.mujoco.go1_udp_robot import Go1UdpRobot

        try:
            self.robot = Go1UdpRobot(gate, config.udp_host, config.udp_port, config.udp_tap_port)
        except OSError as e:
            raise ParamError(f"cannot bind the robot's UDP socket at {config.udp_host}:{config.udp_port}: "
                             f"{e.strerror or e} (another simulator on that port? udp_host must be an address "
                             "of this machine)") from e
        host, port = self.robot.address
        tap = f", tap 127.0.0.1:{config.udp_tap_port}" if config.udp_tap_port else ""
        self.ready_line = (f"Go1 simulator: UDP {host}:{port}{tap}, physics {1.0 / dt_s:.0f} Hz, "
                           "one LowState per accepted LowCmd")

    def before_step(self, sim: Go2Sim, gate: LowCmdGate, lowstate_enabled: bool, wireless_remote: list[int]) -> int:
        return self.robot.exchange(sim, lowstate_enabled, bytes(wireless_remote))

    def after_step(self, sim: Go2Sim, lowstate_enabled: bool, wireless_remote: list[int]) -> int:
        return 0

    def close(self) -> None:
        self.robot.close()


class Go2SimNode(Node):
    """The simulator process: the MuJoCo robot on its wire (Go2DdsLink or Go1UdpLink), and its ROS side
    (ground truth, fault injection, diagnostics). `run` steps the physics on the calling (main) thread
    and spins the ROS executor on its own thread."""

    def __init__(self, node_name: str = NODE_NAME, config_class: type[SimNodeConfig] = SimNodeConfig) -> None:
        super().__init__(node_name)
        self.config = config = declare_params(self, config_class)
        for name, path in (("video_path", config.video_path), ("log_path", config.log_path)):
            if path:
                try:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise ParamError(f"{name} {path!r}: cannot create its folder ({e.strerror}); choose a writable "
                                     "path") from e
        if config.sched_fifo_priority:
            # Before any thread starts, so the DDS and ROS threads inherit it: a robot's control
            # processes run real-time for the same reason.
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(config.sched_fifo_priority))
                self.get_logger().info(f"running under SCHED_FIFO priority {config.sched_fifo_priority}")
            except (OSError, AttributeError) as e:
                self.get_logger().warning(f"cannot use SCHED_FIFO ({e}); running with normal scheduling")
        self.sim = Go2Sim(config.sim)
        self.gate = LowCmdGate()
        self.io = SimIO()
        dt = self.sim.model.opt.timestep
        self.link = Go1UdpLink(config, self.gate, dt) if config.robot == "go1" else Go2DdsLink(config, dt)
        # What the fault injection stops, in the robot's terms.
        self._lowstate_name = "LowState replies" if config.robot == "go1" else "rt/lowstate"

        self._odom_pub = self.create_publisher(Odometry, interfaces.SIM_GROUND_TRUTH, 10)
        self._diag_pub = self.create_publisher(DiagnosticArray, interfaces.DIAGNOSTICS, 10)
        self.create_subscription(Twist, interfaces.SIM_PUSH, self._on_push, 10)
        self.create_subscription(Joy, interfaces.SIM_GAMEPAD, self._on_gamepad, 10)
        self.create_service(SetBool, interfaces.SIM_LOWSTATE_ENABLED, self._on_lowstate_enabled)
        self.create_timer(1.0, self._publish_diagnostics)
        self._odom = Odometry()
        self._odom.header.frame_id = "world"
        self._odom.child_frame_id = "base_link"
        self.sim_time_s = 0.0

    def run(self, stop: threading.Event) -> int:
        """Physics until `stop` (SIGINT/SIGTERM) or `duration_s`, the executor on a thread; the exit code."""
        from surrogait_rehearsal.sim.recorder import SimRecorder
        from surrogait_rehearsal.sim.video import VideoRecorder

        config, sim, log = self.config, self.sim, self.get_logger()
        executor = SingleThreadedExecutor()
        executor.add_node(self)
        spin = threading.Thread(target=executor.spin, name="ros_executor", daemon=True)
        spin.start()

        recorder = SimRecorder(config.log_path, sim, config.log_rate_hz) if config.log_path else None
        video = None
        exit_code = 0
        try:
            if config.video_path:
                video = VideoRecorder(sim.spec.scene_path, config.video_path, config.video_fps, config.video_width,
                                      config.video_height, terrain=config.sim.terrain)
            log.info(f"{self.link.ready_line}, start {config.sim.initial_pose} on {config.sim.terrain} ground, "
                     f"realtime factor {config.realtime_factor:g}, motor model {config.sim.motor_model} "
                     f"({MOTOR_MODELS[config.sim.motor_model]})")
            t0 = time.monotonic()
            run_physics(sim, config, self.gate, self.io, self.link, self.publish_ground_truth, stop,
                        recorder, video, self)
            wall = time.monotonic() - t0
            stats = self.gate.snapshot()
            log.info(f"stopped at sim time {sim.time_s:.2f} s after {wall:.2f} s wall; LowCmds accepted "
                     f"{stats.accepted}, dropped {stats.dropped}")
        except Exception as e:
            report_error(NODE_NAME, f"{type(e).__name__}: {e}")
            exit_code = EXIT_FAILED
        finally:
            exit_code = max(exit_code, close_recordings(video, recorder, log.info, NODE_NAME))
            executor.shutdown(timeout_sec=2.0)
            spin.join(timeout=2.0)
            self.link.close()
        return exit_code

    # ---- ROS side: scoring and fault injection only; no physics here -------------------------
    def _on_push(self, msg) -> None:
        lin = np.array([msg.linear.x, msg.linear.y, msg.linear.z])
        ang = np.array([msg.angular.x, msg.angular.y, msg.angular.z])
        if not (np.all(np.isfinite(lin)) and np.all(np.isfinite(ang))):
            self.get_logger().warning("ignoring a push with non-finite values")
            return
        with self.io.lock:
            self.io.pending_push = (lin, ang)
        self.get_logger().info(f"push: linear {lin.tolist()} m/s, angular {ang.tolist()} rad/s (world)")

    def _on_gamepad(self, msg) -> None:
        self.io.set_gamepad(msg.axes, msg.buttons)

    def _on_lowstate_enabled(self, request, response):
        response.success, response.message = True, self.io.set_lowstate_enabled(request.data, self._lowstate_name)
        self.get_logger().warning(response.message)
        return response

    def publish_ground_truth(self, gt: GroundTruth) -> None:
        m = self._odom
        m.header.stamp = self.get_clock().now().to_msg()
        fill_odometry(m, gt)
        self._odom_pub.publish(m)

    def _publish_diagnostics(self) -> None:
        stats = self.gate.snapshot()
        with self.io.lock:
            rtf, late, resyncs = self.io.realtime_factor, self.io.late_steps, self.io.resyncs
            enabled, published = self.io.lowstate_enabled, self.io.lowstates_published
        status = DiagnosticStatus(name=self.get_name(), hardware_id=f"mujoco_{self.config.robot}")
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
        if isinstance(self.link, Go1UdpLink):
            values["udp_send_errors"] = str(self.link.robot.send_errors)
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        problems = []
        if stats.dropped_total:
            problems.append(f"{stats.dropped_total} LowCmds dropped")
        if self.config.realtime_factor > 0 and rtf < 0.9 * self.config.realtime_factor:
            problems.append(f"behind real time (factor {rtf:.2f})")
        if not enabled:
            problems.append(f"{self._lowstate_name} stopped (fault injection)")
        status.level = DiagnosticStatus.WARN if problems else DiagnosticStatus.OK
        status.message = "; ".join(problems) or "running"
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(arr)


def run_physics(sim: Go2Sim, config: SimNodeConfig, gate: LowCmdGate, io: SimIO, link: Go2DdsLink | Go1UdpLink,
                publish_ground_truth, stop: threading.Event, recorder=None, video=None, node=None) -> None:
    """The real-time loop: the robot's wire (`link`), motor torques + physics every step, then whatever
    is due (lowstate, ground truth, logs).

    A LowCmd that arrives during a step is seen at the start of the next one (its sequence number
    changed): under `on_command` that is when its torque is computed, from the state measured then.
    `node` (the Go2SimNode) is told the simulated time for its diagnostics.
    """
    dt = sim.model.opt.timestep
    # Everything allocated so far (ROS, DDS, MuJoCo, numpy) lives until exit: exempt it from the
    # cyclic garbage collector: a full pass over this heap took ~60 ms here, 30 missed physics steps.
    gc.collect()
    gc.freeze()
    # Anchored after the set-up, so no catch-up burst. Catching up on stalls of up to 0.1 s keeps
    # simulated time on wall time; after a longer one (a suspended process) it skips ahead.
    pacer = DeadlineScheduler(dt, realtime_factor=config.realtime_factor, max_lag_s=0.1)
    gt_due = SimTimeEvery(config.ground_truth_rate_hz, dt)
    stats_due = SimTimeEvery(10.0, dt)
    while not stop.is_set():
        pacer.wait()
        with io.lock:
            push, io.pending_push = io.pending_push, None
            enabled, remote = io.lowstate_enabled, io.wireless_remote
        if push is not None:
            sim.push(*push)
        sent = link.before_step(sim, gate, enabled, remote)
        cmd_seq, cmd = gate.latest_numbered()
        sim.step(cmd, cmd_seq)
        t = sim.time_s
        sent += link.after_step(sim, enabled, remote)
        if sent:
            with io.lock:
                io.lowstates_published += sent
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
            if node is not None:
                node.sim_time_s = t
        if config.duration_s and t >= config.duration_s - 0.5 * dt:
            break


def run_simulator(node_name: str = NODE_NAME, config_class: type[SimNodeConfig] = SimNodeConfig) -> None:
    """Run the simulator process as node `node_name` with parameter table `config_class`, then exit."""
    code = run_node(lambda: Go2SimNode(node_name, config_class), node_name)
    # Everything is written and closed by now. Leave without the interpreter's teardown: the DDS
    # libraries' global destructors (Fast DDS for ROS, Cyclone for the SDK) in the same process
    # can abort at exit ("terminate called without an active exception") on a loaded machine,
    # which would turn a clean stop into a crash exit code.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main() -> None:
    """Console-script entry point (`go2_sim`)."""
    run_simulator(NODE_NAME, SimNodeConfig)


if __name__ == "__main__":
    main()
