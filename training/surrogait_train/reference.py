"""The clock-driven kinematic gait reference as an action, read from the policy's own observation.

A residual policy (`learner.residual_reference`) acts

    a = a_ref(o) + pi_theta(o)

where a_ref steps every foot as the gait clock asks: the foot reference of `rewards.gait_reference` (lifted by
the swing profile, moved by the Raibert step length for the commanded velocity) mapped to joint angles by the
legs' inverse kinematics and expressed in action units. The network learns the corrections that balance and
steer it. Why: a first-order learner explores little, and from a standing start its gradients say "keep the
feet down" long before they can say "lift this foot now and the body will be caught" (training/README.md: the
pace's swing penalty stayed at its ceiling in every run). With the reference the feet lift from the first
iteration and the gradients only have to find the balance (the MJX APG tutorial's residual trot; Open-DiffLoco's
kinematic reference).

The reference reads only observation terms (the gait clock, the command and, for a multi-gait policy, the gait's
parameters), so it is part of the exported ONNX graph: deployment runs the one file and needs nothing new, and
the contract's own clip and soft joint range still bound the sum.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from surrogait_core.policy.contract import PolicyContract
from surrogait_core.policy.gait import gait_features
from surrogait_train.gaits import GaitBatch, named_gait_flags
from surrogait_train.kinematics import LegKinematics
from surrogait_train.rewards import SWING_PROFILES, balance_step, gait_reference

# the balance step's gains as the policy file's metadata names them (EnvConfig's keys)
BALANCE_STEP_KEYS = ("balance_step_roll_m", "balance_step_roll_rate_m_s", "balance_step_yaw_rate_s",
                     "balance_step_pitch_m", "balance_step_pitch_deadband")
# the gaits whose reference takes the pitch term, when not every gait's (EnvConfig.balance_step_pitch_gaits)
PITCH_GAITS_KEY = "balance_step_pitch_gaits"


def observation_slice(contract: PolicyContract, name: str) -> tuple[int, int, float]:
    """(start, end, scale) of observation term `name` in the contract's observation vector."""
    start = 0
    for term in contract.observation:
        if term.name == name:
            return start, start + term.size, term.scale
        start += term.size
    raise KeyError(f"the policy's observation has no {name!r} term")


def phases_from_clock(clock: torch.Tensor) -> torch.Tensor:
    """Each leg's phase in [0, 1) (N, 4) from the gait clock's sin and cos features (N, 8)."""
    return torch.remainder(torch.atan2(clock[..., :4], clock[..., 4:]) / (2 * torch.pi), 1.0)


