"""The simulated Go2 without DDS or ROS: start poses, PD standing, sensors, foot forces, LowState content."""

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire import MotorCommands
from surrogait_rehearsal.sim.lowstate_writer import LowStateWriter, foot_force_counts, rpy_from_quat
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig, SimConfigError

SPEC = load_robot_spec("go2")
N = 12
G = 9.81


def hold(q_target, kp=None, kd=None) -> MotorCommands:
    kp = SPEC.nominal_kp if kp is None else kp
    kd = SPEC.nominal_kd if kd is None else kd
    return MotorCommands(mode=np.full(N, go2_wire.MODE_SERVO), q=np.asarray(q_target, dtype=np.float64),
                         dq=np.zeros(N), kp=np.full(N, kp), kd=np.full(N, kd), tau=np.zeros(N))


def run(sim: Go2Sim, cmd, seconds: float) -> None:
    for _ in range(int(round(seconds / sim.model.opt.timestep))):
        sim.step(cmd)


@pytest.fixture(scope="module")
def standing_sim():
    sim = Go2Sim(SimConfig(initial_pose="stand", imu_gyro_noise_std=0.0, imu_acc_noise_std=0.0))
    run(sim, hold(SPEC.default_joint_pos), 0.5)
    return sim


def test_config_is_checked():
    with pytest.raises(SimConfigError, match="physics_dt"):
        SimConfig(physics_dt_s=0.005).validate()
    with pytest.raises(SimConfigError, match="initial_pose"):
        SimConfig(initial_pose="sitting").validate()
    with pytest.raises(SimConfigError, match="imu_gyro_noise_std"):
        SimConfig(imu_gyro_noise_std=-1.0).validate()


def test_lying_start_is_at_rest_on_the_floor_with_motors_passive():
    sim = Go2Sim(SimConfig(initial_pose="lying"))
    assert sim.time_s == 0.0
    z0 = sim.ground_truth().base_pos_w[2]
    assert z0 < 0.1  # the belly is on the floor, far below the standing height of ~0.29 m
    assert np.abs(sim.data.qvel).max() < 0.05
    run(sim, None, 0.5)
    assert np.all(sim.applied_tau == 0.0)
    assert abs(sim.ground_truth().base_pos_w[2] - z0) < 0.005
    assert sim.joint_pos()[2] < -2.5  # calves folded


def test_pd_to_the_default_pose_holds_the_standing_height(standing_sim):
    gt = standing_sim.ground_truth()
    assert gt.base_pos_w[2] == pytest.approx(SPEC.standing_base_height_m, abs=0.02)
    # The keyframe is the equilibrium under nominal PD: joints sag from the targets by as much there.
    np.testing.assert_allclose(standing_sim.joint_pos(), SPEC.to_sdk_order(SPEC.standing_qpos[7:]), atol=0.02)
    assert np.linalg.norm(gt.base_lin_vel_b) < 0.05


def test_pd_from_lying_stands_the_robot_up():
    sim = Go2Sim(SimConfig(initial_pose="lying"))
    q0 = sim.joint_pos()
    for k in range(750):  # 1.5 s ramp to the default pose, as a stand-up sequence
        alpha = min(1.0, k / 500)
        sim.step(hold((1 - alpha) * q0 + alpha * SPEC.default_joint_pos))
    assert sim.ground_truth().base_pos_w[2] == pytest.approx(SPEC.standing_base_height_m, abs=0.03)


def test_imu_at_rest_reports_gravity_and_level_orientation(standing_sim):
    r = standing_sim.readout()
    assert r.accel_b[2] == pytest.approx(G, abs=0.3)
    assert np.linalg.norm(r.accel_b[:2]) < 0.5
    assert r.quat_wxyz[0] > 0.99 and np.linalg.norm(r.gyro_b) < 0.05
    roll, pitch, _ = rpy_from_quat(r.quat_wxyz)
    assert abs(roll) < 0.05 and abs(pitch) < 0.05


