"""The Gazebo bridge's and its stand-in's pieces without ROS: joint mapping by name, foot forces from
force_torque wrenches, freshness, parameters, and the stand-in's held forces.

The foot-force check closes the loop between the two ends: the stand-in reports each foot's contact
as a force_torque sensor on the fixed foot joint would (force in the foot frame), the bridge rotates
it back with the IMU attitude and the joint angles and keeps the vertical part; on the same MuJoCo
state that must equal go2_sim's own normal contact force, standing and lying (legs folded, feet
turned).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.wire.go2_wire import MODE_SERVO, MotorCommands
from surrogait_core.wire.motor_driver_law import pd_torques
from surrogait_rehearsal.sim.gazebo.bridge_config import MIN_CONTROL_RATE_HZ, GazeboBridgeConfig
from surrogait_rehearsal.sim.gazebo.bridge_core import (
    CyclePacer,
    GazeboInputError,
    GazeboState,
    JointOrder,
    logged_stalls_ms,
    normal_foot_forces,
    tick_ms,
)
from surrogait_rehearsal.sim.gazebo.standin_config import GzStandinConfig
from surrogait_rehearsal.sim.gazebo.standin_core import ForceDrivenGo2
from surrogait_rehearsal.sim.gazebo.topics import TOPIC_PARAMETERS
from surrogait_rehearsal.sim.mujoco.core import SimConfig

SPEC = load_robot_spec("go2")
CONFIG = Path(__file__).resolve().parents[2] / "ros2_ws" / "src" / "surrogait_rehearsal" / "config"


def stand_command() -> MotorCommands:
    n = SPEC.num_joints
    return MotorCommands(np.full(n, MODE_SERVO), SPEC.default_joint_pos.copy(), np.zeros(n),
                         np.full(n, SPEC.nominal_kp), np.full(n, SPEC.nominal_kd), np.zeros(n))


def feed(state: GazeboState, robot: ForceDrivenGo2, sign: float = 1.0) -> None:
    """Give `state` what Gazebo's topics would carry of `robot` now."""
    names, q, dq, _ = robot.joint_state()
    state.set_joints(names, q, dq, robot.time_s, 0.0)
    r = robot.sim.readout()
    state.set_imu(r.quat_wxyz, r.gyro_b, r.accel_b, 0.0)
    forces, _ = robot.foot_wrenches(sign)
    for leg in range(4):
        state.set_foot_force(leg, forces[leg])


def run_pd(robot: ForceDrivenGo2, state: GazeboState, seconds: float, rate_hz: float) -> None:
    """The bridge's loop in process: PD on the newest joint state every 1/rate_hz, the force held between."""
    every = max(1, round(1.0 / (rate_hz * robot.model.opt.timestep)))
    cmd = stand_command()
    for k in range(round(seconds / robot.model.opt.timestep)):
        if k % every == 0:
            feed(state, robot)
            tau = pd_torques(cmd, state.joints.pos, state.joints.vel, SPEC.joint_torque_limit)
            for j, name in enumerate(state.order.sdk_names):
                robot.set_force(name, tau[j])
        robot.step()


def test_joints_are_mapped_by_name_whatever_the_order():
    order = JointOrder(SPEC)
    names = list(reversed(order.sdk_names))
    values = np.arange(12.0)
    mapped = order.to_sdk(names, values)
    assert [names[i] for i in order.index(names)] == list(order.sdk_names)
    np.testing.assert_array_equal(mapped, values[::-1])
    scoped = [f"go2::{n}" for n in names]
    np.testing.assert_array_equal(order.to_sdk(scoped, values), mapped)
    with pytest.raises(GazeboInputError, match="FR_hip_joint"):
        order.to_sdk(names[:-1] + ["extra_joint"], values)
    with pytest.raises(GazeboInputError, match="12 names and 11 values"):
        order.to_sdk(names, values[:-1])


def test_normal_force_is_the_vertical_part_of_the_wrench_rotated_into_the_world():
    tilt = np.deg2rad(30.0)
    about_x = np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
    rotations = np.stack([np.eye(3), about_x, about_x, np.eye(3)])
    forces = np.array([[0, 0, 40.0], [0, 0, 40.0], [0, 0, -40.0], [5.0, 0, 0]])
    np.testing.assert_allclose(normal_foot_forces(rotations, forces, 1.0), [40.0, 40.0 * np.cos(tilt), 0.0, 0.0])
    np.testing.assert_allclose(normal_foot_forces(rotations, -forces, -1.0), [40.0, 40.0 * np.cos(tilt), 0.0, 0.0])


