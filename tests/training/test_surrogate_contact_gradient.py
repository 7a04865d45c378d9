"""The surrogate's gradient through contact (`surrogate.contact_gradient_width_m`): zero in value, a smooth contact
weight's gradient in each foot's clearance. On stairs the clearance must be measured from the ground under each
foot: a front foot about to land on the next tread is not a foot a riser high in the air."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from surrogait_train.env import LocomotionEnv
from surrogait_train.state import RobotState
from surrogait_train.surrogate import RobotDynamics, Surrogate

RISER_M = 0.10
HOVER_M = 0.02  # the front feet's clearance: where the smooth contact weight is steepest (its width)
FRONT_IN_AIR = (0.0, 0.0, 100.0, 100.0)  # N on the touch sensors, SDK order FR FL RR RL: the hind feet carry it


@pytest.fixture
def twist_gradient(tiny_config):
    env = LocomotionEnv(tiny_config.env, tiny_config.reward, seed=0)
    stance = torch.as_tensor(env.spec.default_joint_pos, dtype=torch.float32).unsqueeze(0)
    feet_below_base_m = -float(env.kinematics(stance)[0][0, 0, 2])  # the front feet, at the default pose
    hover_base_height_m = feet_below_base_m + env.spec.foot_radius_m + HOVER_M

    def twist_gradient(width_m: float, riser_m: float, ground_under_feet_m: float | None):
        """(the next twist, its gradient in the joint targets) for a robot at rest with its front feet `HOVER_M` above
        their ground, that ground `riser_m` above the ground under the base (`ground_under_feet_m` says so, or not)."""
        sur = Surrogate(dataclasses.replace(tiny_config.surrogate, variant="noslip", contact_gradient_width_m=width_m),
                        env.kinematics, env.spec, env.model, env.kp, env.kd, env.control_dt, tiny_config.env.substeps)
        rest = RobotState(stance, torch.zeros(1, 12), torch.zeros(1, 3), torch.zeros(1, 3),
                          torch.tensor([[0.0, 0.0, -1.0]]), torch.tensor([hover_base_height_m + riser_m]))
        ground = None if ground_under_feet_m is None else torch.full((1, 4), ground_under_feet_m)
        dynamics = RobotDynamics(kp=torch.as_tensor(env.kp).expand(1, 12), kd=torch.as_tensor(env.kd).expand(1, 12),
                                 added_mass_kg=torch.zeros(1), delay_substeps=torch.zeros(1, dtype=torch.long),
                                 held_targets=stance.clone(), ground_under_feet_m=ground)
        noise = 0.1 * torch.randn(1, 12, generator=torch.Generator().manual_seed(0))
        targets = (stance + noise).requires_grad_(True)
        nxt = sur(rest, targets, torch.tensor([FRONT_IN_AIR]), dynamics)
        twist = torch.cat([nxt.base_lin_vel_b, nxt.base_ang_vel_b], -1)
        (grad,) = torch.autograd.grad(twist.sum(), targets)
        return twist.detach(), grad

    yield twist_gradient
    env.close()


def test_the_contact_gradient_changes_no_value(twist_gradient):
    assert torch.equal(twist_gradient(0.0, 0.0, None)[0], twist_gradient(0.02, 0.0, None)[0])


def test_a_foot_above_the_next_tread_has_the_contact_gradient_of_a_foot_above_level_ground(twist_gradient):
    _, level = twist_gradient(0.02, 0.0, None)
    _, without = twist_gradient(0.0, 0.0, None)
    contact_part = (level - without).norm()
    assert contact_part > 0.1 * level.norm(), (contact_part, level.norm())  # measured: 3.16 of 10.9
    # the same robot over the next tread, its base still over the lower one: the base's height is a riser more
    _, over_tread = twist_gradient(0.02, RISER_M, RISER_M)
    assert torch.allclose(over_tread, level, atol=1e-4 * float(level.norm())), (over_tread - level).norm()
    # measured from the ground under the base, those feet are a riser in the air: their contact gradient is gone
    _, from_base_ground = twist_gradient(0.02, RISER_M, None)
    assert (from_base_ground - without).norm() < 0.01 * contact_part  # measured: 1.7e-4
