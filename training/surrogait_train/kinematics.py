"""Leg forward kinematics in torch, with link offsets read from the MuJoCo model (never retyped).

Each leg is a chain base -> hip (joint about its axis) -> thigh -> calf -> foot site. With
R_k = Rot(axis_k, q_k) and p_k the body offset of link k in its parent:

    p_foot_b = p_hip + R_hip (p_thigh + R_thigh (p_calf + R_calf p_site))

The foot Jacobian's column k is a_k^b x (p_foot_b - o_k^b), with a_k^b the joint axis and o_k^b
the joint origin in the base frame; the foot velocity relative to the base is J dq. Everything is batched
over (..., 12) joint vectors in SDK order and returns (..., 4, 3) in SDK leg order.
"""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from surrogait_core.robot_spec import LEG_JOINTS, SDK_LEG_ORDER


def _axis_angle_matrix(axis: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """Rotation matrices (..., L, 3, 3) about unit axes (L, 3) by angles (..., L) (Rodrigues)."""
    K = torch.zeros(*axis.shape[:-1], 3, 3, dtype=axis.dtype, device=axis.device)
    x, y, z = axis.unbind(-1)
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 0] = -z, y, z
    K[..., 1, 2], K[..., 2, 0], K[..., 2, 1] = -x, -y, x
    s = torch.sin(angle)[..., None, None]
    c = torch.cos(angle)[..., None, None]
    return torch.eye(3, dtype=axis.dtype) + s * K + (1 - c) * (K @ K)


class LegKinematics(torch.nn.Module):
    """Foot positions and velocities in the base frame from joint angles (SDK order)."""

    def __init__(self, model: mujoco.MjModel, dtype: torch.dtype = torch.float32):
        super().__init__()
        offsets, axes = [], []
        for leg in SDK_LEG_ORDER:
            leg_offsets, leg_axes = [], []
            for joint in LEG_JOINTS:
                body = model.body(f"{leg}_{joint}")
                if not np.allclose(body.quat, [1, 0, 0, 0]):
                    raise ValueError(f"body {body.name} has a rotated frame; LegKinematics assumes aligned frames")
                jnt = model.joint(f"{leg}_{joint}_joint")
                if not np.allclose(jnt.pos, 0):
                    raise ValueError(f"joint {jnt.name} is not at its body origin")
                leg_offsets.append(body.pos.copy())
                leg_axes.append(jnt.axis.copy())
            leg_offsets.append(model.site(f"{leg}_foot").pos.copy())
            offsets.append(leg_offsets)
            axes.append(leg_axes)
        self.register_buffer("offsets", torch.tensor(np.array(offsets), dtype=dtype))  # (4, 4, 3)
        self.register_buffer("axes", torch.tensor(np.array(axes), dtype=dtype))  # (4, 3, 3)

    def forward(self, joint_pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(..., 12) SDK order -> foot positions (..., 4, 3) and foot Jacobians d p / d q_leg (..., 4, 3, 3)."""
        q = joint_pos.reshape(*joint_pos.shape[:-1], 4, 3)
        R = None
        origin = None
        axes_b, origins_b = [], []
        for k in range(3):  # hip, thigh, calf: all four legs at once
            offset, axis = self.offsets[:, k], self.axes[:, k]  # (4, 3)
            if R is None:
                origin = offset.expand(*q.shape[:-2], 4, 3)
                axis_b = axis.expand_as(origin)
            else:
                origin = origin + (R @ offset.unsqueeze(-1)).squeeze(-1)
                axis_b = (R @ axis.unsqueeze(-1)).squeeze(-1)
            Rk = _axis_angle_matrix(axis, q[..., k])
            R = Rk if R is None else R @ Rk
            axes_b.append(axis_b)
            origins_b.append(origin)
        foot = origin + (R @ self.offsets[:, 3].unsqueeze(-1)).squeeze(-1)
        columns = [torch.cross(axes_b[k], foot - origins_b[k], dim=-1) for k in range(3)]
        return foot, torch.stack(columns, dim=-1)

    def foot_velocities(self, jacobians: torch.Tensor, joint_vel: torch.Tensor) -> torch.Tensor:
        """Foot velocity relative to the base, base frame (..., 4, 3), from Jacobians and joint_vel (..., 12)."""
        dq = joint_vel.reshape(*joint_vel.shape[:-1], 4, 3, 1)
        return (jacobians @ dq).squeeze(-1)

    def hip_positions(self) -> torch.Tensor:
        """Hip joint origins in the base frame (4, 3), SDK leg order."""
        return self.offsets[:, 0]

    @torch.no_grad()
    def inverse(self, feet_b: torch.Tensor, joint_pos_init: torch.Tensor, iterations: int = 4) -> torch.Tensor:
        """Joint angles (..., 12) placing the feet at `feet_b` (..., 4, 3): damped Gauss-Newton from a guess."""
        q = joint_pos_init.expand(*feet_b.shape[:-2], 12).clone()
        eye = 1e-4 * torch.eye(3, dtype=feet_b.dtype)
        for _ in range(iterations):
            pos, jac = self(q)
            dq = torch.linalg.solve(jac + eye, (feet_b - pos).unsqueeze(-1)).squeeze(-1)
            q = q + dq.reshape(q.shape)
        return q