@pytest.mark.parametrize("pose", ["stand", "lying"])
@pytest.mark.parametrize("direction", ["child_to_parent", "parent_to_child"])
def test_standin_wrenches_give_the_bridge_go2_sims_normal_foot_forces(pose, direction):
    config = GzStandinConfig.from_params({"initial_pose": pose, "foot_force_measure_direction": direction})
    robot = ForceDrivenGo2(config.sim)
    state = GazeboState(SPEC, config.foot_force_sign, 0.1)
    if pose == "stand":
        run_pd(robot, state, 0.5, 500.0)
    feed(state, robot, config.foot_force_sign)
    bridge, sim = state.foot_force_n(), robot.sim.foot_forces()
    # Not to the last bit: MuJoCo's IMU sensors (and contacts) are evaluated before a step's integration, the
    # joint positions the bridge's kinematics use after it; one 2 ms step apart, ~1e-4 N.
    np.testing.assert_allclose(bridge, sim, atol=1e-3)
    if pose == "stand":
        assert bridge.sum() == pytest.approx(SPEC.total_mass_kg * 9.81, rel=0.02)  # the feet carry the robot
        assert np.all(bridge > 20.0)


def test_the_standin_holds_each_force_until_the_next_and_clips_it_to_the_motor_limit():
    robot = ForceDrivenGo2(SimConfig(initial_pose="lying"))
    robot.set_force("FR_calf_joint", 1000.0)
    robot.set_force("FL_hip_joint", 1.5)
    for _ in range(5):
        robot.step()
        tau = robot.sim.applied_tau
        assert tau[2] == SPEC.joint_torque_limit[2] and tau[3] == 1.5 and np.count_nonzero(tau) == 2
    names, _, _, effort = robot.joint_state()
    assert list(names) != [f"{n}_joint" for n in SPEC.joint_names], "the stand-in lists joints in tree order"
    assert effort[names.index("FL_hip_joint")] == 1.5


def test_a_pd_loop_held_at_the_bridges_lowest_rate_stands_the_robot_up():
    """The zero-order hold at the lowest control_rate_hz accepted still stands the robot up from lying."""
    robot = ForceDrivenGo2(SimConfig(initial_pose="lying"))
    run_pd(robot, GazeboState(SPEC, 1.0, 0.1), 2.0, MIN_CONTROL_RATE_HZ)
    assert robot.data.qpos[2] == pytest.approx(SPEC.standing_base_height_m, abs=0.03)
    assert np.abs(robot.sim.joint_vel()).max() < 1.0


