"""A stand-in for Gazebo + ros_gz_bridge: the MuJoCo Go2 on the ROS topics the Gazebo rehearsal uses.

    gz_standin --ros-args --params-file config/gz_standin.yaml

Gazebo is not installable on the machines this project is tested on. This process puts the
MuJoCo Go2 (go2_sim's scene, start pose and IMU) where `gz sim` and `ros_gz_bridge` would be, so the
bridge node (`gazebo_bridge`) and the deployment nodes behind it run as they would against Gazebo:

  publishes  /model/go2/joint_states (JointState, model order, MJCF names) at `joint_state_rate_hz`;
             /model/go2/imu (Imu, body frame, specific force) and /model/go2/foot_force/<LEG>
             (WrenchStamped in the foot frame, as a force_torque sensor on the fixed foot joint) at
             `sensor_rate_hz`, all in simulated time and stamped with it; /model/go2/odometry
             (Odometry: world pose, body twist, frames world -> base_link) at `odometry_rate_hz`
  takes      /model/go2/joint/<joint>/cmd_force (Float64): the latest value per joint is held and applied
             at every physics step (gz_standin_core), as gz-sim-apply-joint-force-system does

What it does not reproduce: Gazebo's physics engine and contact model, its stepping and sensor
update schedule, ros_gz_bridge's conversion and its extra hop, the odometry publisher's velocity
smoothing. Physics runs in real time on absolute deadlines (as go2_sim). The force topics are
polled once per physics step (polled_topics), so a force sent during a step acts from the next.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from pathlib import Path

from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64

from surrogait_core.robot_spec import SDK_LEG_ORDER
from surrogait_core.runtime.control_loop import DeadlineScheduler
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.runtime.realtime import freeze_startup_objects
from surrogait_core.runtime.ros_node import EXIT_FAILED, declare_params, report_error, run_node
from surrogait_rehearsal.sim.gazebo import ros_cdr
from surrogait_rehearsal.sim.gazebo.polled_topics import PolledSubscription, command_qos
from surrogait_rehearsal.sim.gazebo.standin_config import PARAMETERS, GzStandinConfig  # noqa: F401  (launch test)
from surrogait_rehearsal.sim.gazebo.standin_core import ForceDrivenGo2
from surrogait_rehearsal.sim.ground_truth_msg import fill_odometry
from surrogait_rehearsal.sim.process_priority import enter_process_fifo
from surrogait_rehearsal.sim.sim_time import SimTimeEvery

NODE_NAME = "gz_standin"
READY_LINE = "Gazebo stand-in:"
GAZEBO_QOS_DEPTH = 10  # ros_gz_bridge publishes with a reliable, depth-10 profile by default


def _no_lowcmds() -> tuple[int, int]:
    return 0, 0


def _stamp(msg, t: float) -> None:
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9)) % 1_000_000_000


class GazeboTopicsOut:
    """The sensor messages Gazebo's systems publish through ros_gz_bridge, filled from the MuJoCo robot and sent
    as CDR bytes (ros_cdr: rclpy's message conversion would cost the stand-in most of its CPU at 500 Hz)."""

    def __init__(self, node: Node, config: GzStandinConfig, robot: ForceDrivenGo2) -> None:
        topics = config.topics
        self.robot, self.sign = robot, config.foot_force_sign
        self._joints = node.create_publisher(JointState, topics.joint_states, GAZEBO_QOS_DEPTH)
        self._imu = node.create_publisher(Imu, topics.imu, GAZEBO_QOS_DEPTH)
        self._feet = [node.create_publisher(WrenchStamped, topics.foot_force_topic(leg), GAZEBO_QOS_DEPTH)
                      for leg in SDK_LEG_ORDER]
        self._foot_frames = [f"go2/{leg}_foot" for leg in SDK_LEG_ORDER]  # frame names are informative only
        self._odom = node.create_publisher(Odometry, topics.odometry, GAZEBO_QOS_DEPTH)
        self.odom_msg = Odometry()
        # The Go2 SDF's odometry publisher names its frames world and base_link.
        self.odom_msg.header.frame_id, self.odom_msg.child_frame_id = "world", "base_link"

    def publish_joint_state(self) -> None:
        robot = self.robot
        names, pos, vel, effort = robot.joint_state()
        self._joints.publish(ros_cdr.encode_joint_state(robot.time_s, "", names, pos, vel, effort))

    def publish_sensors(self) -> None:
        """The IMU and the four foot wrenches (before the joint state of the same step, which starts the bridge's
        cycle, so a LowState carries sensors and joints of one instant)."""
        robot, t = self.robot, self.robot.time_s
        r = robot.sim.readout()  # go2_sim's IMU: MJCF sensors at the IMU site, with its seeded noise
        self._imu.publish(ros_cdr.encode_imu(t, "go2/base/imu", r.quat_wxyz, r.gyro_b, r.accel_b))
        forces, torques = robot.foot_wrenches(self.sign)
        for pub, frame, f, tq in zip(self._feet, self._foot_frames, forces, torques, strict=True):
            pub.publish(ros_cdr.encode_wrench_stamped(t, frame, f, tq))

    def publish_odometry(self) -> None:
        gt = self.robot.sim.ground_truth()
        m = self.odom_msg
        _stamp(m, gt.time_s)
        fill_odometry(m, gt)
        self._odom.publish(m)


class JointForcesIn:
    """The 12 cmd_force topics, polled once per physics step as raw CDR; the newest value of each is held."""

    def __init__(self, node: Node, config: GzStandinConfig, robot: ForceDrivenGo2) -> None:
        self.robot = robot
        self._subs = [(joint, PolledSubscription(node, Float64, config.topics.joint_force_topic(joint), command_qos(),
                                                 raw=True))
                      for joint in robot.slot]
        self.refused = 0

    def take(self) -> None:
        for joint, sub in self._subs:
            data = sub.take_latest()
            if data is None:
                continue
            try:
                value = ros_cdr.decode_float64(data)
            except ros_cdr.CdrError:
                value = deserialize_message(data, Float64).data
            if math.isfinite(value):
                self.robot.set_force(joint, value)
            else:
                self.refused += 1  # Gazebo would integrate it and blow up; a stand-in that did so would hide the cause

    @property
    def received(self) -> int:
        return sum(sub.taken for _, sub in self._subs)


class GzStandinNode(Node):
    """The stand-in process. No executor: its subscriptions are polled by the physics loop (`run`)."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self.config = config = declare_params(self, GzStandinConfig)
        for name, path in (("video_path", config.video_path), ("log_path", config.log_path)):
            if path:
                try:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise ParamError(f"{name} {path!r}: cannot create its folder ({e.strerror})") from e
        self.robot = ForceDrivenGo2(config.sim)
        self.out = GazeboTopicsOut(self, config, self.robot)
        self.forces = JointForcesIn(self, config, self.robot)

    def run(self, stop: threading.Event) -> int:
        from surrogait_rehearsal.sim.recorder import SimRecorder, close_recordings
        from surrogait_rehearsal.sim.video import VideoRecorder

        config, robot, log = self.config, self.robot, self.get_logger()
        enter_process_fifo(config.sched_fifo_priority, log)
        dt = robot.model.opt.timestep
        recorder = SimRecorder(config.log_path, robot.sim, config.log_rate_hz) if config.log_path else None
        video = None
        exit_code = 0
        try:
            if config.video_path:
                video = VideoRecorder(robot.spec.scene_path, config.video_path, config.video_fps, config.video_width,
                                      config.video_height)
            log.info(f"{READY_LINE} MuJoCo Go2 at {1.0 / dt:.0f} Hz physics, start {config.initial_pose}; joint "
                     f"states at {config.joint_state_rate_hz:g} Hz, IMU and foot wrenches at {config.sensor_rate_hz:g} "
                     f"Hz, odometry at {config.odometry_rate_hz:g} Hz; forces held from {config.joint_force_topic}")
            t0 = time.monotonic()
            rtf = self._physics(stop, recorder, video)
            log.info(f"stopped at sim time {robot.time_s:.2f} s after {time.monotonic() - t0:.2f} s wall (realtime "
                     f"factor {rtf:.3f}); force commands received {self.forces.received}, refused "
                     f"{self.forces.refused}")
        except Exception as e:
            report_error(NODE_NAME, f"{type(e).__name__}: {e}")
            exit_code = EXIT_FAILED
        finally:
            exit_code = max(exit_code, close_recordings(video, recorder, log.info, NODE_NAME))
        return exit_code

    def _physics(self, stop: threading.Event, recorder, video) -> float:
        """Real-time physics until `stop` or `duration_s`; returns the last measured realtime factor."""
        config, robot = self.config, self.robot
        dt = robot.model.opt.timestep
        freeze_startup_objects()
        # As go2_sim: catch up after a stall of up to 0.1 s, skip ahead after a longer one.
        pacer = DeadlineScheduler(dt, realtime_factor=config.realtime_factor, max_lag_s=0.1)
        joints_due, sensors_due = SimTimeEvery(config.joint_state_rate_hz, dt), SimTimeEvery(config.sensor_rate_hz, dt)
        odom_due = SimTimeEvery(config.odometry_rate_hz, dt)
        stats_due = SimTimeEvery(0.1, dt)  # every 10 s
        rtf, lateness_max = float("nan"), 0.0
        while not stop.is_set():
            lateness_max = max(lateness_max, pacer.wait().lateness_s)
            self.forces.take()
            robot.step()
            t = robot.time_s
            if sensors_due.due(t):
                self.out.publish_sensors()
            if joints_due.due(t):
                self.out.publish_joint_state()
            if odom_due.due(t):
                self.out.publish_odometry()
            if recorder is not None:
                recorder.maybe_record(None, _no_lowcmds, True)  # the stand-in sees forces, not LowCmds
            if video is not None:
                video.maybe_capture(robot.data)
            if stats_due.due(t):
                rtf = pacer.measured_realtime_factor()
                if rtf < 0.9 * config.realtime_factor or lateness_max > 0.02:
                    # A stalled stand-in stalls its topics, which the bridge and the nodes then see.
                    self.get_logger().warning(f"realtime factor {rtf:.2f} over the last second; a step started "
                                              f"up to {lateness_max * 1e3:.0f} ms late in the last 10 s")
                lateness_max = 0.0
            if config.duration_s and t >= config.duration_s - 0.5 * dt:
                break
        return pacer.measured_realtime_factor() if math.isnan(rtf) else rtf


def main() -> None:
    """Console-script entry point (`gz_standin`)."""
    code = run_node(GzStandinNode, NODE_NAME)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # as go2_sim: skip the DDS libraries' teardown at exit


if __name__ == "__main__":
    main()

