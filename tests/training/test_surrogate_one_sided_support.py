"""The surrogate on one side's legs (a pace's stance): the base must pivot about the support line as a rigid
body does, or the gradients never see the robot tip. Gauss's principle ("gauss") gives the pivot rate
g d / (r^2 + I/m), d the base's horizontal distance from the line and r its distance; the plain no-slip
metric ("noslip") turns the body far slower."""

from __future__ import annotations

import torch

from surrogait_core.robot_spec import SDK_LEG_ORDER
from surrogait_train.env import LocomotionEnv
from surrogait_train.state import RobotState
from surrogait_train.surrogate import GRAVITY, Surrogate, base_inertia


def _roll_rate_after_one_step(cfg, variant: str) -> tuple[float, float]:
    """(the surrogate's pivot rate about the left feet's line, the rigid-body rate), rad/s, after one step
    from rest, standing on FL and RL only."""
    env = LocomotionEnv(cfg.env, cfg.reward, seed=0)
    cfg.surrogate.variant = variant
    sur = Surrogate(cfg.surrogate, env.kinematics, env.spec, env.model, env.kp, env.kd, env.control_dt,
                    cfg.env.substeps)
    q = torch.as_tensor(env.spec.default_joint_pos, dtype=torch.float32).unsqueeze(0)
    rest = RobotState(q, torch.zeros(1, 12), torch.zeros(1, 3), torch.zeros(1, 3),
                      torch.tensor([[0.0, 0.0, -1.0]]), torch.tensor([env.spec.standing_base_height_m]))
    left = [SDK_LEG_ORDER.index("FL"), SDK_LEG_ORDER.index("RL")]
    touch = torch.zeros(1, 4)
    touch[0, left] = 100.0
    nxt = sur(rest, q, touch)
    feet, _ = env.kinematics(q)
    a, b = feet[0, left[0]], feet[0, left[1]]
    axis = (b - a) / (b - a).norm()
    offset = -a - ((-a) @ axis) * axis  # from the support line to the base origin
    d = float(offset[:2].norm())  # the origin's horizontal distance from the line: gravity's lever
    mass, inertia = base_inertia(env.model, env.spec.standing_qpos)
    inertia_axis = float(axis @ torch.as_tensor(inertia, dtype=torch.float32) @ axis)
    # a body pivoting about the line: gravity's moment m g d over the inertia about the line, I + m r^2
    rigid = GRAVITY * d / (float(offset @ offset) + inertia_axis / mass) * env.control_dt
    env.close()
    return abs(float(nxt.base_ang_vel_b[0] @ axis)), rigid


def test_on_one_side_the_gauss_surrogate_pivots_at_the_rigid_body_rate(tiny_config):
    rate, rigid = _roll_rate_after_one_step(tiny_config, "gauss")
    assert abs(rate - rigid) < 0.1 * rigid, (rate, rigid)  # measured: 0.2585 against 0.2599 rad/s


def test_the_plain_no_slip_surrogate_barely_tips(tiny_config):
    rate, rigid = _roll_rate_after_one_step(tiny_config, "noslip")
    assert rate < 0.15 * rigid, (rate, rigid)  # measured: 0.029 against 0.260 rad/s
