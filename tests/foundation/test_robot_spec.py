"""The robot spec is read from the description and speaks the SDK's motor order."""

import numpy as np
import pytest

from surrogait_core.robot_spec import ROBOTS, UnknownRobotError, load_robot_spec

# From shared/robots/go2.md: Isaac (FL, FR, RL, RR) <-> SDK (FR, FL, RR, RL), its own inverse.
FACT_SHEET_PERMUTATION = [3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8]
SDK_ORDER = ["FR_hip", "FR_thigh", "FR_calf", "FL_hip", "FL_thigh", "FL_calf",
             "RR_hip", "RR_thigh", "RR_calf", "RL_hip", "RL_thigh", "RL_calf"]


@pytest.mark.parametrize("robot", ROBOTS)
def test_sdk_order_and_mapping_match_the_fact_sheet(robot):
    spec = load_robot_spec(robot)
    assert list(spec.joint_names) == SDK_ORDER
    assert list(spec.model_from_sdk) == FACT_SHEET_PERMUTATION
    assert list(spec.sdk_from_model) == FACT_SHEET_PERMUTATION
    assert [spec.joint_names[i] for i in spec.model_from_sdk] == list(spec.model_joint_names)


@pytest.mark.parametrize("robot", ROBOTS)
def test_order_mapping_round_trips(robot):
    spec = load_robot_spec(robot)
    x = np.random.default_rng(0).normal(size=(5, 12))
    np.testing.assert_array_equal(spec.to_sdk_order(spec.to_model_order(x)), x)
    np.testing.assert_array_equal(spec.to_model_order(spec.to_sdk_order(x)), x)


def test_go2_spec_values():
    spec = load_robot_spec("go2")
    standing = [-0.1, 0.8, -1.5, 0.1, 0.8, -1.5, -0.1, 1.0, -1.5, 0.1, 1.0, -1.5]
    np.testing.assert_array_equal(spec.default_joint_pos, standing)
    assert spec.joint_torque_limit[2] == 45.43 and spec.joint_torque_limit[0] == 23.7
    assert spec.joint_vel_limit[2] == pytest.approx(20.06)
    assert spec.foot_names == ("FR_foot", "FL_foot", "RR_foot", "RL_foot")
    assert spec.foot_radius_m == pytest.approx(0.022)
    assert np.all(spec.joint_pos_lower < spec.default_joint_pos)
    assert np.all(spec.default_joint_pos < spec.joint_pos_upper)


def test_unknown_robot_is_refused_by_name():
    with pytest.raises(UnknownRobotError, match="'b2'.*go2, go1"):
        load_robot_spec("b2")