def test_the_shipped_policy_walks_at_1_m_s_through_the_bridge_core_at_its_lowest_rate():
    """Lockstep, no processes: the shipped policy's controller reads LowStates built by the bridge's core from
    what the stand-in publishes (joints by name, foot forces from wrenches), and its targets reach the joints as
    the bridge sends them: PD at MIN_CONTROL_RATE_HZ from the state one physics step old, the force held until the
    next cycle. Joint speeds and commanded torques stay inside the safety monitor's limits at 1.0 m/s (measured:
    0.74 of the speed limit, 1.19 of the torque's 1.5). The processes add jitter to this; the floor itself comes
    from the rehearsals through them (gazebo_bridge_config)."""
    from surrogait_core.policy.onnx_policy import OnnxPolicy
    from surrogait_core.policy.policy_controller import ControllerConfig, PolicyController
    from surrogait_core.policy.policy_fsm import PolicyState
    from surrogait_core.policy.policy_runner import PolicyRunner
    from surrogait_core.safety.rules import commanded_torque
    from surrogait_core.safety.thresholds import default_thresholds
    from surrogait_core.wire.go2_wire import decode_lowstate
    from surrogait_rehearsal.harness.nodes import shipped_policy_path
    from surrogait_rehearsal.sim.lowstate_writer import LowStateWriter

    robot = ForceDrivenGo2(SimConfig(initial_pose="lying"))
    state = GazeboState(SPEC, 1.0, 0.1)
    ctrl = PolicyController(PolicyRunner(OnnxPolicy(shipped_policy_path(), robot="go2")),
                            ControllerConfig(stand_up_duration_s=2.0))
    writer, limits = LowStateWriter(), default_thresholds(SPEC)
    every = round(1.0 / (MIN_CONTROL_RATE_HZ * robot.model.opt.timestep))
    cmd, t, steps, walk_log = None, 0.0, 0, []

    def policy_step(walking: bool) -> None:
        nonlocal cmd, t, steps
        feed(state, robot)
        view = decode_lowstate(writer.fill(state.readout(robot.sim.applied_tau), round(robot.time_s * 1000), [0] * 40))
        ctrl.on_lowstate(view, t)
        m = ctrl.cycle(t).targets
        cmd = MotorCommands(np.ones(12), m.q, m.dq, m.kp, m.kd, m.tau)
        for _ in range(10):  # 20 ms of physics at 500 Hz
            if steps % every == 0:  # a bridge cycle: the newest state, which is one step old
                feed(state, robot)
                tau = pd_torques(cmd, state.joints.pos, state.joints.vel, SPEC.joint_torque_limit)
                for j, name in enumerate(state.order.sdk_names):
                    robot.set_force(name, tau[j])
            robot.step()
            steps += 1
            if walking:
                q, dq = robot.sim.joint_pos(), robot.sim.joint_vel()
                walk_log.append((robot.data.qpos[2], np.abs(dq / SPEC.joint_vel_limit).max(),
                                 np.abs(commanded_torque(cmd, q, dq) / SPEC.joint_torque_limit).max(),
                                 robot.sim.ground_truth().base_lin_vel_b[0]))
        t += 0.02

    for _ in range(10):  # lying, passive: the controller has its first states
        policy_step(False)
    assert ctrl.request("stand_up", t).accepted
    while ctrl.state is not PolicyState.READY:
        policy_step(False)
        assert t < 5.0, "no stand-up"
    assert ctrl.request("walk", t).accepted
    start = t
    while t - start < 4.0:
        ctrl.on_cmd_vel(1.0, 0.0, 0.0, t)
        policy_step(t - start > 1.0)
    height, speed, torque, vx = np.array(walk_log).T
    assert height.min() > 0.15, "no fall"
    assert speed.max() < limits.joint_vel_fraction, f"joint speed {speed.max():.2f} of the limit"
    assert torque.max() < limits.commanded_torque_factor, f"commanded torque {torque.max():.2f} of the limit"
    assert vx.mean() == pytest.approx(1.0, abs=0.2)


def test_the_cycle_pacer_runs_on_new_states_at_most_at_its_rate():
    clock = [0.0]
    waits = []

    def sleep(s):
        clock[0] += s

    def state_after(delay_s):
        def wait(timeout_s):
            waits.append(round(timeout_s, 6))
            clock[0] += min(delay_s, timeout_s)
            return delay_s <= timeout_s
        return wait

    pacer = CyclePacer(0.002, clock=lambda: clock[0], sleep=sleep)
    assert pacer.wait(state_after(0.0)) == 0.0  # the first cycle at once
    assert pacer.wait(state_after(0.0)) == pytest.approx(0.002)  # a state already there: no sooner than 2 ms
    assert pacer.wait(state_after(0.0005)) == pytest.approx(0.0045)  # 0.5 ms after it may start
    # No state: one period after its slot (0.006) anyway; the late third cycle did not move the grid.
    assert pacer.wait(state_after(1.0)) == pytest.approx(0.008)
    assert waits[-1] == pytest.approx(0.002) and pacer.reset_gap() == pytest.approx(0.0035)
    assert pacer.measured_rate_hz() == pytest.approx(3 / 0.008)


def test_the_cycle_pacer_keeps_up_with_a_stream_at_its_rate_when_some_cycles_run_late():
    """Gazebo publishes joint states at the control rate; every 10th cycle here takes 1.5 periods (a busy
    machine). Each state must still get its own cycle: a pacer that spaces cycles a period after the previous
    start never catches up after a late one and lets one state in ~20 go untaken (~475 cycles/s)."""
    period, clock = 0.002, [0.0]
    taken = [-1]  # index of the newest state taken; state k arrives at k * period

    def sleep(s):
        clock[0] += s

    def wait_for_state(timeout_s):
        arrival = (taken[0] + 1) * period
        if arrival > clock[0] + timeout_s:
            clock[0] += timeout_s
            return False
        clock[0] = max(clock[0], arrival)
        return True

    pacer = CyclePacer(period, clock=lambda: clock[0], sleep=sleep)
    states_taken = 0
    for cycle in range(10_000):
        pacer.wait(wait_for_state)
        newest = math.floor(clock[0] / period + 1e-9)
        if newest > taken[0]:
            states_taken, taken[0] = states_taken + 1, newest
        clock[0] += 1.5 * period if cycle % 10 == 9 else 0.15 * period  # the cycle's work
        if clock[0] >= 1.0:
            break
    assert states_taken >= 498, f"{states_taken} of the 500 states a second got a cycle"
    assert pacer.measured_rate_hz() == pytest.approx(500.0, rel=0.01)


