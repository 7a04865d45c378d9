"""The default contract of a surrogait locomotion policy for a robot spec."""

from __future__ import annotations

from surrogait_core.contract import ActionSpec, CommandRanges, GaitSpec, PolicyContract
from surrogait_core.observation import default_observation_terms
from surrogait_core.robot_spec import RobotSpec

ACTION_SCALE = 0.25  # rad per unit action around the default pose


def make_locomotion_contract(
    spec: RobotSpec,
    gait: GaitSpec = GaitSpec(),
    command_ranges: CommandRanges = CommandRanges(),
    with_base_lin_vel: bool = False,
    control_dt_s: float = 0.02,
    kp: float | None = None,
    kd: float | None = None,
) -> PolicyContract:
    n = spec.num_joints
    return PolicyContract(
        robot=spec.name,
        joint_names=spec.joint_names,
        observation=default_observation_terms(with_base_lin_vel),
        action=ActionSpec(scale=(ACTION_SCALE,) * n, offset=tuple(float(x) for x in spec.default_joint_pos)),
        kp=(float(kp if kp is not None else spec.nominal_kp),) * n,
        kd=(float(kd if kd is not None else spec.nominal_kd),) * n,
        control_dt_s=control_dt_s,
        gait=gait,
        command_ranges=command_ranges,
    )
