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


def _cross_matrix(axis: np.ndarray) -> np.ndarray:
    """[a]x for unit axes (..., 3) -> (..., 3, 3)."""
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    o = np.zeros_like(x)
    return np.stack([np.stack([o, -z, y], -1), np.stack([z, o, -x], -1), np.stack([-y, x, o], -1)], -2)


class LegKinematics(torch.nn.Module):
    """Foot positions and velocities in the base frame from joint angles (SDK order).

    Its tensors are constants of the robot model, not state: they are buffers (they follow the module to a device)
    that no checkpoint stores (a residual actor holds a LegKinematics, and its checkpoints hold only weights)."""

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
        offsets, axes = np.array(offsets), np.array(axes)  # (4 legs, 4 links, 3), (4 legs, 3 joints, 3)
        self.register_buffer("offsets", torch.tensor(offsets, dtype=dtype), persistent=False)
        self.register_buffer("axes", torch.tensor(axes, dtype=dtype), persistent=False)
        # Rodrigues, R = I + sin(q) K + (1 - cos(q)) K^2 with K = [axis]x: the axes are constants, so
        # K and K^2 are precomputed and a rotation costs a few batched ops (the trainer calls this
        # twice per step and backpropagates through it; small-op count dominates its cost on CPU).
        cross = _cross_matrix(axes)
        self.register_buffer("rot_k", torch.tensor(cross, dtype=dtype), persistent=False)  # (4, 3, 3, 3)
        self.register_buffer("rot_k2", torch.tensor(cross @ cross, dtype=dtype), persistent=False)
        self.register_buffer("eye", torch.eye(3, dtype=dtype), persistent=False)
        # vectors carried by each joint's rotation: the next link's offset and the next joint's axis
        carried = [np.stack([offsets[:, k + 1], axes[:, k + 1]], -1) for k in range(2)] + [offsets[:, 3, :, None]]
        for k, v in enumerate(carried):
            # (4, 3, 2) or (4, 3, 1)
            self.register_buffer(f"carried_{k}", torch.tensor(v, dtype=dtype), persistent=False)

    def forward(self, joint_pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(..., 12) SDK order -> foot positions (..., 4, 3) and foot Jacobians d p / d q_leg (..., 4, 3, 3)."""
        q = joint_pos.reshape(*joint_pos.shape[:-1], 4, 3, 1, 1)
        rot = self.eye + torch.sin(q) * self.rot_k + (1 - torch.cos(q)) * self.rot_k2  # (..., 4, 3, 3, 3)
        r_hip = rot[..., 0, :, :]
        r_thigh = r_hip @ rot[..., 1, :, :]  # base <- thigh
        r_calf = r_thigh @ rot[..., 2, :, :]  # base <- calf
        hip_carried = r_hip @ self.carried_0  # thigh offset and thigh axis, base frame
        thigh_carried = r_thigh @ self.carried_1  # calf offset and calf axis
        o_hip = self.offsets[:, 0].expand_as(hip_carried[..., 0])
        o_thigh = o_hip + hip_carried[..., 0]
        o_calf = o_thigh + thigh_carried[..., 0]
        foot = o_calf + (r_calf @ self.carried_2).squeeze(-1)
        axes_b = torch.stack([self.axes[:, 0].expand_as(o_hip), hip_carried[..., 1], thigh_carried[..., 1]], -2)
        origins_b = torch.stack([o_hip, o_thigh, o_calf], -2)  # (..., 4, joint, 3)
        columns = torch.cross(axes_b, foot.unsqueeze(-2) - origins_b, dim=-1)  # (..., 4, joint, 3)
        return foot, columns.transpose(-1, -2)

    def foot_velocities(self, jacobians: torch.Tensor, joint_vel: torch.Tensor) -> torch.Tensor:
        """Foot velocity relative to the base, base frame (..., 4, 3), from Jacobians and joint_vel (..., 12)."""
        dq = joint_vel.reshape(*joint_vel.shape[:-1], 4, 3, 1)
        return (jacobians @ dq).squeeze(-1)

    def hip_positions(self) -> torch.Tensor:
        """Hip joint origins in the base frame (4, 3), SDK leg order."""
        return self.offsets[:, 0]

    def inverse(self, feet_b: torch.Tensor, joint_pos_init: torch.Tensor, iterations: int = 4) -> torch.Tensor:
        """Joint angles (..., 12) placing the feet at `feet_b` (..., 4, 3): damped Gauss-Newton from a guess.

        Where `feet_b` carries a gradient, it is the solution's (dq = J^-1 dfeet): the iterations run without one
        and the last takes it, not a gradient through every iteration."""
        eye = 1e-4 * torch.eye(3, dtype=feet_b.dtype, device=feet_b.device)
        with torch.no_grad():
            q = joint_pos_init.expand(*feet_b.shape[:-2], 12).clone()
            for _ in range(iterations - 1):
                pos, jac = self(q)
                q = q + solve_3x3(jac + eye, feet_b - pos).reshape(q.shape)
        pos, jac = self(q)
        return q + solve_3x3(jac + eye, feet_b - pos).reshape(q.shape)


def solve_3x3(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """x with a x = b for (..., 3, 3) and (..., 3), by the adjugate (Cramer's rule): plain arithmetic, so it exports
    to ONNX (which has no linear solve) and a residual policy's reference runs the same in training and
    deployment (surrogait_train.reference)."""
    c0, c1, c2 = a[..., :, 0], a[..., :, 1], a[..., :, 2]
    det = (c0 * torch.cross(c1, c2, dim=-1)).sum(-1, keepdim=True)
    x0 = (b * torch.cross(c1, c2, dim=-1)).sum(-1)
    x1 = (c0 * torch.cross(b, c2, dim=-1)).sum(-1)
    x2 = (c0 * torch.cross(c1, b, dim=-1)).sum(-1)
    return torch.stack([x0, x1, x2], dim=-1) / det
