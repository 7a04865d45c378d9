"""Pre-flight: a policy flies the session it is about to walk, in MuJoCo at the drivers' PD step, and is
cleared only when no robot falls and every safety rule's peak stays under 0.9 of the monitor's threshold."""

from __future__ import annotations

import pytest
import torch

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_train.env import make_contract
from surrogait_train.export import export_onnx
from surrogait_train.networks import Actor
from surrogait_train.preflight import (
    PREFLIGHT_CEILING,
    PREFLIGHT_POSITION_CEILING,
    PreflightResult,
    SessionStep,
    best_cleared,
    preflight,
)

SHIPPED = "ros2_ws/src/surrogait_bringup/policies/go2_trot.onnx"
WALK = [SessionStep(2.0, (0.5, 0.0, 0.0)), SessionStep(1.0, (0.0, 0.0, 0.0))]


def flailing_policy(tiny_config, path):
    """An actor whose actions swing between the clip limits: targets jump across the joints' range."""
    contract = make_contract(tiny_config.env)
    actor = Actor(contract.obs_size, contract.action_size, [16])
    torch.manual_seed(0)
    with torch.no_grad():
        for p in actor.net.parameters():
            p.normal_(0, 30.0)
    return export_onnx(actor, contract, path)


def test_the_shipped_policy_is_cleared_with_every_rule_under_the_ceiling():
    result = preflight(SHIPPED, WALK, robots=4)
    assert result.cleared, result.summary()
    assert result.falls == 0 and 0.0 < result.worst <= PREFLIGHT_CEILING
    assert 0.0 < result.joint_speed and 0.0 < result.commanded_torque and 0.0 < result.tilt
    assert len(result.joint_speed_by_joint) == 12
    assert max(result.joint_speed_by_joint.values()) == result.joint_speed_by_joint[result.joint_speed_joint]
    assert result.session_s == 3.0
    ratio, faster = result.left_right_imbalance
    assert ratio >= 1.0 and faster in result.joint_speed_rms_by_joint


def test_a_flailing_policy_is_caught_by_the_rules_it_breaks(tiny_config, tmp_path):
    result = preflight(flailing_policy(tiny_config, tmp_path / "flail.onnx"), WALK, robots=4)
    assert not result.cleared
    # a target across the range asks the motors for more than the monitor's 1.5 x their torque limit
    assert result.commanded_torque > 1.0, result.summary()
    th = default_thresholds(load_robot_spec("go2"))
    assert th.commanded_torque_factor == 1.5  # the threshold the fraction is of


def test_the_choice_is_the_cleared_policy_that_tracks_best_else_the_closest(tiny_config, tmp_path):
    flail = flailing_policy(tiny_config, tmp_path / "flail.onnx")
    flown = []
    chosen, results = best_cleared([flail, SHIPPED], WALK, robots=4, report=lambda i, r: flown.append(i))
    assert chosen == 1 and flown == [0, 1] and results[1].cleared and not results[0].cleared
    chosen, results = best_cleared([flail, flail], WALK, robots=4)
    assert chosen == 0 and not any(r.cleared for r in results)


def test_a_good_tracker_holds_both_its_speed_and_its_heading():
    def flown(vx_rmse: float, yaw_rate_rmse: float) -> PreflightResult:
        return PreflightResult(policy="p", robots=4, session_s=3.0, falls=0, joint_speed=0.5, joint_speed_joint="j",
                               joint_speed_by_joint={}, joint_speed_rms_by_joint={}, commanded_torque=0.5,
                               commanded_torque_joint="j", motor_saturation=0.0, tilt=0.3, vx_rmse=vx_rmse,
                               yaw_rate_rmse=yaw_rate_rmse)

    # against the eval's bounds (0.15 m/s, 0.2 rad/s): a policy that keeps its speed but spins tracks worse
    spinning, steady = flown(0.05, 0.40), flown(0.12, 0.10)
    assert spinning.tracking == pytest.approx(2.0) and steady.tracking == pytest.approx(0.8)
    assert steady.tracking < spinning.tracking


def test_the_shipped_policy_is_flown_with_its_yaw_rate_error_measured():
    result = preflight(SHIPPED, [SessionStep(2.0, (0.5, 0.0, 0.5))], robots=2)
    assert 0.0 < result.yaw_rate_rmse < 0.5, result.summary()
    assert "yaw-rate RMSE" in result.summary()


def test_a_joint_that_overshoots_its_soft_range_towards_the_position_fault_is_not_cleared():
    # the shipped Go2 trot keeps every joint inside its soft range; a result whose calf went 0.8 of the way from its
    # soft limit to the monitor's position fault is refused even though 0.8 is under the other rules' ceiling
    assert preflight(SHIPPED, WALK, robots=4).joint_position < PREFLIGHT_POSITION_CEILING
    overshoot = PreflightResult(policy="p", robots=1, session_s=1.0, falls=0, joint_speed=0.5, joint_speed_joint="j",
                                joint_speed_by_joint={}, joint_speed_rms_by_joint={}, commanded_torque=0.5,
                                commanded_torque_joint="j", motor_saturation=0.0, tilt=0.3, vx_rmse=0.1,
                                joint_position=0.8, joint_position_joint="FL_calf")
    assert overshoot.worst == 0.8 and not overshoot.cleared
    assert "joint position 0.80 (FL_calf)" in overshoot.summary()


def command_following_policy(tiny_config, path):
    """An actor whose thighs swing forward with the commanded vx (0.25 rad of target per m/s): a step in the
    command reaches the joints as a step, unless the command is slewed first."""
    contract = make_contract(tiny_config.env)
    actor = Actor(contract.obs_size, contract.action_size, [])
    names = [t.name for t in contract.observation]
    command_vx = sum(t.size for t in contract.observation[: names.index("command")])
    linear = [m for m in actor.net.modules() if isinstance(m, torch.nn.Linear)][0]
    with torch.no_grad():
        linear.weight.zero_()
        linear.bias.zero_()
        linear.weight[1::3, command_vx] = 1.0 / contract.observation[names.index("command")].scale
    return export_onnx(actor, contract, path)


def test_the_session_is_followed_as_the_policy_node_follows_it_slewed(tiny_config, tmp_path):
    policy = command_following_policy(tiny_config, tmp_path / "follow.onnx")
    step_to_speed = [SessionStep(0.5, (0.0, 0.0, 0.0)), SessionStep(1.0, (1.0, 0.0, 0.0))]
    at_once = preflight(policy, step_to_speed, robots=2, command_slew_rate=(0.0, 0.0, 0.0))
    slewed = preflight(policy, step_to_speed, robots=2)
    thighs = [n for n in at_once.joint_speed_by_joint if n.endswith("thigh")]
    assert all(slewed.joint_speed_by_joint[n] < 0.5 * at_once.joint_speed_by_joint[n] for n in thighs)
