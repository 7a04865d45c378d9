"""The robot state the policy side sees: torch tensors, body frame, SDK joint order."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from surrogait_train.physics import StateLayout


@dataclasses.dataclass
class RobotState:
    joint_pos: torch.Tensor  # (N, 12) rad, SDK order
    joint_vel: torch.Tensor  # (N, 12) rad/s
    base_lin_vel_b: torch.Tensor  # (N, 3) m/s, body frame
    base_ang_vel_b: torch.Tensor  # (N, 3) rad/s, body frame
    projected_gravity_b: torch.Tensor  # (N, 3) unit gravity direction in the body frame
    base_height: torch.Tensor  # (N,) m, base origin above the floor

    def map(self, fn: Callable[..., torch.Tensor], *others: RobotState) -> RobotState:
        """Apply fn field by field (to this state and the same fields of `others`)."""
        return RobotState(
            **{
                f.name: fn(getattr(self, f.name), *(getattr(o, f.name) for o in others))
                for f in dataclasses.fields(self)
            }
        )

    def where(self, mask: torch.Tensor, other: RobotState) -> RobotState:
        """Rows of `other` where mask (N,) is true, else this state's rows."""

        def pick(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            m = mask.view(-1, *([1] * (a.dim() - 1)))
            return torch.where(m, b, a)

        return self.map(pick, other)

    def detach(self) -> RobotState:
        return self.map(lambda x: x.detach())


def quat_rotate_inverse_np(quat_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q)^T v for batches of unit quaternions (w, x, y, z) and vectors."""
    w = quat_wxyz[:, :1]
    u = quat_wxyz[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v - w * t + np.cross(u, t)


def robot_state_from_mujoco(
    states: np.ndarray, layout: StateLayout, sdk_from_model: np.ndarray, gravity_dir_w: np.ndarray | None = None
) -> RobotState:
    """Read the policy-side state out of MuJoCo full-physics state vectors (N, nstate). `gravity_dir_w` (N, 3): each
    robot's unit gravity direction where it is tilted (a slope on level ground); None: straight down."""
    qpos, qvel = states[:, layout.qpos], states[:, layout.qvel]
    quat = qpos[:, 3:7]
    lin_vel_b = quat_rotate_inverse_np(quat, qvel[:, 0:3])  # free joint: world-frame linear velocity
    down = np.tile([0.0, 0.0, -1.0], (len(quat), 1)) if gravity_dir_w is None else gravity_dir_w
    gravity_b = quat_rotate_inverse_np(quat, down)
    as_t = lambda x: torch.as_tensor(np.ascontiguousarray(x), dtype=torch.float32)  # noqa: E731
    return RobotState(
        joint_pos=as_t(qpos[:, 7:][:, sdk_from_model]),
        joint_vel=as_t(qvel[:, 6:][:, sdk_from_model]),
        base_lin_vel_b=as_t(lin_vel_b),
        base_ang_vel_b=as_t(qvel[:, 3:6]),  # free joint: body-frame angular velocity
        projected_gravity_b=as_t(gravity_b),
        base_height=as_t(qpos[:, 2]),
    )


def quat_rotate_inverse(quat_wxyz: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """R(q)^T v for batches of unit quaternions (w, x, y, z) and vectors, in torch (`quat_rotate_inverse_np`)."""
    w = quat_wxyz[:, :1]
    u = quat_wxyz[:, 1:]
    t = 2.0 * torch.cross(u, v, dim=-1)
    return v - w * t + torch.cross(u, t, dim=-1)


def robot_state_from_qpos(qpos: torch.Tensor, qvel: torch.Tensor, sdk_from_model: torch.Tensor) -> RobotState:
    """The policy-side state (float32) from MuJoCo's qpos (N, nq) and qvel (N, nv) on any torch device, computed in
    their precision: `robot_state_from_mujoco` for the device-resident environment. Every field is a fresh tensor,
    none a view of the inputs (which may be JAX's buffers)."""
    quat = qpos[:, 3:7]
    gravity = torch.zeros_like(qvel[:, 0:3])
    gravity[:, 2] = -1.0
    f32 = lambda x: x.to(torch.float32, copy=True)  # noqa: E731
    return RobotState(
        joint_pos=f32(qpos[:, 7:][:, sdk_from_model]),
        joint_vel=f32(qvel[:, 6:][:, sdk_from_model]),
        base_lin_vel_b=f32(quat_rotate_inverse(quat, qvel[:, 0:3])),  # free joint: world-frame linear velocity
        base_ang_vel_b=f32(qvel[:, 3:6]),  # free joint: body-frame angular velocity
        projected_gravity_b=f32(quat_rotate_inverse(quat, gravity)),
        base_height=f32(qpos[:, 2]),
    )
