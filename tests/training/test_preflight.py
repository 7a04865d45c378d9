"""Pre-flight: a policy flies the session it is about to walk, in MuJoCo at the drivers' PD step, and is
cleared only when no robot falls and every safety rule's peak stays under 0.9 of the monitor's threshold."""

from __future__ import annotations

import torch

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_train.env import make_contract
from surrogait_train.export import export_onnx
from surrogait_train.networks import Actor
from surrogait_train.preflight import PREFLIGHT_CEILING, SessionStep, best_cleared, preflight

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
