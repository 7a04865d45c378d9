"""Without usable foot forces, contacts come from leg kinematics and the gait schedule, and the estimate holds."""

import dataclasses

import numpy as np
import pytest

from estimator.synthetic_robot import SyntheticRobot
from surrogait_core.estimator import EstimatorConfig, StateEstimator
from surrogait_core.estimator.kinematic_contact import kinematic_stance
from surrogait_core.robot_spec import load_robot_spec

DT = 0.002
POINT_FEET = EstimatorConfig(rolling_feet=False)


@pytest.fixture(scope="module")
def spec():
    return load_robot_spec("go2")


def test_the_lowest_feet_are_the_stance_feet_and_the_schedule_narrows_them():
    feet = np.array([[0.2, -0.15, -0.30], [0.2, 0.15, -0.25], [-0.2, -0.15, -0.27], [-0.2, 0.15, -0.299]])
    assert kinematic_stance(feet, None).tolist() == [True, False, False, True]
    # the schedule says FR and RR: RR is 3 cm above the lowest, within the scheduled tolerance; RL is not scheduled
    assert kinematic_stance(feet, np.array([True, False, True, False])).tolist() == [True, False, True, False]


def run(est, robot, seconds, scheduled=None):
    out = []
    for k in range(int(round(seconds / DT))):
        t = k * DT
        sample = dataclasses.replace(robot.sample(t), foot_force=np.zeros(4))  # the sensors report nothing
        _, stance = robot.feet_w(t)
        e = est.step(sample, stance if scheduled else None, contact_from_kinematics=True)
        assert e is not None
        out.append(e)
    return out


@pytest.mark.parametrize("with_schedule", [True, False], ids=["schedule+kinematics", "kinematics"])
def test_trotting_without_foot_forces_the_velocity_and_height_are_still_recovered(spec, with_schedule):
    robot = SyntheticRobot(spec, base_vel_w=(0.5, 0.0, 0.0), height_m=0.28, trot=True, seed=4)
    est = StateEstimator(spec, POINT_FEET)
    out = run(est, robot, 3.0, scheduled=with_schedule)[500:]
    vel = np.array([e.base_lin_vel_b for e in out])
    assert np.abs(vel.mean(axis=0) - robot.base_lin_vel_b()).max() < 0.03, vel.mean(axis=0)
    assert abs(np.mean([e.height_m for e in out]) - 0.28) < 0.01
    stance = np.array([e.stance for e in out])
    assert np.mean(stance[:, 0] == stance[:, 3]) > 0.9, "diagonal pairs in stance together"
    assert est.health().level != "ERROR"