def test_sensor_noise_is_seeded_and_has_the_configured_size():
    def readings(seed):
        sim = Go2Sim(SimConfig(initial_pose="stand", seed=seed, imu_gyro_noise_std=0.1, imu_acc_noise_std=0.2,
                               imu_quat_noise_std_rad=0.01))
        return np.array([np.concatenate([sim.readout().gyro_b, sim.readout().accel_b]) for _ in range(400)])

    a, b, c = readings(1), readings(1), readings(2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.std(a[:, :3]) == pytest.approx(0.1, rel=0.15)
    assert np.std(a[:, 3:] - a[:, 3:].mean(0)) == pytest.approx(0.2, rel=0.15)


def test_foot_forces_carry_the_weight_in_sdk_leg_order():
    sim = Go2Sim(SimConfig(initial_pose="stand"))
    run(sim, hold(SPEC.default_joint_pos), 0.5)
    forces = sim.foot_forces()
    assert forces.sum() == pytest.approx(SPEC.total_mass_kg * G, rel=0.1)
    assert np.all(forces > 0.1 * forces.sum() / 4)
    # Lift the front-right foot (SDK slot 0): only that reading drops to zero.
    q = SPEC.default_joint_pos.copy()
    q[1:3] = [1.6, -2.6]  # FR thigh up, calf folded
    run(sim, hold(q), 0.15)
    forces = sim.foot_forces()
    assert forces[0] == 0.0
    assert forces[1:].sum() > 0.5 * SPEC.total_mass_kg * G  # the other three still carry the robot


def test_push_adds_base_velocity_in_the_world_frame():
    sim = Go2Sim(SimConfig(initial_pose="stand"))
    v0 = sim.data.qvel[:3].copy()
    sim.push(np.array([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(sim.data.qvel[:3] - v0, [0.5, 0.0, 0.0])
    assert sim.ground_truth().base_ang_vel_b[2] == pytest.approx(1.0, abs=0.05)  # level base: body z ≈ world z


def test_foot_force_counts_are_newtons_as_int16():
    assert foot_force_counts(np.array([37.4, 0.0, -2.0, 1e6])) == [37, 0, 0, 32767]


def test_lowstate_round_trips_through_the_shared_decoder(standing_sim):
    from unitree_sdk2py.utils.crc import CRC

    r = standing_sim.readout()
    remote = go2_wire.encode_gamepad(go2_wire.Gamepad(frozenset({"L2", "A"}), 0.1, -0.4, 0.2, 0.0))
    msg = LowStateWriter().fill(r, 1234, remote)
    assert msg.crc == CRC().Crc(msg)
    view = go2_wire.decode_lowstate(msg)
    assert view.tick_ms == 1234
    np.testing.assert_allclose(view.joint_pos, r.joint_pos, atol=1e-6)
    np.testing.assert_allclose(view.joint_vel, r.joint_vel, atol=1e-5)
    np.testing.assert_allclose(view.joint_tau_est, r.joint_tau_est, atol=1e-5)
    np.testing.assert_allclose(view.quat_wxyz, r.quat_wxyz, atol=1e-6)
    np.testing.assert_allclose(view.accel_b, r.accel_b, atol=1e-5)
    np.testing.assert_array_equal(view.foot_force, foot_force_counts(r.foot_force_n))
    assert view.gamepad.keys == {"L2", "A"} and view.gamepad.ly == pytest.approx(-0.4)


def test_fast_lowstate_encoding_matches_the_sdk_serializer_and_crc_byte_for_byte():
    from unitree_sdk2py.utils.crc import CRC

    sim = Go2Sim(SimConfig(initial_pose="lying", imu_quat_noise_std_rad=0.02, seed=3))
    writer = LowStateWriter()
    rng = np.random.default_rng(0)
    for k in range(20):
        sim.step(hold(SPEC.default_joint_pos) if k > 5 else None)
        remote = [int(b) for b in rng.integers(0, 256, 40)]
        msg = writer.fill(sim.readout(), 4_000_000_000 + 7 * k, remote)
        assert msg.serialize() == type(msg).serialize(msg, use_version_2=False)  # the generic IDL serializer
        assert msg.crc == CRC().Crc(msg)
        assert msg.serialize(use_version_2=True) == type(msg).serialize(msg, use_version_2=True)
