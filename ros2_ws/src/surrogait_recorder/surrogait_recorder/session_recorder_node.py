"""The session recorder: one MCAP file per session, written off the real-time path.

    session_recorder --ros-args --params-file config/session_recorder.yaml

A process of its own at normal priority, started beside the stack by the robot and rehearsal launch files (and
the rehearsal's Session): it subscribes to the stack's topics (topics.ROS_TOPICS) and reads the robot's wire
(wire_taps), and writes each message with its schema (session_log, message_definitions). The control loops
never wait for it; if it falls behind, DDS and the kernel keep up to a second of the wire for it.

One loop, `record_hz` times a second, takes every pending message of every topic as raw CDR bytes with its
source timestamp (rclpy's take, as its executors and `wait_for_message` do) and the Go2's wire samples: no
executor, whose callback costs ~250 µs a message here (sim/gazebo/polled_topics), so a few 100 Hz topics cost
the recorder a few percent of a core rather than a third of one.

On SIGINT (ros2 launch's Ctrl-C) it finishes the file: what it recorded, per topic, goes into the file's
metadata (`surrogait_session`) and the files of `attach_files` (the safety monitor's fault log) become
attachments.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message

from surrogait_core.runtime.ros_node import declare_params, run_node
from surrogait_recorder import topics
from surrogait_recorder.message_definitions import idl_message_definition, ros_message_definition
from surrogait_recorder.params import PARAMETERS, SessionRecorderParams, expand_output_path  # noqa: F401
from surrogait_recorder.session_log import SessionLog
from surrogait_recorder.wire_taps import DdsWireTap, UdpWireTap

NODE_NAME = "session_recorder"
READY_LINE = "session recorder: writing"
TOPIC_DEPTH = 500  # messages kept per topic between takes (1 s of a 500 Hz topic)
# Transient local for the topics whose publishers keep their last messages (the states, /rosout): what they
# published before the recorder matched them (DDS discovery takes about a second here) still arrives. A depth
# of one would keep only the newest between two takes: PASSIVE, delivered late at matching, was overwritten by
# the STAND_UP that followed within the same 20 ms.
LATCHED = QoSProfile(depth=TOPIC_DEPTH, history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)
STREAM = QoSProfile(depth=TOPIC_DEPTH, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


def message_class(type_name: str) -> type:
    """The Python class of ROS 2 message type "<package>/msg/<Type>"."""
    import importlib

    package, _, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


def _not_spun(_msg) -> None:
    raise AssertionError("the recorder's node is not spun: `take` reads its subscriptions")


MIN_RECEIVE_BUFFER_S = 2.0  # below this the recorder warns: a loaded robot computer stalls it for seconds

SDK_JOINTS = tuple(f"{leg}_{j}" for leg in ("FR", "FL", "RR", "RL") for j in ("hip", "thigh", "calf"))


class SessionRecorder(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self.params = declare_params(self, SessionRecorderParams)
        self.path = Path(expand_output_path(self.params.output_path)).expanduser().resolve()
        self.log = SessionLog(self.path)
        self.started_ns = time.time_ns()
        self._wire = None
        # Subscriptions taken by `run`'s loop: this node is never spun, so no executor takes their messages.
        self._recorded = []
        for topic in topics.ROS_TOPICS:
            self.log.add_channel(topic.resolved, topic.type_name, ros_message_definition(topic.type_name))
            sub = self.create_subscription(message_class(topic.type_name), topic.name, _not_spun,
                                           LATCHED if topic.latched else STREAM, raw=True)
            self._recorded.append((sub, topic.resolved))

    def start(self) -> None:
        p = self.params
        if p.robot == "go2":
            from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_

            for topic, idl in ((topics.GO2_LOWSTATE, LowState_), (topics.GO2_LOWCMD, LowCmd_)):
                self.log.add_channel(topic.resolved, topic.type_name, idl_message_definition(idl))
            self._wire = DdsWireTap(p.dds_domain, p.network_interface, self.log.write,
                                    topics.GO2_LOWSTATE.resolved, topics.GO2_LOWCMD.resolved)
            wire = f"rt/lowstate and rt/lowcmd on DDS domain {p.dds_domain} ({p.network_interface})"
        elif p.udp_record_port:
            for topic in topics.GO1_WIRE_TOPICS:
                self.log.add_channel(topic.resolved, topic.type_name, ros_message_definition(topic.type_name))
            self._wire = UdpWireTap(p.udp_record_port, self._on_go1_lowstate, self._on_go1_lowcmd)
            wire = (f"the Go1's packets copied by the safety monitor's gateway to 127.0.0.1:{p.udp_record_port} "
                    f"(the kernel queues {self._wire.receive_buffer_s:.1f} s of them)")
            if self._wire.receive_buffer_s < MIN_RECEIVE_BUFFER_S:
                self.get_logger().warning(
                    f"session recorder: the kernel grants {self._wire.receive_buffer_bytes >> 10} KiB of receive "
                    f"buffer, {self._wire.receive_buffer_s:.1f} s of the Go1's packets: a busy moment longer than "
                    "that drops packets from the recording (counted); raise it with "
                    "`sudo sysctl -w net.core.rmem_max=4194304`")
        else:
            wire = "no wire (udp_record_port 0)"
        self.get_logger().info(f"{READY_LINE} {self.path}: {len(topics.ROS_TOPICS)} ROS topics and {wire}")

    def run(self, stop) -> int:
        """Take and write what arrived, every 1/record_hz s, until `stop` (run_node's SIGINT/SIGTERM)."""
        period_s = 1.0 / self.params.record_hz
        if isinstance(self._wire, UdpWireTap):
            self._wire.start()  # its own thread: it blocks in recv
        while not stop.wait(period_s):
            self.take()
        self.take()
        return 0

    def take(self) -> None:
        """Every pending message of every topic (raw CDR, its writer's source timestamp), and the Go2's wire."""
        write, now_ns = self.log.write, time.time_ns()
        for sub, topic in self._recorded:
            with sub.handle:
                while (taken := sub.handle.take_message(sub.msg_type, True)) is not None:
                    cdr, info = taken
                    write(topic, cdr, now_ns, info.get("source_timestamp") or None)
        if self._wire is not None:
            self._wire.take()

    # --- the Go1's wire, decoded into standard messages -----------------------------------------

    def _joint_state(self, stamp_ns: int, position, velocity, effort):
        from sensor_msgs.msg import JointState

        msg = JointState(name=list(SDK_JOINTS), position=[float(v) for v in position],
                         velocity=[float(v) for v in velocity], effort=[float(v) for v in effort])
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        return msg

    def _on_go1_lowstate(self, view, arrival_ns: int) -> None:
        from sensor_msgs.msg import Imu

        joints = self._joint_state(arrival_ns, view.joint_pos, view.joint_vel, view.joint_tau_est)
        self.log.write(topics.GO1_LOWSTATE_JOINTS.resolved, serialize_message(joints), arrival_ns)
        imu = Imu()
        imu.header.stamp = joints.header.stamp
        imu.header.frame_id = "base_link"
        w, x, y, z = (float(v) for v in view.quat_wxyz)
        imu.orientation.w, imu.orientation.x, imu.orientation.y, imu.orientation.z = w, x, y, z
        g, a = view.gyro_b, view.accel_b
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = (float(v) for v in g)
        imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = (float(v) for v in a)
        self.log.write(topics.GO1_LOWSTATE_IMU.resolved, serialize_message(imu), arrival_ns)

    def _on_go1_lowcmd(self, command, arrival_ns: int) -> None:
        m = command.motors
        targets = self._joint_state(arrival_ns, m.q, m.dq, m.tau)
        self.log.write(topics.GO1_LOWCMD_TARGETS.resolved, serialize_message(targets), arrival_ns)
        gains = self._joint_state(arrival_ns, m.kp, m.kd, [])
        self.log.write(topics.GO1_LOWCMD_GAINS.resolved, serialize_message(gains), arrival_ns)

    # --- the end -----------------------------------------------------------------------------------

    def stop(self) -> None:
        udp = self._wire if isinstance(self._wire, UdpWireTap) else None
        if udp is not None:
            udp.stop()
            udp.take()  # what arrived between the loop's last take and the tap's stop
        p, counts = self.params, self.log.counts
        dropped = udp.dropped if udp is not None else 0
        if dropped:
            self.get_logger().warning(f"session recorder: the kernel dropped {dropped} of the Go1's packets before "
                                      "the recorder read them (its receive buffer was full: the machine too busy)")
        metadata = {"robot": p.robot, "started_unix_ns": self.started_ns, "ended_unix_ns": time.time_ns(),
                    "policy_path": p.policy_path, "messages": sum(counts.values()), "wire_packets_dropped": dropped,
                    **{f"count {topic}": n for topic, n in sorted(counts.items())}}
        if udp is not None:
            metadata["wire_receive_buffer_s"] = round(udp.receive_buffer_s, 2)
        if p.policy_path and Path(p.policy_path).is_file():
            metadata["policy_sha256"] = hashlib.sha256(Path(p.policy_path).read_bytes()).hexdigest()
        self.log.add_metadata("surrogait_session", metadata)
        for name in filter(None, (f.strip() for f in p.attach_files.split(","))):
            path = Path(name).expanduser()
            if path.is_file():
                self.log.add_attachment(path.name, "application/jsonl" if path.suffix == ".jsonl" else
                                        "application/octet-stream", path.read_bytes(), time.time_ns())
        self.log.close()
        self.get_logger().info(f"session recorder: wrote {sum(counts.values())} messages on {len(counts)} topics "
                               f"to {self.path}")


def main(argv: list[str] | None = None) -> int:
    sys.stdout.reconfigure(line_buffering=True)
    return run_node(SessionRecorder, NODE_NAME, argv, errors=(OSError,))


if __name__ == "__main__":
    raise SystemExit(main())