class GaitReference(nn.Module):
    """obs (contract units, N x obs_size) -> the reference action (N, 12); no parameters, no gradient to learn."""

    def __init__(
        self,
        contract: PolicyContract,
        kinematics: LegKinematics,
        nominal_feet_b: torch.Tensor,
        foot_radius_m: float,
        stand_speed_m_s: float = 0.0,
        balance_step_gains: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0),
        swing_profile: str = "sine",
        pitch_stance_gaits: tuple[str, ...] = (),
    ):
        super().__init__()
        gaits = contract.gaits or (contract.gait,)
        heights = {g.swing_height_m for g in gaits}
        if len(heights) != 1:  # the observation carries period, duty factor and offsets, not the swing apex
            raise ValueError(f"a residual reference needs one swing height for all gaits, got {sorted(heights)}")
        self.swing_height_m = heights.pop()
        self.kinematics = kinematics
        self.foot_radius_m = float(foot_radius_m)
        self.stand_speed_m_s = float(stand_speed_m_s)
        self.balance_step_gains = tuple(float(gain) for gain in balance_step_gains)
        if swing_profile not in SWING_PROFILES:  # refused here, not at the first step
            raise ValueError(f"unknown swing profile {swing_profile!r}; choose one of {', '.join(SWING_PROFILES)}")
        self.swing_profile = swing_profile
        self.clock = observation_slice(contract, "gait_clock")
        self.command = observation_slice(contract, "command")
        self.gait_params = observation_slice(contract, "gait_params") if contract.gaits else None
        self.gravity = observation_slice(contract, "projected_gravity_b")
        self.ang_vel = observation_slice(contract, "base_ang_vel_b")
        self.period_s, self.duty_factor = contract.gait.period_s, contract.gait.duty_factor
        self.control_dt_s = contract.control_dt_s
        # the gaits whose reference takes the balance step's pitch term; a robot's gait is the one whose parameters
        # lie nearest its observed gait_params (exact in training and deployment; nearest, so a float's rounding or a
        # blend between two gaits still picks one)
        flags = named_gait_flags("env.balance_step_pitch_gaits", tuple(pitch_stance_gaits), contract.gaits)
        self.pitch_stance_gaits = (tuple(g.name for g, on in zip(contract.gaits, flags, strict=True) if on)
                                   if not flags.all() else ())
        if self.pitch_stance_gaits:
            self.register_buffer("gait_feature_table", torch.tensor(
                np.array([gait_features(g) for g in contract.gaits]), dtype=torch.float32), persistent=False)
            self.register_buffer("pitch_stance_flags", torch.tensor(flags, dtype=torch.float32), persistent=False)
        # constants of the contract and the robot model: they follow the module to a device, no checkpoint stores them
        for name, value in (("nominal_feet_b", nominal_feet_b.detach().clone()),
                            ("default_joint_pos", contract.default_joint_pos),
                            ("action_offset", contract.action.offset), ("action_scale", contract.action.scale)):
            self.register_buffer(name, torch.as_tensor(value, dtype=torch.float32), persistent=False)

    def describe(self) -> dict:
        """What the reference is, for the policy file's metadata (export.ACTION_REFERENCE_KEY)."""
        described = {"kind": "gait_kinematic", "stand_speed_m_s": self.stand_speed_m_s,
                     "swing_height_m": self.swing_height_m}
        # an open-loop reference's description stays as files made before the balance step say, and one without the
        # pitch term as files made before it
        gains = dict(zip(BALANCE_STEP_KEYS, self.balance_step_gains, strict=False))
        if any(self.balance_step_gains[:3]):
            described.update({k: gains[k] for k in BALANCE_STEP_KEYS[:3]})
        if gains.get("balance_step_pitch_m"):
            described["balance_step_pitch_m"] = gains["balance_step_pitch_m"]
            if gains.get("balance_step_pitch_deadband"):
                described["balance_step_pitch_deadband"] = gains["balance_step_pitch_deadband"]
            if self.pitch_stance_gaits:
                described[PITCH_GAITS_KEY] = list(self.pitch_stance_gaits)
        if self.swing_profile != "sine":  # files made before the profile existed stepped on the sine
            described["swing_profile"] = self.swing_profile
        return described

    def _term(self, obs: torch.Tensor, where: tuple[int, int, float]) -> torch.Tensor:
        start, end, scale = where
        return obs[..., start:end] / scale

    def gait(self, obs: torch.Tensor) -> GaitBatch:
        """Each robot's gait timing as its observation gives it."""
        ones = torch.ones_like(obs[:, :1])
        if self.gait_params is None:
            return GaitBatch(ones * self.period_s, ones * self.duty_factor, torch.zeros_like(obs[:, :4]),
                             ones * self.swing_height_m)
        params = self._term(obs, self.gait_params)
        return GaitBatch(params[:, 0:1], params[:, 1:2], params[:, 2:6], ones * self.swing_height_m)

    def pitch_stance(self, obs: torch.Tensor) -> torch.Tensor | None:
        """(N, 1), 1 for the robots whose gait takes the pitch term, 0 for the others; None: every robot's does."""
        if not self.pitch_stance_gaits:
            return None
        params = self._term(obs, self.gait_params)
        nearest = ((params.unsqueeze(1) - self.gait_feature_table) ** 2).sum(-1).argmin(-1)  # (N,)
        return self.pitch_stance_flags[nearest].unsqueeze(-1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        # the clock and the command carry no gradient; a balance step feeds back the body's roll and turning,
        # and the trainer's gradient goes through it (a step now changes the roll the reference answers next)
        feedback = any(self.balance_step_gains)
        with torch.set_grad_enabled(torch.is_grad_enabled() and feedback):
            gait = self.gait(obs.detach())
            # the targets hold for the coming control period: aim at where the clock will be at its end
            phases = torch.remainder(phases_from_clock(self._term(obs.detach(), self.clock))
                                     + self.control_dt_s / gait.period_s, 1.0)
            command = self._term(obs.detach(), self.command)
            shift = (balance_step(self._term(obs, self.gravity), self._term(obs, self.ang_vel), command,
                                  self.nominal_feet_b, self.balance_step_gains, self.pitch_stance(obs.detach()))
                     if feedback else None)
            ref_xy, ref_height, _ = gait_reference(gait, phases, command, self.nominal_feet_b, self.foot_radius_m,
                                                   self.stand_speed_m_s, shift, self.swing_profile)
            z = self.nominal_feet_b[:, 2] + ref_height - self.foot_radius_m
            feet = torch.cat([ref_xy, z.unsqueeze(-1)], dim=-1)
            joint_pos = self.kinematics.inverse(feet, self.default_joint_pos)
            return (joint_pos - self.action_offset) / self.action_scale
