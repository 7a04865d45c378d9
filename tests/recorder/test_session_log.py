"""Session logs as a rosbag2 MCAP file: each recorded type's schema decodes its messages, field for field.

Foxglove Studio and PlotJuggler decode a ROS 2 MCAP file with its `ros2msg` schemas and `cdr` messages; so does
mcap-ros2-support's decoder, which these tests use on what the recorder writes. A schema that lacked a nested
type, or put a field in the wrong place, would fail to decode or decode different values. No processes: ROS
messages are serialized by rclpy, the Go2's wire samples by cyclonedds, as their publishers do.
"""

from __future__ import annotations

import array

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap.records import Schema
from mcap.well_known import MessageEncoding, SchemaEncoding
from mcap_ros2.decoder import DecoderFactory
from rclpy.serialization import serialize_message

from surrogait_recorder import topics
from surrogait_recorder.message_definitions import (
    DefinitionError,
    idl_message_definition,
    idl_type_name,
    ros_message_definition,
)
from surrogait_recorder.session_log import SessionLog
from surrogait_recorder.session_recorder_node import message_class


def decoder(type_name: str, definition: str):
    schema = Schema(id=1, name=type_name, encoding=SchemaEncoding.ROS2, data=definition.encode())
    return DecoderFactory().decoder_for(MessageEncoding.CDR, schema)


def assert_same(original, decoded, path="msg"):
    """Every field of a message (rclpy or cyclonedds IDL object) equals the decoded one's, recursively."""
    if hasattr(original, "get_fields_and_field_types"):  # rclpy message
        names = list(original.get_fields_and_field_types())
    elif hasattr(original, "__annotations__") and not isinstance(original, (list, tuple, np.ndarray)):
        names = list(type(original).__annotations__)
    else:
        names = None
    if names is not None:
        for name in names:
            assert_same(getattr(original, name), getattr(decoded, name), f"{path}.{name}")
        return
    if isinstance(original, bytes) and len(original) == 1 and isinstance(decoded, int):  # a `byte` field
        assert original[0] == decoded, (path, original, decoded)
        return
    if isinstance(original, (list, tuple, np.ndarray, bytes, bytearray, array.array)):
        original, decoded = list(original), list(decoded)
        assert len(original) == len(decoded), path
        for i, (a, b) in enumerate(zip(original, decoded, strict=True)):
            assert_same(a, b, f"{path}[{i}]")
        return
    if isinstance(original, float):  # exactly, or exactly as float32 (the IDL's float fields)
        assert decoded == original or np.float32(decoded) == np.float32(original), (path, original, decoded)
        return
    assert original == decoded, (path, original, decoded)


def filled(type_name: str):
    """A message of `type_name` with values in the fields that carry data (so a misplaced field shows)."""
    msg = message_class(type_name)()
    setters = {
        "geometry_msgs/msg/Twist": lambda m: (setattr(m.linear, "x", 0.5), setattr(m.angular, "z", -0.25)),
        "std_msgs/msg/Bool": lambda m: setattr(m, "data", True),
        "std_msgs/msg/String": lambda m: setattr(m, "data", '{"state": "DAMP", "cause": "tilt"}'),
        "sensor_msgs/msg/JointState": lambda m: (setattr(m, "name", ["FR_hip", "FR_thigh"]),
                                                  setattr(m, "position", [0.1, 0.8]), setattr(m, "velocity", [1.5]),
                                                  setattr(m.header.stamp, "sec", 12)),
        "sensor_msgs/msg/Imu": lambda m: (setattr(m.orientation, "w", 0.9), setattr(m.angular_velocity, "y", 0.3),
                                          setattr(m, "orientation_covariance", [float(i) for i in range(9)])),
        "nav_msgs/msg/Odometry": lambda m: (setattr(m, "child_frame_id", "base_link"),
                                            setattr(m.pose.pose.position, "z", 0.28),
                                            setattr(m.twist.twist.linear, "x", 0.49),
                                            setattr(m.pose, "covariance", [0.01 * i for i in range(36)])),
        "std_msgs/msg/UInt8MultiArray": lambda m: setattr(m, "data", [1, 0, 0, 1]),
        "sensor_msgs/msg/Joy": lambda m: (setattr(m, "axes", [0.0, 0.5]), setattr(m, "buttons", [0, 1, 1])),
        "rcl_interfaces/msg/Log": lambda m: (setattr(m, "level", 30), setattr(m, "name", "policy_node"),
                                             setattr(m, "msg", "DAMP: safety monitor"), setattr(m, "line", 294)),
    }
    if type_name == "diagnostic_msgs/msg/DiagnosticArray":
        from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

        msg.status = [DiagnosticStatus(level=DiagnosticStatus.WARN, name="policy_node: control loop",
                                       message="READY", values=[KeyValue(key="overruns", value="3")])]
    elif type_name in setters:
        setters[type_name](msg)
    return msg


@pytest.mark.parametrize("type_name", sorted({t.type_name for t in (*topics.ROS_TOPICS, *topics.GO1_WIRE_TOPICS)}))
def test_each_recorded_ros_type_decodes_field_for_field_with_its_schema(type_name):
    definition = ros_message_definition(type_name)
    msg = filled(type_name)
    decoded = decoder(type_name, definition)(serialize_message(msg))
    assert_same(msg, decoded)


