"""The Gazebo bridge as a process, against the MuJoCo stand-in for Gazebo, with a robot-side DDS client.

`gz_standin` publishes what gz sim + ros_gz_bridge would (joint states, IMU, foot wrenches, odometry)
and applies the joint forces it receives; `gazebo_bridge` turns that into the Go2's wire; the client
(sim_dds_client.py, as in the go2_sim tests) speaks unitree_sdk2 DDS to the bridge exactly as it does
to go2_sim. So these tests hold the bridge to go2_sim's contract: a CRC-valid rt/lowstate stream whose
ticks are simulated milliseconds, LowCmds that stand the robot up, and — the bridge's own rule — no
rt/lowstate while Gazebo is silent (the stand-in stopped with SIGSTOP, as a hung gz sim would be).
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_rehearsal.harness.processes import ProcessGroup
from surrogait_rehearsal.harness.session import Session, SessionConfig
from surrogait_rehearsal.sim.gazebo.bridge_core import logged_stalls_ms

OWN_TARGET = "make test-gazebo: the Gazebo path's rehearsals, a target of their own (scripts/run_tests.py)"

SPEC = load_robot_spec("go2")
pytestmark = pytest.mark.rehearsal


@pytest.fixture
def gazebo_side(tmp_path, dds_domain):
    """start(**standin_params) -> (stand-in, bridge), both up, on this test's domain: the Gazebo side of a rehearsal
    session (its packages' parameters files), with no deployment node; killed at teardown."""
    sessions = []

    def start(**standin_params):
        config = SessionConfig(tmp_path, domain=dds_domain, simulator="gazebo-standin", nodes=(), sim_log=False,
                               niceness=None, params={"gz_standin": standin_params}, operator_name="bridge_test")
        session = Session(config, log=lambda _: None)
        sessions.append(session)
        session.start()
        session.wait_ready()
        return session.group["gz_standin"], session.group["gazebo_bridge"]

    yield start
    for session in sessions:
        session.group.kill_all()
        session.stop()


def thread_names(pid: int) -> set[str]:
    return {(task / "comm").read_text().strip() for task in Path(f"/proc/{pid}/task").iterdir()}


def test_lowcmds_through_the_bridge_stand_the_standin_robot_up(gazebo_side, run_client, tmp_path):
    log_path = tmp_path / "standin_log.npz"
    standin, bridge = gazebo_side(log_path=str(log_path))
    # every node's ROS participant is on UDP alone (surrogait_core/runtime/dds_transport.py)
    assert not any(name.startswith("dds.shm") for name in thread_names(bridge.process.pid)), bridge.log[:1500]
    assert not any(name.startswith("dds.shm") for name in thread_names(standin.process.pid)), standin.log[:1500]
    report = run_client("--mode", "stand", "--duration", "3.0")
    assert bridge.stop(signal.SIGINT, 30) == 0, bridge.log
    assert standin.stop(signal.SIGINT, 60) == 0, standin.log
    stalls = f"bridge stalls (ms): {logged_stalls_ms(bridge.log)}"

    rows = report["rows"]
    assert report["lowcmds_written"] > 50 and len(rows) > 250
    assert all(r["crc_ok"] for r in rows), "every rt/lowstate carries a valid CRC"
    ticks = np.array([r["tick"] for r in rows])
    assert np.all(np.diff(ticks) > 0), "one LowState per new Gazebo state, ticks in simulated ms"
    assert np.median(np.diff(ticks)) == pytest.approx(4.0), "lowstate_rate_hz 250 of the 500 Hz joint states"
    assert sum(report["last_foot_force"]) == pytest.approx(SPEC.total_mass_kg * 9.81, rel=0.15), stalls
    assert "LowCmds accepted" in bridge.log and "dropped 0;" in bridge.log, bridge.log[-1500:]

    log = np.load(log_path)
    z = log["base_pos_w"][:, 2]
    assert z[0] < 0.1 and z[-1] == pytest.approx(SPEC.standing_base_height_m, abs=0.03), stalls
    # The last LowState's joints are the stand-in's at that tick (its recording's row within 10 ms of it).
    row = np.argmin(np.abs(log["time_s"] - ticks[-1] / 1000.0))
    assert abs(log["time_s"][row] - ticks[-1] / 1000.0) <= 0.0101
    np.testing.assert_allclose(report["last_joint_pos"], log["joint_pos"][row], atol=0.02, err_msg=stalls)
    # Standing near the default pose, not on it: the feet planted wide while lying keep the hips ~0.12 rad out and
    # the knees ~0.13 rad more bent against the PD (kp 40, ~5 N·m), as go2_sim stands up from the same commands.
    np.testing.assert_allclose(log["joint_pos"][-1], SPEC.default_joint_pos, atol=0.2, err_msg=stalls)
    tau = log["joint_tau"]
    assert np.all(tau[0] == 0.0), "passive until the first LowCmd"
    assert np.all(np.abs(tau) <= SPEC.joint_torque_limit + 1e-9)


def test_a_silent_gazebo_stops_the_lowstate_stream_until_it_is_back(gazebo_side, start_client):
    standin, bridge = gazebo_side()
    client = start_client("--mode", "monitor", "--duration", "0")  # until its stdin closes
    lines = [client.stdout.readline().strip()]
    while lines[-1] not in ("receiving", "no lowstate", "") and len(lines) < 50:  # skip SDK chatter
        lines.append(client.stdout.readline().strip())
    assert lines[-1] == "receiving", lines
    time.sleep(1.0)
    stopped_at = time.monotonic()
    standin.process.send_signal(signal.SIGSTOP)  # Gazebo hangs: no joint states, no IMU
    time.sleep(1.5)
    # Read the clock before the signal, not after: SIGCONT wakes a real-time stand-in that runs ahead of this
    # normal-priority test, and the bridge's first LowState came 2-3 ms after the signal call returned (measured).
    resumed_at = time.monotonic()
    standin.process.send_signal(signal.SIGCONT)
    time.sleep(1.5)
    out, _ = client.communicate(input="", timeout=30)
    rows = json.loads(out.strip().splitlines()[-1])["rows"]
    walls = np.array([r["wall"] for r in rows])
    during = walls[(walls > stopped_at + 0.3) & (walls < resumed_at)]  # state_timeout_s 0.1, plus slack
    assert during.size == 0, f"{during.size} LowStates while Gazebo was silent"
    assert np.count_nonzero(walls > resumed_at) > 100, "the stream resumes with Gazebo"
    assert np.count_nonzero(walls < stopped_at) > 100
    log = bridge.log
    # The bridge says why the stream stopped: its loop saw the silence. Before its participant went onto UDP alone
    # (surrogait_core/runtime/dds_transport.py), a stand-in stopped inside Fast DDS's shared-memory port lock held
    # the bridge's sends up, and its loop stood still for the whole silence (2 of 300 stops,
    # bench/results/bridge_stop_stalls_shm.md; on UDP alone 0 of 300, bridge_stop_stalls.md).
    assert "rt/lowstate stopped" in log and log.rindex("is fresh") > log.index("rt/lowstate stopped"), log[-2000:]


def test_a_bridge_that_was_held_up_says_so_in_its_log(gazebo_side):
    """A stalled motor loop is the first thing to rule in or out when a rehearsal goes wrong, and the log is what
    a failed run leaves behind: the bridge logs a stall of ten periods or more, with its length."""
    _, bridge = gazebo_side()
    bridge.wait_for_log("is fresh", 30.0)
    bridge.process.send_signal(signal.SIGSTOP)  # the whole process held up, as by a blocked call or a paused VM
    time.sleep(0.3)
    bridge.process.send_signal(signal.SIGCONT)
    bridge.wait_for_log("the control loop stalled for", 10.0)
    stall_ms = logged_stalls_ms(bridge.log)[0]
    assert 250 <= stall_ms <= 2000, bridge.log[-1500:]


@pytest.mark.parametrize(("params", "message"), [
    ({"control_rate_hz": 50.0}, "control_rate_hz 50.0 must be in [250, 1000]"),
    ({"network_interface": "nosuch0"}, "network_interface 'nosuch0' does not exist"),
])
def test_bad_bridge_parameters_exit_2_naming_the_parameter(tmp_path, dds_domain, params, message):
    group = ProcessGroup(tmp_path, dds_domain)
    try:
        bridge = group.start_node("gazebo_bridge", params)
        assert bridge.process.wait(timeout=60) == 2
        assert "gazebo_bridge: error:" in bridge.log and message in bridge.log, bridge.log
    finally:
        group.kill_all()
