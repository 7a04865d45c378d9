"""The simulator as a process: real DDS on loopback (unitree_sdk2py), real rclpy, real MuJoCo.

Each test runs `go2_sim` (started by the rehearsal harness) and a small robot-side client
(sim_dds_client.py) as separate processes on its own DDS domain (11-19).
"""

from __future__ import annotations

import json
import signal
import time

import numpy as np
import pytest

from surrogait_core import interfaces
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire

SPEC = load_robot_spec("go2")
STOP_TIMEOUT_S = 90.0  # the simulator finishes its recording and video before it exits
pytestmark = pytest.mark.rehearsal


def _spin_for(executor, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.02)


def test_lowstate_stream_ground_truth_and_fault_injection(start_sim, start_client, dds_domain):
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import Joy
    from std_srvs.srv import SetBool

    sim = start_sim()
    client = start_client("--mode", "monitor", "--duration", "0")  # until its stdin closes
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=dds_domain)
    try:
        node = rclpy.create_node("sim_test", context=ctx)
        executor = SingleThreadedExecutor(context=ctx)
        executor.add_node(node)
        odoms, diags = [], []
        node.create_subscription(Odometry, interfaces.SIM_GROUND_TRUTH,
                                 lambda m: odoms.append((time.monotonic(), m)), 1000)
        node.create_subscription(DiagnosticArray, interfaces.DIAGNOSTICS, diags.append, 10)
        joy_pub = node.create_publisher(Joy, interfaces.SIM_GAMEPAD, 10)
        push_pub = node.create_publisher(Twist, interfaces.SIM_PUSH, 10)
        enable = node.create_client(SetBool, interfaces.SIM_LOWSTATE_ENABLED)
        assert enable.wait_for_service(timeout_sec=10.0)
        lines = [client.stdout.readline().strip()]
        while lines[-1] not in ("receiving", "no lowstate", "") and len(lines) < 50:  # skip SDK chatter
            lines.append(client.stdout.readline().strip())
        assert lines[-1] == "receiving", lines

        _spin_for(executor, 1.2)
        buttons = [0] * 16
        buttons[go2_wire.KEY_BITS["L2"]] = buttons[go2_wire.KEY_BITS["A"]] = 1
        joy_pub.publish(Joy(axes=[0.25, -0.5, 0.0, 0.0], buttons=buttons))
        x_before = odoms[-1][1].pose.pose.position.x
        push = Twist()
        push.linear.y = 1.5  # a sideways shove, world frame
        t_push = time.monotonic()
        push_pub.publish(push)
        _spin_for(executor, 0.3)

        def set_enabled(value: bool) -> float:
            future = enable.call_async(SetBool.Request(data=value))
            executor.spin_until_future_complete(future, timeout_sec=5.0)
            assert future.result().success
            return time.monotonic()

        t_off = set_enabled(False)
        _spin_for(executor, 0.6)
        t_on = set_enabled(True)
        _spin_for(executor, 0.8)
        out, err = client.communicate(input="", timeout=30)
        assert client.returncode == 0, err
        report = json.loads(out.strip().splitlines()[-1])
        _spin_for(executor, 1.1)  # one more diagnostics period
    finally:
        if client.poll() is None:
            client.kill()
        rclpy.shutdown(context=ctx)

    rows = report["rows"]
    wall = np.array([r["wall"] for r in rows])
    ticks = np.array([r["tick"] for r in rows])
    # rt/lowstate: ticks in ms, strictly increasing, 2 ms apart at 500 Hz; every message sealed with its CRC.
    assert len(rows) > 300
    assert np.all(np.diff(ticks) > 0)
    assert np.median(np.diff(ticks)) == 2
    assert all(r["crc_ok"] for r in rows)
    before_off = (wall > wall[0] + 0.2) & (wall < t_off - 0.05)
    rate = before_off.sum() / (wall[before_off][-1] - wall[before_off][0])
    # Wall-clock rate: loose bounds, as 2 shared CPU cores can slow the simulator below real time;
    # publishing at a wrong rate (every 5th step, or twice per step) still fails.
    assert 0.5 * 500 < rate < 1.1 * 500, f"lowstate rate {rate:.0f} Hz"
    # Stopping rt/lowstate (fault injection) leaves a gap while the physics runs on (ticks are
    # simulated time; the 0.6 s pause must show, give or take scheduling); restarting resumes it.
    tick_gaps_s = np.diff(ticks) / 1000.0
    assert 0.4 < tick_gaps_s.max() < (t_on - t_off) + 0.5, tick_gaps_s.max()
    assert np.sum(tick_gaps_s > 0.1) == 1
    assert ticks[-1] - ticks[np.argmax(tick_gaps_s) + 1] > 300  # the stream came back
    # The gamepad from sim/gamepad appears in wireless_remote.
    assert rows[-1]["keys"] == ["A", "L2"] and rows[-1]["lx"] == pytest.approx(0.25)
    assert rows[0]["keys"] == []

    # Ground truth: ~100 Hz, world pose of the robot lying on the floor, body-frame twist.
    # The shove moved the lying robot sideways (it slides, then friction stops it), and only then.
    y = np.array([m.pose.pose.position.y for _, m in odoms])
    t_gt = np.array([t for t, _ in odoms])
    assert np.ptp(y[t_gt < t_push]) < 0.002
    assert y[-1] - y[t_gt < t_push][-1] > 0.02
    assert abs(odoms[-1][1].pose.pose.position.x - x_before) < 0.05
    # ~100 Hz by the simulator's own stamps (this test process may read them late, not lose them).
    stamps = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for _, m in odoms])
    window = (stamps > stamps[0] + 0.5) & (stamps < stamps[0] + 1.5)
    assert 80 <= window.sum() <= 110, f"{window.sum()} ground-truth messages in 1 s"
    last = odoms[-1][1]
    assert (last.header.frame_id, last.child_frame_id) == ("world", "base_link")
    assert last.pose.pose.position.z < 0.1 and last.pose.pose.orientation.w > 0.99
    assert abs(last.twist.twist.linear.x) < 0.05

    status = [s for a in diags for s in a.status if s.name == "go2_sim"]
    assert status, "no diagnostics from go2_sim"
    values = {kv.key: kv.value for kv in status[-1].values}
    assert 0.3 < float(values["realtime_factor"]) < 1.1
    assert values["lowcmd_dropped"] == "0"
    assert sim.stop(signal.SIGTERM, STOP_TIMEOUT_S) == 0


