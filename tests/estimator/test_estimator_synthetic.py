"""The estimator core on synthetic data whose truth is known exactly (run directly, not in real time)."""

import numpy as np
import pytest

from estimator.synthetic_robot import SyntheticRobot, quat_from_rpy
from surrogait_core.estimator import EstimatorConfig, StateEstimator
from surrogait_core.robot_spec import load_robot_spec

DT = 0.002
# The synthetic feet are points fixed on the ground in stance (no rolling sphere): the matching model.
POINT_FEET = EstimatorConfig(rolling_feet=False)


@pytest.fixture(scope="module")
def spec():
    return load_robot_spec("go2")


def _run(est, robot, duration_s):
    out = []
    for k in range(int(round(duration_s / DT))):
        e = est.step(robot.sample(k * DT))
        assert e is not None
        out.append(e)
    return out


def test_standing_still_for_60_s_gives_zero_velocity_and_no_height_drift(spec):
    height = 0.28
    robot = SyntheticRobot(spec, height_m=height, quat_wxyz=quat_from_rpy(0.02, -0.03, 0.7), seed=1)
    # Standing still the joints do not move: reuse one consistent set of angles (IK once), fresh noise each sample.
    base = robot.sample(0.0)
    robot.sample = lambda t: _noisy_copy(base, robot, t)
    est = StateEstimator(spec)  # the default model: standing still, nothing rolls
    out = _run(est, robot, 60.0)
    vel = np.array([e.base_lin_vel_b for e in out])
    h = np.array([e.height_m for e in out])
    pos = np.array([e.position_w for e in out])
    assert np.abs(vel[-500:].mean(axis=0)).max() < 0.005  # last second: no velocity bias
    assert np.sqrt(np.mean(vel[500:] ** 2)) < 0.02  # and little noise
    assert abs(h[-500:].mean() - height) < 0.005  # height right ...
    assert abs(h[-500:].mean() - h[500:1000].mean()) < 0.002  # ... and not drifting over 60 s
    assert np.linalg.norm(pos[-1, :2] - pos[500, :2]) < 0.02  # xy drift of a still robot: < 2 cm a minute
    assert est.health().level == "OK"
    assert est.health().rejected_total == 0


def _noisy_copy(base, robot, t):
    import dataclasses

    rng, n = robot.rng, robot.noise
    return dataclasses.replace(
        base,
        time_s=t,
        gyro_b=rng.normal(0.0, n.gyro, 3),
        accel_b=robot.rot_wb.T @ np.array([0.0, 0.0, 9.81]) + rng.normal(0.0, n.accel, 3),
        joint_pos=base.joint_pos + rng.normal(0.0, n.joint_pos, 12),
        joint_vel=rng.normal(0.0, n.joint_vel, 12),
        foot_force=np.full(4, robot.weight_n / 4) + rng.normal(0.0, n.foot_force, 4),
    )


@pytest.mark.parametrize(
    "vel_w, rpy",
    [((0.5, 0.0, 0.0), (0.0, 0.0, 0.0)), ((0.3, -0.2, 0.0), (0.04, -0.05, 0.9))],
    ids=["forward", "sideways-tilted-yawed"],
)
def test_constant_velocity_is_recovered_from_leg_kinematics_while_trotting(spec, vel_w, rpy):
    robot = SyntheticRobot(spec, base_vel_w=vel_w, height_m=0.28, quat_wxyz=quat_from_rpy(*rpy), trot=True, seed=2)
    est = StateEstimator(spec, POINT_FEET)
    out = _run(est, robot, 3.0)[500:]  # skip the first second (start from rest: the filter converges)
    vel = np.array([e.base_lin_vel_b for e in out])
    truth = robot.base_lin_vel_b()
    err = vel - truth
    assert np.abs(err.mean(axis=0)).max() < 0.01, (vel.mean(axis=0), truth)
    assert np.sqrt(np.mean(err[:, :2] ** 2)) < 0.03
    h = np.array([e.height_m for e in out])
    assert abs(h.mean() - 0.28) < 0.005
    # Odometry: the distance travelled matches the truth to a few percent.
    travelled = out[-1].position_w[:2] - out[0].position_w[:2]
    expected = np.asarray(vel_w[:2]) * (out[-1].time_s - out[0].time_s)
    assert np.linalg.norm(travelled - expected) < 0.05 * np.linalg.norm(expected)
    # Contacts follow the trot: diagonal pairs FR+RL and FL+RR alternate.
    stance = np.array([e.stance for e in out])
    assert np.array_equal(stance[:, 0], stance[:, 3]) or np.mean(stance[:, 0] == stance[:, 3]) > 0.97
    assert np.mean(stance[:, 0] != stance[:, 1]) > 0.9