def test_a_definition_holds_each_nested_type_once_in_rosbag2s_layout():
    definition = ros_message_definition("nav_msgs/msg/Odometry")
    blocks = definition.split("=" * 80 + "\n")
    names = [b.splitlines()[0] for b in blocks[1:]]
    assert names[0] == "MSG: std_msgs/Header"
    assert len(names) == len(set(names))
    assert {"MSG: builtin_interfaces/Time", "MSG: geometry_msgs/PoseWithCovariance", "MSG: geometry_msgs/Point",
            "MSG: geometry_msgs/Quaternion", "MSG: geometry_msgs/Vector3"} <= set(names)


def test_an_unknown_type_is_refused_by_name():
    with pytest.raises(DefinitionError, match="nav_msgs/msg/Odometri"):
        ros_message_definition("nav_msgs/msg/Odometri")


def go2_wire_samples():
    """A LowState and a LowCmd as the robot and the policy node put them on the wire (every field set)."""
    from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowCmd_, unitree_go_msg_dds__LowState_

    state = unitree_go_msg_dds__LowState_()
    state.head, state.level_flag, state.tick, state.crc = [0xFE, 0xEF], 0xFF, 123456, 0xDEADBEEF
    state.imu_state.quaternion = [0.99, 0.01, -0.02, 0.1]
    state.imu_state.accelerometer = [0.1, -0.2, 9.81]
    state.foot_force = [10, -20, 30, 40]
    state.wireless_remote = list(range(40))
    state.bms_state.cell_vol = list(range(100, 115))
    state.power_v = 28.5
    for i in range(20):
        state.motor_state[i].q, state.motor_state[i].dq = 0.1 * i, -0.05 * i
        state.motor_state[i].tau_est, state.motor_state[i].lost = 0.5 * i, i
    cmd = unitree_go_msg_dds__LowCmd_()
    cmd.head, cmd.level_flag, cmd.crc = [0xFE, 0xEF], 0xFF, 42
    cmd.led = list(range(12))
    for i in range(20):
        m = cmd.motor_cmd[i]
        m.mode, m.q, m.dq, m.tau, m.kp, m.kd = 0x01, -1.5 + 0.1 * i, 0.2, 0.3 * i, 40.0, 1.0
    return state, cmd


def test_the_go2_wire_samples_decode_with_schemas_written_from_the_sdks_types():
    for sample in go2_wire_samples():
        type_name = idl_type_name(type(sample))
        assert type_name in (topics.GO2_LOWSTATE.type_name, topics.GO2_LOWCMD.type_name)
        decoded = decoder(type_name, idl_message_definition(type(sample)))(sample.serialize())
        assert_same(sample, decoded)


def test_a_session_log_is_a_ros2_mcap_file_with_its_schemas_counts_and_metadata(tmp_path):
    from std_msgs.msg import String

    path = tmp_path / "sub" / "session.mcap"
    log = SessionLog(path)
    state, cmd = go2_wire_samples()
    log.add_channel("/policy/state", "std_msgs/msg/String", ros_message_definition("std_msgs/msg/String"))
    log.add_channel("/rt/lowstate", "unitree_go/msg/LowState", idl_message_definition(type(state)))
    for i, text in enumerate(("PASSIVE", "STAND_UP", "READY")):
        log.write("/policy/state", serialize_message(String(data=text)), 1_000_000_000 + i)
    log.write("/rt/lowstate", state.serialize(), 2_000_000_000, publish_time_ns=1_999_000_000)
    log.add_metadata("surrogait_session", {"robot": "go2", "messages": 4})
    log.add_attachment("safety_fault_log.jsonl", "application/jsonl", b'{"event": "fault"}\n', 3_000_000_000)
    log.close()
    log.write("/policy/state", serialize_message(String(data="DAMP")), 4_000_000_000)  # after close: dropped
    assert log.counts == {"/policy/state": 3, "/rt/lowstate": 1}

    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
        channels = {c.topic: c for c in summary.channels.values()}
        assert {c.message_encoding for c in channels.values()} == {"cdr"}
        assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
        assert summary.schemas[channels["/rt/lowstate"].schema_id].name == "unitree_go/msg/LowState"
        counts = {channels[t].id: n for t, n in (("/policy/state", 3), ("/rt/lowstate", 1))}
        assert summary.statistics.channel_message_counts == counts
        decoded = [(c.topic, m.publish_time, d) for _, c, m, d in reader.iter_decoded_messages()]
        assert [d.data for t, _, d in decoded if t == "/policy/state"] == ["PASSIVE", "STAND_UP", "READY"]
        (lowstate,) = [(p, d) for t, p, d in decoded if t == "/rt/lowstate"]
        assert lowstate[0] == 1_999_000_000 and lowstate[1].tick == 123456
        (metadata,) = reader.iter_metadata()
        assert metadata.name == "surrogait_session" and metadata.metadata == {"robot": "go2", "messages": "4"}
        (attachment,) = reader.iter_attachments()
        assert attachment.name == "safety_fault_log.jsonl" and attachment.data == b'{"event": "fault"}\n'