def test_lowcmd_with_pd_to_the_default_pose_stands_the_robot_up(start_sim, run_client, tmp_path):
    log_path, video_path = tmp_path / "sim_log.npz", tmp_path / "robot.mp4"
    sim = start_sim(log_path=str(log_path), video_path=str(video_path), video_fps=5.0, video_width=160,
                    video_height=120)
    report = run_client("--mode", "stand", "--duration", "3.0")
    assert sim.stop(signal.SIGTERM, STOP_TIMEOUT_S) == 0, sim.log
    assert report["lowcmds_written"] > 50

    log = np.load(log_path)
    assert log["lowcmd_accepted"][-1] >= report["lowcmds_written"] - 5 and log["lowcmd_dropped"][-1] == 0
    z = log["base_pos_w"][:, 2]
    assert z[0] < 0.1  # started lying
    assert z[-1] == pytest.approx(SPEC.standing_base_height_m, abs=0.03)
    assert np.all(np.isnan(log["cmd_kp"][0])) and np.all(log["cmd_kp"][-1] == SPEC.nominal_kp)
    tau = log["joint_tau"]
    assert np.all(tau[0] == 0.0) and np.abs(tau[-1]).max() > 1.0  # passive until the first LowCmd, then working
    assert np.all(np.abs(tau) <= SPEC.joint_torque_limit + 1e-9)
    assert np.all(np.diff(log["time_s"]) == pytest.approx(0.02, abs=1e-6))  # 50 Hz rows in sim time
    # Standing on its feet: they carry the weight (the belly carried it while lying).
    assert log["foot_force_n"][0].sum() < 0.5 * SPEC.total_mass_kg * 9.81
    assert log["foot_force_n"][-1].sum() == pytest.approx(SPEC.total_mass_kg * 9.81, rel=0.15)
    assert video_path.stat().st_size > 1000 and "video:" in sim.log


@pytest.mark.parametrize(("command_rate_hz", "stands"), [
    (500.0, True),  # a new torque at nearly every physics step: as the robot's drivers
    (10.0, False),  # a 10 Hz PD loop (the core diverges below ~23 Hz): proves each LowCmd sets the torque once
])
def test_on_command_motor_model_stands_the_robot_up_with_a_500_hz_stream(start_sim, run_client, tmp_path,
                                                                         command_rate_hz, stands):
    log_path = tmp_path / "sim_log.npz"
    sim = start_sim(motor_model="on_command", log_path=str(log_path))
    report = run_client("--mode", "stand", "--duration", "3.0", "--rate-hz", str(command_rate_hz))
    assert sim.stop(signal.SIGTERM, STOP_TIMEOUT_S) == 0, sim.log
    assert "motor model on_command" in sim.log

    log = np.load(log_path)
    assert log["lowcmd_dropped"][-1] == 0
    assert log["lowcmd_accepted"][-1] >= report["lowcmds_written"] - 5
    # Judge the robot while the stream ran: afterwards on_command holds the last torque, with no PD.
    t_end_s = report["rows"][-1]["tick"] / 1000.0
    during = log["time_s"] <= t_end_s
    assert log["base_pos_w"][0, 2] < 0.1  # started lying
    last_half_second = during & (log["time_s"] > t_end_s - 0.5)
    height_m = log["base_pos_w"][during][-1, 2]
    fastest_joint_rad_s = np.abs(log["joint_vel"][last_half_second]).max()
    standing = abs(height_m - SPEC.standing_base_height_m) < 0.03 and fastest_joint_rad_s < 1.0
    assert standing == stands, (f"{report['lowcmds_written']} LowCmds: base height {height_m:.3f} m, "
                                f"fastest joint {fastest_joint_rad_s:.1f} rad/s")


def test_lowcmd_with_a_bad_crc_is_dropped_and_never_moves_a_motor(start_sim, run_client, tmp_path):
    log_path = tmp_path / "sim_log.npz"
    sim = start_sim(log_path=str(log_path))
    report = run_client("--mode", "stand", "--duration", "2.0", "--bad-crc")
    assert sim.stop(signal.SIGINT, STOP_TIMEOUT_S) == 0  # Ctrl-C: a clean stop, recording written
    assert report["lowcmds_written"] > 25

    log = np.load(log_path)
    assert log["lowcmd_accepted"][-1] == 0
    assert log["lowcmd_dropped"][-1] >= report["lowcmds_written"] - 5  # all but those in flight at shutdown
    assert np.all(log["joint_tau"] == 0.0)  # the motors stayed passive
    assert np.all(np.isnan(log["cmd_q"]))
    assert log["base_pos_w"][:, 2].max() < 0.1  # still lying
    np.testing.assert_allclose(log["joint_pos"][-1], log["joint_pos"][0], atol=0.01)
    assert "'crc': " in sim.log and "'crc': 0" not in sim.log
