"""The Gazebo bridge: a Go2 in Gazebo made to speak the Go2's own wire, so the deployment nodes run unchanged.

    gazebo_bridge --ros-args --params-file config/gazebo_bridge.yaml

Gazebo side (ROS topics that `ros_gz_bridge` carries, surrogait_bringup's config/gazebo/ros_gz_bridge.yaml;
names are parameters, defaults in topics):
  takes  /model/go2/joint_states (JointState), /model/go2/imu (Imu), /model/go2/foot_force/<LEG>
         (WrenchStamped, foot frame), /model/go2/odometry (Odometry)
  sends  /model/go2/joint/<joint>/cmd_force (Float64, N·m) for the 12 joints
Robot side (unitree_sdk2 DDS, domain `dds_domain` on `network_interface`), as go2_sim:
  rt/lowcmd in: every message's CRC, head and level flag checked, non-finite refused (motor_driver.LowCmdGate)
  rt/lowstate out: on new Gazebo joint states, at most `lowstate_rate_hz` (LowStateWriter); tick = the
  state's simulation time in ms; joints mapped by name to SDK order; IMU quaternion (w, x, y, z), gyro and
  accelerometer from the Imu message; foot_force = normal contact force in N (below); tau_est = the torque sent
ROS side for the harness (ROS_DOMAIN_ID from the environment): sim/ground_truth (Gazebo's odometry,
republished), sim/gamepad (Joy -> wireless_remote), sim/lowstate_enabled (SetBool), /diagnostics.
There is no sim/push: Gazebo has no velocity kick to forward it to.

The loop (CyclePacer): a cycle starts when Gazebo's next joint state is ready, no sooner than one period of
`control_rate_hz` after the previous cycle (one period later still if none comes). Each cycle:
  1. take the newest joint state (and odometry, republished as ground truth);
  2. take every rt/lowcmd sample into the gate;
  3. if the state is fresh: motor PD `tau = kp·(q* − q) + kd·(dq* − dq) + tau_ff` from the last valid LowCmd
     and that joint state (surrogait_core.wire.motor_driver_law.pd_torques: stop mode, "no target"
     sentinels), clipped to the robot spec's torque limits, sent as 12 joint forces; and, when a LowState is
     due, the IMU and foot wrenches taken and one LowState written;
  4. if no joint state or IMU sample arrived for `state_timeout_s`: no LowState (the safety monitor and the
     policy node see the robot go silent and damp, as on the robot when its state stops) and, once, zero
     forces, so that Gazebo does not hold the last torque against a state nobody sees.
A gap of ten periods or more between two cycles (the process held up) is logged with its length, and
/diagnostics reports the longest gap of each second.
Gazebo's ApplyJointForce holds the latest force and applies it at every physics step (gz-sim
src/systems/apply_joint_force), so the PD runs at this loop's rate with a zero-order hold, like
go2_sim's `motor_model: on_command`. Starting cycles on the state keeps the force one physics step
behind the state it comes from; a free-running loop would add up to a period more.

Rate (bridge_config has the measurements). 500 Hz by default (Gazebo's joint-state rate in the Go2
SDF), 250-1000 Hz accepted. A cycle costs ~0.6-1 ms of CPU beside the rehearsal on this 2-core machine,
so 500 Hz is ~40 % of a core; rclpy's generic message conversion would double that, which is why the
inputs are polled (not executor callbacks: ~250 µs each) and read and written as CDR bytes (ros_cdr).
Limits: the motors' PD runs at most at this rate, from states one physics step old, with each force held
until the next cycle; the Go2's drivers run their PD at kHz rates on fresh encoder readings. Below 250 Hz
the shipped policy's 1.0 m/s walk tripped the monitor's joint-speed limit here. LowStates go out at 250 Hz
by default (the Go2 sends 500): the whole rehearsal then fits the machine's real-time budget.

Foot force. Each foot's force_torque sensor reads the wrench through the fixed foot joint in the foot's
frame; rotated into the world with the IMU attitude and the leg's joint angles (MuJoCo kinematics of the
MJCF), its vertical component (sign by `foot_force_measure_direction`) is the normal contact force on
level ground, in newtons, as go2_sim reports it (bridge_core.normal_foot_forces).
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import Joy
from std_srvs.srv import SetBool

from surrogait_core import interfaces
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.runtime.realtime import enter_realtime, freeze_startup_objects
from surrogait_core.runtime.ros_node import EXIT_FAILED, declare_params, report_error, run_node
from surrogait_core.wire import go2_wire
from surrogait_core.wire.motor_driver_law import pd_torques
from surrogait_rehearsal.sim.gazebo.bridge_config import PARAMETERS, GazeboBridgeConfig  # noqa: F401  (launch test)
from surrogait_rehearsal.sim.gazebo.bridge_core import CyclePacer, GazeboState, tick_ms
from surrogait_rehearsal.sim.gazebo.bridge_io import GazeboInputs, JointForceOutputs
from surrogait_rehearsal.sim.motor_driver import LowCmdGate
from surrogait_rehearsal.sim.robot_side_inputs import RobotSideInputs

NODE_NAME = "gazebo_bridge"
READY_LINE = "Gazebo bridge:"


class Go2WireEnd:
    """The Go2's end of unitree_sdk2 DDS: rt/lowcmd read raw (LowCmdStream), rt/lowstate written (LowStateWriter)."""

    def __init__(self, config: GazeboBridgeConfig) -> None:
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
        # After ChannelFactoryInitialize, so its configuration (the interface) applies.
        self._stream = LowCmdStream(DomainParticipant(config.dds_domain))
        self.writer = LowStateWriter()

    def take_lowcmds(self, gate: LowCmdGate) -> None:
        for data, _ in self._stream.poll():
            gate.receive_sample(data)

    def write_lowstate(self, msg) -> None:
        self._publisher.Write(msg)

    def close(self) -> None:
        self._publisher.Close()