def test_the_cycle_pacer_reports_the_last_gap_and_calls_ten_periods_a_stall():
    clock = [0.0]

    def sleep(s):
        clock[0] += s

    pacer = CyclePacer(0.002, clock=lambda: clock[0], sleep=sleep)
    pacer.wait(lambda timeout_s: True)
    clock[0] += 0.5  # the process was held up (a blocked call, a paused VM) for half a second
    pacer.wait(lambda timeout_s: True)
    assert pacer.last_gap_s == pytest.approx(0.5) and pacer.is_stall(pacer.last_gap_s)
    pacer.wait(lambda timeout_s: True)
    assert pacer.last_gap_s < 0.0025 and not pacer.is_stall(pacer.last_gap_s)
    assert not pacer.is_stall(0.019) and pacer.is_stall(0.021)


def test_a_stall_message_reads_back_as_its_length():
    pacer = CyclePacer(0.002)
    log = "[WARN] [gazebo_bridge]: " + pacer.stall_message(0.5034) + "\n[INFO] other\n" + pacer.stall_message(0.021)
    assert logged_stalls_ms(log) == [503, 21]


def test_state_is_fresh_only_with_recent_joint_states_and_imu():
    state = GazeboState(SPEC, 1.0, timeout_s=0.1)
    assert "no joint state" in state.stale_reason(0.0)
    state.set_joints(list(state.order.sdk_names), np.zeros(12), np.zeros(12), 1.0, arrival_s=10.0)
    assert "no IMU" in state.stale_reason(10.0)
    state.set_imu(np.array([1.0, 0, 0, 0]), np.zeros(3), np.array([0, 0, 9.81]), arrival_s=10.05)
    assert state.stale_reason(10.09) is None
    assert "no joint state from Gazebo for 150 ms" in state.stale_reason(10.15)
    with pytest.raises(GazeboInputError, match="non-finite"):
        state.set_joints(list(state.order.sdk_names), np.full(12, np.nan), np.zeros(12), 1.0, 10.2)
    with pytest.raises(GazeboInputError, match="not a rotation"):
        state.set_imu(np.zeros(4), np.zeros(3), np.zeros(3), 10.2)
    state.set_imu(np.array([-2.0, 0, 0, 0]), np.zeros(3), np.zeros(3), 10.2)
    np.testing.assert_allclose(state.imu.quat_wxyz, [1, 0, 0, 0])  # normalised, one hemisphere as the Go2's IMU
    assert tick_ms(12.3456) == 12346


@pytest.mark.parametrize(("params", "message"), [
    ({"control_rate_hz": 125.0}, "control_rate_hz 125.0 must be in [250, 1000]"),
    ({"lowstate_rate_hz": 600.0}, "lowstate_rate_hz 600.0 must be in [100, control_rate_hz 500]"),
    ({"state_timeout_s": 0.001}, "state_timeout_s"),
    ({"foot_force_measure_direction": "sideways"}, "child_to_parent, parent_to_child"),
    ({"joint_force_topic": "/model/go2/joint/cmd_force"}, "must contain {joint} exactly once"),
    ({"imu_topic": "model/go2/imu"}, "not an absolute ROS topic name"),
    ({"network_interface": "nosuch0"}, "nosuch0"),
    ({"robot": "go1"}, "unknown parameter(s) robot"),
])
def test_bad_bridge_parameters_are_refused_naming_the_parameter(params, message):
    with pytest.raises(ParamError) as refused:
        GazeboBridgeConfig.from_params(params)
    assert message in str(refused.value)


def test_the_bridge_and_the_standin_package_files_name_the_same_gazebo_topics():
    def section(name):
        return yaml.safe_load((CONFIG / f"{name}.yaml").read_text())[name]["ros__parameters"]

    bridge = GazeboBridgeConfig.from_params({**section("gazebo_bridge"), "network_interface": "lo"})
    standin = GzStandinConfig.from_params(section("gz_standin"))
    assert bridge.topics == standin.topics
    assert {getattr(bridge, name) for name in TOPIC_PARAMETERS} == {d for d, _ in TOPIC_PARAMETERS.values()}
    assert bridge.foot_force_measure_direction == standin.foot_force_measure_direction
