"""safety_monitor refuses malformed parameters with a clear message and a non-zero exit (no DDS needed)."""

import os
import subprocess
from pathlib import Path

import pytest

BESIDE_REHEARSALS = ("each node exits at start-up; its DDS domain is this file's own, its Go1 ports the robot's "
                     "defaults (no rehearsal uses them)")
DOMAIN = "93"
REPO = Path(__file__).resolve().parents[2]
PACKAGE_CONFIG = REPO / "ros2_ws" / "src" / "surrogait_safety" / "config"
SHIPPED_POLICY = REPO / "ros2_ws" / "src" / "surrogait_bringup" / "policies" / "go2_trot.onnx"
GO1_POLICY = REPO / "ros2_ws" / "src" / "surrogait_bringup" / "policies" / "go1_trot.onnx"
GO1 = f"    robot: go1\n    policy_path: {GO1_POLICY}\n    udp_robot_ip: 127.0.0.1\n"


def run_monitor(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    params = tmp_path / "params.yaml"
    if "policy_path" not in body:
        body = f"    policy_path: {SHIPPED_POLICY}\n" + body
    params.write_text("safety_monitor:\n  ros__parameters:\n" + body)
    env = dict(os.environ, ROS_DOMAIN_ID=DOMAIN, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return subprocess.run(["safety_monitor", "--ros-args", "--params-file", str(params)], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)


@pytest.mark.parametrize("body, message", [
    ("    thresholds:\n      max_rol_rad: 0.5\n", "unknown parameter(s) ['thresholds.max_rol_rad']"),
    ("    thresholds:\n      max_roll_rad: -0.5\n", "must be a finite number >= 0"),
    ("    thresholds:\n      damping_kd: 0.0\n", "damping_kd"),
    ("    check_rate_hz: 10.0\n", "check_rate_hz"),
    ("    check_rate_hz: 40.0\n", "below the control rate 50 Hz"),
    ("    thresholds:\n      control_period_s: 0.01\n", "reads the control period from the policy file's contract"),
    ("    policy_path: ''\n", "'policy_path' is empty"),
    ("    policy_path: no/such/policy.onnx\n", "policy file not found"),
    ("    robot: spot\n", "expected one of go2, go1"),
    ("    fault_log_path: /proc/no/such/dir/log.jsonl\n", "fault_log_path"),
    ("    network_interface: eth9\n", "network_interface 'eth9' does not exist"),
    # The Go1: the gateway's link.
    ("    robot: go1\n    udp_robot_ip: 127.0.0.1\n", "trained for the 'go2'"),
    (f"    robot: go1\n    policy_path: {GO1_POLICY}\n", "not one in 192.168.123.x where the robot (192.168.123.10)"),
    (GO1 + "    udp_policy_port: 28019\n    udp_estimator_port: 28019\n", "also used for another socket"),
    (GO1 + "    udp_robot_port: 70000\n", "'udp_robot_port' must be a UDP port"),
])
def test_bad_params_exit_with_a_clear_message(tmp_path, body, message):
    result = run_monitor(tmp_path, body)
    assert result.returncode == 2, result.stderr + result.stdout
    assert message in result.stderr, result.stderr


def test_go1_gateway_ports_in_use_are_named(tmp_path):
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        result = run_monitor(tmp_path, GO1 + f"    udp_policy_port: {port}\n")
    assert result.returncode == 2, result.stderr + result.stdout
    assert f"policy side 127.0.0.1:{port}" in result.stderr and "Address already in use" in result.stderr, \
        result.stderr


def test_shipped_params_file_is_complete_and_valid():
    import yaml

    from surrogait_core.safety.thresholds import TUNABLE_FIELDS

    text = (PACKAGE_CONFIG / "safety_monitor.yaml").read_text()
    params = yaml.safe_load(text)["safety_monitor"]["ros__parameters"]
    assert set(params) == {"robot", "dds_domain", "network_interface", "check_rate_hz", "realtime_priority",
                           "odom_timeout_s", "policy_path", "fault_log_path", "thresholds",
                           "allow_lowstate_without_crc", "diagnostics_period_s"}
    # Every tunable threshold is documented in the file (set or commented out with its default).
    for name in TUNABLE_FIELDS:
        assert f"{name}:" in text, name