class BridgeIO(RobotSideInputs):
    """What the ROS callbacks (executor thread) and the control loop share, under one lock."""

    def __init__(self) -> None:
        super().__init__()
        self.stale_reason: str | None = "starting"
        self.lowstates_published = 0
        self.loop_rate_hz = float("nan")
        self.input_errors = 0
        self.joint_state_age_s = float("nan")
        self.joint_state_gap_max_s = 0.0  # longest wait between new Gazebo joint states since the last report
        self.cycle_gap_max_s = 0.0  # the longest time between two cycles since the last report
        self.inputs_taken: dict[str, int] = {}


class GazeboBridgeNode(Node):
    """The bridge process: Gazebo's topics on one side, the Go2's wire on the other; `run` is the control loop
    (main thread), the ROS executor (services, gamepad, diagnostics) runs on a thread of its own."""

    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self.config = config = declare_params(self, GazeboBridgeConfig)
        self.spec = load_robot_spec("go2")
        topics = config.topics
        self.state = GazeboState(self.spec, config.foot_force_sign, config.state_timeout_s)
        self.gate = LowCmdGate()
        self.io = BridgeIO()
        # Gazebo's topics are polled by the control loop, on a node no executor spins (polled_topics).
        import rclpy

        self._inputs_node = rclpy.create_node(f"{NODE_NAME}_inputs", context=self.context)
        self.inputs = GazeboInputs(self._inputs_node, topics)
        self.forces = JointForceOutputs(self, topics, self.state.order.sdk_names)
        self.wire = Go2WireEnd(config)

        self._gt_pub = self.create_publisher(Odometry, interfaces.SIM_GROUND_TRUTH, 10)
        self._diag_pub = self.create_publisher(DiagnosticArray, interfaces.DIAGNOSTICS, 10)
        self.create_subscription(Joy, interfaces.SIM_GAMEPAD, self._on_gamepad, 10)
        self.create_service(SetBool, interfaces.SIM_LOWSTATE_ENABLED, self._on_lowstate_enabled)
        self.create_timer(1.0, self._publish_diagnostics)
        self._gt = Odometry()
        self._gt.header.frame_id = "world"
        self._gt.child_frame_id = "base_link"
        self.applied_tau = np.zeros(self.spec.num_joints)
        self.pacer = CyclePacer(1.0 / self.config.control_rate_hz)

    # ---- the control loop ------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> int:
        # before the executor thread starts: it inherits the policy
        enter_realtime(self.config.realtime_priority, self.get_logger())
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self)
        spin = threading.Thread(target=executor.spin, name="ros_executor", daemon=True)
        spin.start()
        c, log = self.config, self.get_logger()
        log.info(f"{READY_LINE} DDS domain {c.dds_domain} on {c.network_interface}; PD on each Gazebo joint state "
                 f"(at most {c.control_rate_hz:g} Hz), rt/lowstate at most {c.lowstate_rate_hz:g} Hz; joint states on "
                 f"{c.joint_states_topic}, IMU on {c.imu_topic}, forces to {c.joint_force_topic}; waiting for Gazebo")
        try:
            self._loop(stop)
            stats = self.gate.snapshot()
            log.info(f"stopped; LowCmds accepted {stats.accepted}, dropped {stats.dropped_total}; LowStates "
                     f"published {self.io.lowstates_published}")
            return 0
        except Exception as e:
            report_error(NODE_NAME, f"{type(e).__name__}: {e}")
            return EXIT_FAILED
        finally:
            executor.shutdown(timeout_sec=2.0)
            spin.join(timeout=2.0)
            self.wire.close()

    def _loop(self, stop: threading.Event) -> None:
        freeze_startup_objects()  # no long GC pauses in a loop the motors depend on
        pacer = self.pacer
        # LowStates by Gazebo's clock (the joint states' stamps), so their ticks are evenly spaced; the half
        # millisecond of slack keeps a 250 Hz stream from skipping a state that is stamped a hair early.
        lowstate_period_s = 1.0 / self.config.lowstate_rate_hz - 0.5e-3
        limit = self.spec.joint_torque_limit
        last_sent_seq, next_lowstate_stamp = 0, -np.inf
        stale_since_logged: str | None = "starting"
        zeros = np.zeros(self.spec.num_joints)
        cycles = 0
        last_joint_arrival, gap_max = None, 0.0
        while not stop.is_set():
            now = pacer.wait(self.inputs.joint_states.wait)
            if pacer.is_stall(pacer.last_gap_s):
                # In the log as well as the diagnostics: a motor loop that stops is the first thing to rule in
                # or out when the robot misbehaves, and the log is what a failed run leaves behind.
                self.get_logger().warning(pacer.stall_message(pacer.last_gap_s), throttle_duration_sec=1.0)
            polled = self.inputs.poll_joint_state(self.state, now)
            if polled.new_joint_state:
                if last_joint_arrival is not None:
                    gap_max = max(gap_max, now - last_joint_arrival)
                last_joint_arrival = now
            if polled.odometry is not None:
                self._publish_ground_truth(polled.odometry)
            joints = self.state.joints
            lowstate_due = joints is not None and joints.seq != last_sent_seq and joints.stamp_s >= next_lowstate_stamp
            if lowstate_due or self.state.imu is None:
                self.inputs.poll_sensors(self.state, now, polled)
            self.wire.take_lowcmds(self.gate)
            reason = self.state.stale_reason(now)
            with self.io.lock:
                enabled, remote = self.io.lowstate_enabled, self.io.wireless_remote
            if reason is None:
                self.applied_tau = pd_torques(self.gate.latest(), joints.pos, joints.vel, limit)
                self.forces.publish(self.applied_tau)
                if stale_since_logged is not None:
                    up = interfaces.GAZEBO_BRIDGE_UP_LINE  # the Gazebo launch file starts the nodes on it
                    self.get_logger().info(f"{up}: motor PD running, rt/lowstate published")
                    stale_since_logged = None
                if lowstate_due and enabled:
                    msg = self.wire.writer.fill(self.state.readout(self.applied_tau), tick_ms(joints.stamp_s), remote)
                    self.wire.write_lowstate(msg)
                    last_sent_seq, next_lowstate_stamp = joints.seq, joints.stamp_s + lowstate_period_s
                    with self.io.lock:
                        self.io.lowstates_published += 1
            elif stale_since_logged is None:
                # Once per lapse: Gazebo holds the last force, so release the joints rather than leave them
                # pushing against a state that nobody sees; rt/lowstate stays silent until Gazebo is back.
                self.applied_tau = zeros
                self.forces.publish(zeros)
                self.get_logger().warning(f"{reason}: rt/lowstate stopped, joint forces set to zero")
                stale_since_logged = reason
            cycles += 1
            if polled.errors or cycles % 50 == 0:
                self._share_stats(pacer, reason, polled.errors, now, gap_max)
                gap_max = 0.0

    def _share_stats(self, pacer: CyclePacer, reason: str | None, errors: list[str], now: float,
                     gap_max_s: float) -> None:
        for e in errors:
            self.get_logger().warning(f"refused a Gazebo message: {e}", throttle_duration_sec=5.0)
        joints = self.state.joints
        with self.io.lock:
            # Maxima since the last diagnostics report (which resets them).
            self.io.joint_state_gap_max_s = max(self.io.joint_state_gap_max_s, gap_max_s)
            self.io.cycle_gap_max_s = max(self.io.cycle_gap_max_s, pacer.reset_gap())
            self.io.stale_reason = reason
            self.io.loop_rate_hz = pacer.measured_rate_hz()
            self.io.input_errors += len(errors)
            self.io.joint_state_age_s = float("nan") if joints is None else now - joints.arrival_s
            self.io.inputs_taken = self.inputs.counts()

    # ---- ROS side ------------------------------------------------------------------------------------
    def _publish_ground_truth(self, odom) -> None:
        """Gazebo's odometry as sim/ground_truth: the same pose (world) and twist (body), stamped on arrival
        as go2_sim stamps its own (the harness scores on arrival times)."""
        m = self._gt
        m.header.stamp = self.get_clock().now().to_msg()
        m.pose.pose = odom.pose.pose
        m.twist.twist = odom.twist.twist
        self._gt_pub.publish(m)

    def _on_gamepad(self, msg) -> None:
        self.io.set_gamepad(msg.axes, msg.buttons)

    def _on_lowstate_enabled(self, request, response):
        response.success, response.message = True, self.io.set_lowstate_enabled(request.data, "rt/lowstate")
        self.get_logger().warning(response.message)
        return response

    def _publish_diagnostics(self) -> None:
        stats = self.gate.snapshot()
        io = self.io
        with io.lock:
            values = {
                "loop_rate_hz": f"{io.loop_rate_hz:.1f}",
                "lowcmd_accepted": str(stats.accepted),
                "lowcmd_dropped": str(stats.dropped_total),
                **{f"lowcmd_dropped_{k}": str(v) for k, v in stats.dropped.items()},
                "lowstate_enabled": str(io.lowstate_enabled),
                "lowstates_published": str(io.lowstates_published),
                "gazebo_state": io.stale_reason or "fresh",
                "joint_state_age_ms": f"{io.joint_state_age_s * 1e3:.1f}",
                "joint_state_gap_max_ms": f"{io.joint_state_gap_max_s * 1e3:.1f}",
                "cycle_gap_max_ms": f"{io.cycle_gap_max_s * 1e3:.1f}",
                "input_errors": str(io.input_errors),
                **{f"taken_{k}": str(v) for k, v in io.inputs_taken.items()},
            }
            cycle_gap, enabled, stale = io.cycle_gap_max_s, io.lowstate_enabled, io.stale_reason
            io.joint_state_gap_max_s = io.cycle_gap_max_s = 0.0  # each report covers the second since the last
        problems = []
        if stale is not None:
            problems.append(stale)
        if stats.dropped_total:
            problems.append(f"{stats.dropped_total} LowCmds dropped")
        if self.pacer.is_stall(cycle_gap):
            problems.append(f"the loop stalled for {cycle_gap * 1e3:.0f} ms")
        if not enabled:
            problems.append("rt/lowstate stopped (fault injection)")
        status = DiagnosticStatus(name=NODE_NAME, hardware_id="gazebo_go2",
                                  level=DiagnosticStatus.WARN if problems else DiagnosticStatus.OK,
                                  message="; ".join(problems) or "running",
                                  values=[KeyValue(key=k, value=v) for k, v in values.items()])
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(arr)

    def destroy_node(self) -> None:
        self._inputs_node.destroy_node()
        super().destroy_node()


def main() -> None:
    """Console-script entry point (`gazebo_bridge`)."""
    code = run_node(GazeboBridgeNode, NODE_NAME)
    # As go2_sim: leave without the interpreter's teardown, where the two DDS libraries' destructors
    # (Fast DDS for ROS, Cyclone for the SDK) occasionally abort a process that stopped cleanly.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