def test_velocity_reported_in_body_frame_not_world(spec):
    # Yawed 90 degrees, moving along world +y: body-frame forward speed.
    robot = SyntheticRobot(spec, base_vel_w=(0.0, 0.4, 0.0), quat_wxyz=quat_from_rpy(0.0, 0.0, np.pi / 2), trot=True)
    out = _run(StateEstimator(spec, POINT_FEET), robot, 2.0)[500:]
    vel_b = np.array([e.base_lin_vel_b for e in out]).mean(axis=0)
    vel_w = np.array([e.velocity_w for e in out]).mean(axis=0)
    np.testing.assert_allclose(vel_b, [0.4, 0.0, 0.0], atol=0.02)
    np.testing.assert_allclose(vel_w, [0.0, 0.4, 0.0], atol=0.02)


def test_without_kinematics_the_imu_alone_would_drift(spec):
    """The kinematic update is what keeps the velocity: with contact thresholds no foot can reach, the same
    data integrates a biased accelerometer into a growing velocity error, unless the no-support fallback
    (a weak zero-velocity pseudo-measurement after max_flight_s) bounds it, loudly."""
    robot = SyntheticRobot(spec, seed=4)
    clean = robot.sample

    def sample(t):  # the accelerometer biased by 0.05 m/s^2 forward
        s = clean(t)
        s.accel_b = s.accel_b + np.array([0.05, 0.0, 0.0])
        return s

    robot.sample = sample
    from surrogait_core.estimator import ContactConfig

    no_feet = ContactConfig(force_on=1e6, force_off=1e5, settle_s=1e9)
    imu_only = StateEstimator(spec, EstimatorConfig(rolling_feet=False, contact=no_feet, max_flight_s=1e9))
    fallback = StateEstimator(spec, EstimatorConfig(rolling_feet=False, contact=no_feet))
    seeing = StateEstimator(spec, POINT_FEET)
    out_imu, out_fallback, out_seeing = (_run(e, robot, 4.0) for e in (imu_only, fallback, seeing))
    assert abs(out_imu[-1].base_lin_vel_b[0]) > 0.15  # ~0.05 m/s^2 x 4 s
    assert abs(out_fallback[-1].base_lin_vel_b[0]) < 0.05
    assert fallback.health().level == "WARN" and "no foot on the ground" in fallback.health().message
    assert abs(out_seeing[-1].base_lin_vel_b[0]) < 0.02 and seeing.health().level == "OK"


def test_feet_too_lightly_loaded_for_stance_still_give_the_height(spec):
    """A foot below the stance thresholds may slide, so it says nothing about the velocity; but it is on the
    ground, so it says where the ground is: the height stays known (and trusted) instead of drifting."""
    from surrogait_core.estimator import ContactConfig

    robot = SyntheticRobot(spec, height_m=0.28, seed=9)
    clean = robot.sample

    def light(t):  # every foot at 15 N: on the ground, never a stance foot (force_off 25 N)
        s = clean(t)
        s.foot_force = np.full(4, 15.0)
        return s

    robot.sample = light
    touching = StateEstimator(spec, POINT_FEET)
    blind = StateEstimator(spec, EstimatorConfig(rolling_feet=False, contact=ContactConfig(touch_force=1000.0)))
    out_touching, out_blind = (_run(e, robot, 3.0) for e in (touching, blind))
    assert not any(out_touching[-1].stance)
    assert abs(out_touching[-1].height_m - 0.28) < 0.005
    assert np.sqrt(out_touching[-1].position_cov_w[2, 2]) < 0.01
    assert touching.height_trust().trusted
    assert np.sqrt(out_blind[-1].position_cov_w[2, 2]) > 0.05  # without it: not observed, and it says so
