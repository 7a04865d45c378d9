"""Differentiable surrogate dynamics: used only for gradients, its values are replaced by MuJoCo's.

State x = (q, dq, v_b, w_b, g_b, h): joint positions/velocities (SDK order), base linear and
angular velocity and projected gravity (body frame), base height. One policy period
dt = n·h (n physics substeps of length h) maps (x_t, joint targets q*) to x_{t+1}.

Joint PD (all variants): semi-implicit Euler with an effective joint inertia I_j (by default the
joint's diagonal entry of MuJoCo's mass matrix at the standing pose, armature included),
    tau_k = tau_max · tanh((kp (q*_k - q_k) - kd dq_k) / tau_max)     (smooth torque limit)
    dq_{k+1} = dq_k + h tau_k / I_j,   q_{k+1} = q_k + h dq_{k+1}
with each robot's own gains and action delay d (`RobotDynamics`, domain randomisation): q*_k is the
previously held target for the first d substeps, the new one after. Where the joints' damping b and friction
loss f are randomised, tau_k also loses b dq_k + f tanh(dq_k / 0.1).

Floating base, with the contact weights c_i in [0, 1] from MuJoCo's foot touch sensors
(detached, c_i = clamp(F_touch,i / F_0, 0, 1)); p_i(q), J_i(q) foot position / Jacobian in the
base frame (kinematics.py), u_i = J_i dq foot velocity relative to the base:

- "noslip": stance feet do not slip, v + w x p_i + u_i = 0 for feet in contact. The base twist
  solves the damped least squares
      min_{v,w} sum_i c_i |v + w x p_i + u_i|^2 + lambda |(v, w) - (v_t + dt·9.81 g_b, w_t)|^2
  (the prior is the ballistic flight, so a robot with no contact falls freely).
- "gauss": "noslip" with the prior's distance measured in the base's inertia (Gauss's principle of least
  constraint), lambda [m |v - v_p|^2 + (w - w_p)^T I_b (w - w_p)] / m. On one side's legs (a pace) the body
  then pivots about the support line at a rigid body's rate, g d / (r^2 + I/m) for a base at horizontal
  distance d and distance r from the line; with the plain metric it turns ~9x slower, so its gradients
  barely see a robot tip (tests/training/test_surrogate_one_sided_support.py).
- "srb": single rigid body driven by stance-leg forces: F_i = -c_i J_i^{-T} tau_i (force of the
  ground on the robot balancing the leg torques), with total mass m and rotational inertia I_b
  about the base origin from MuJoCo's mass matrix at the standing pose (plus each robot's added mass):
      v' = v + dt (sum_i F_i / m + 9.81 g_b - w x v),   w' = w + dt I_b^{-1} sum_i p_i x F_i
- "joint": legs only; the base state is carried over unchanged (no gradient through the base).

Contact gradients (values unchanged, `SurrogateConfig`): a smooth step in each foot's clearance above the ground under
it (`contact_gradient_width_m`), and a riser as a contact (`riser_contact_width_m`): a foot below the top of a riser
just ahead of it takes a weight linear in its height, so lifting it frees the base it holds back.

Orientation and height follow the new twist: g' = normalize(g - dt w' x g), h' = h - dt g·v'.

Alignment (every step, diff_env.py): x_{t+1} = x_sur + (x_sim - x_sur).detach(), then the
per-step gradient decay x <- g x + (1 - g) x.detach() (docs/architecture.md, "The paper").
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import torch

from surrogait_core.robot_spec import RobotSpec
from surrogait_core.wire.motor_driver_law import pd_torque
from surrogait_train.config import SurrogateConfig
from surrogait_train.kinematics import LegKinematics
from surrogait_train.state import RobotState

VARIANTS = ("noslip", "gauss", "srb", "joint")
GRAVITY = 9.81


def _skew(p: torch.Tensor) -> torch.Tensor:
    """[p]x for (..., 3) -> (..., 3, 3)."""
    x, y, z = p.unbind(-1)
    o = torch.zeros_like(x)
    return torch.stack([torch.stack([o, -z, y], -1), torch.stack([z, o, -x], -1), torch.stack([-y, x, o], -1)], -2)


def standing_mass_matrix(model: mujoco.MjModel, standing_qpos: np.ndarray) -> np.ndarray:
    data = mujoco.MjData(model)
    data.qpos[:] = standing_qpos
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    return full


def base_inertia(model: mujoco.MjModel, standing_qpos: np.ndarray) -> tuple[float, np.ndarray]:
    """Total mass and the 3x3 rotational inertia about the base origin (body frame) at the standing pose."""
    full = standing_mass_matrix(model, standing_qpos)
    return float(full[0, 0]), full[3:6, 3:6].copy()


@dataclasses.dataclass
class RobotDynamics:
    """Each robot's parameters for this step, as the environment's physics has them (torch, N rows)."""

    kp: torch.Tensor  # (N, 12) N m/rad
    kd: torch.Tensor  # (N, 12) N m s/rad
    added_mass_kg: torch.Tensor  # (N,)
    delay_substeps: torch.Tensor  # (N,) int: substeps that still track held_targets
    held_targets: torch.Tensor  # (N, 12) rad: the targets before this step's
    # (N, 1) the leg joints' viscous damping (N m s/rad) and dry friction (N m), where randomised; None: left out
    joint_damping: torch.Tensor | None = None
    joint_friction_loss: torch.Tensor | None = None
    # (N, 4) m: the ground under each foot minus the ground under the base, along gravity (the environment's
    # `foot_ground_offset` of the state before the step); None on level ground. The contact gradient measures each
    # foot's clearance from the ground under it: on stairs a foot on the next tread is otherwise a riser in the air.
    ground_under_feet_m: torch.Tensor | None = None
    # (N, 4) m: the highest ground from under each foot to a few cm ahead of it along the heading, on the same
    # reference (the environment's `foot_ground_ahead`); above `ground_under_feet_m` where a riser is in the foot's way
    ground_ahead_of_feet_m: torch.Tensor | None = None


class Surrogate(torch.nn.Module):
    def __init__(
        self,
        cfg: SurrogateConfig,
        kinematics: LegKinematics,
        spec: RobotSpec,
        model: mujoco.MjModel,
        kp: torch.Tensor | float,
        kd: torch.Tensor | float,
        control_dt: float,
        substeps: int,
    ):
        super().__init__()
        if cfg.variant not in VARIANTS:
            raise ValueError(f"unknown surrogate variant {cfg.variant!r}; choose one of {', '.join(VARIANTS)}")
        self.cfg = cfg
        self.kinematics = kinematics
        self.kp, self.kd = kp, kd
        self.dt, self.substeps = control_dt, substeps
        # buffers, not state: `.to(device)` moves them with the kinematics; checkpoints do not hold the surrogate
        self.register_buffer("torque_limit", torch.tensor(spec.joint_torque_limit, dtype=torch.float32), False)
        self.foot_radius_m = spec.foot_radius_m
        mass, inertia = base_inertia(model, spec.standing_qpos)
        self.mass = mass
        if cfg.joint_inertia > 0:
            joint_inertia = np.full(spec.num_joints, cfg.joint_inertia)
        else:  # the joint diagonal of MuJoCo's mass matrix (armature included), SDK order
            joint_inertia = np.diag(standing_mass_matrix(model, spec.standing_qpos))[6:][spec.sdk_from_model]
        self.register_buffer("joint_inertia", torch.tensor(joint_inertia, dtype=torch.float32), False)
        self.register_buffer("inertia_inv", torch.tensor(np.linalg.inv(inertia), dtype=torch.float32), False)
        # the no-slip prior's metric: identity, or the base's spatial inertia per kg ("gauss")
        metric = np.eye(6)
        if cfg.variant == "gauss":
            metric[3:, 3:] = inertia / mass
        self.register_buffer("prior_metric", torch.tensor(metric, dtype=torch.float32), False)

    def forward(
        self, prev: RobotState, joint_targets: torch.Tensor, touch: torch.Tensor, dynamics: RobotDynamics | None = None
    ) -> RobotState:
        """The next state; `dynamics` gives each robot's gains, added mass and delay (None: nominal, no delay)."""
        kp, kd = (self.kp, self.kd) if dynamics is None else (dynamics.kp, dynamics.kd)
        q, dq = self._joint_pd(prev.joint_pos, prev.joint_vel, joint_targets, kp, kd, dynamics)
        contact = (touch / self.cfg.contact_threshold_n).clamp(0, 1).detach()
        if self.cfg.contact_gradient_width_m > 0:
            ground = None if dynamics is None else dynamics.ground_under_feet_m
            contact = contact + self._contact_gradient(prev, q, ground)
        if self.cfg.riser_contact_width_m > 0 and dynamics is not None and dynamics.ground_under_feet_m is not None:
            if dynamics.ground_ahead_of_feet_m is None:
                raise ValueError("surrogate.riser_contact_width_m: this environment does not say where the ground "
                                 "ahead of each foot rises (env.backend=cpu does); set it to 0 here")
            contact = contact + self._riser_contact(prev, q, dynamics.ground_under_feet_m,
                                                    dynamics.ground_ahead_of_feet_m)
        if self.cfg.variant == "joint":
            v, w = prev.base_lin_vel_b, prev.base_ang_vel_b
        elif self.cfg.variant in ("noslip", "gauss"):
            v, w = self._noslip_twist(prev, q, dq, contact)
        else:
            mass = self.mass if dynamics is None else (self.mass + dynamics.added_mass_kg).unsqueeze(-1)
            v, w = self._srb_twist(prev, q, dq, joint_targets, contact, kp, kd, mass)
        g = prev.projected_gravity_b - self.dt * torch.cross(w, prev.projected_gravity_b, dim=-1)
        g = g / g.norm(dim=-1, keepdim=True)
        h = prev.base_height - self.dt * (prev.projected_gravity_b * v).sum(-1)
        return RobotState(q, dq, v, w, g, h)

    def _contact_gradient(
        self, prev: RobotState, q: torch.Tensor, ground_under_feet_m: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Zero in value, the gradient of a smooth contact weight in each foot's height above the ground (N, 4):
        a logistic step that is 1/2 at `contact_gradient_width_m` of clearance and ~0.9 at rest on the ground.
        The ground is the one under each foot where `ground_under_feet_m` gives it, else the one under the base."""
        feet_b = self.kinematics(q)[0]
        up = -prev.projected_gravity_b.unsqueeze(1)
        clearance = prev.base_height.unsqueeze(-1) + (feet_b * up).sum(-1) - self.foot_radius_m
        if ground_under_feet_m is not None:
            clearance = clearance - ground_under_feet_m
        width = self.cfg.contact_gradient_width_m
        smooth = torch.sigmoid((width - clearance) * (2.2 / width))
        return smooth - smooth.detach()

    def _riser_contact(
        self, prev: RobotState, q: torch.Tensor, ground_under_feet_m: torch.Tensor, ground_ahead_of_feet_m: torch.Tensor
    ) -> torch.Tensor:
        """Zero in value; for each foot below the top of a riser just ahead of it, the gradient of a contact weight
        that falls linearly as the foot rises, 1 per `riser_contact_width_m` (N, 4); zero gradient for other feet.

        Why: on stairs a blind policy's toe meets the riser. MuJoCo's touch sensor already counts that push, so in
        value the surrogate pins the blocked foot as a stance foot, and a foot swinging forward against it holds the
        base back. The smooth contact gradient (`_contact_gradient`) is saturated there (the foot is at or below the
        riser's top by its height), so nothing said "lift the foot and the base goes on". A linear weight in the foot's
        height below the riser's top says it for as long as the foot is in the riser's way."""
        feet_b = self.kinematics(q)[0]
        up = -prev.projected_gravity_b.unsqueeze(1)
        # the sole's height above the ground under the base, the reference of the ground heights
        foot_bottom = prev.base_height.unsqueeze(-1) + (feet_b * up).sum(-1) - self.foot_radius_m
        riser = (ground_ahead_of_feet_m - ground_under_feet_m > 0.01) & (foot_bottom.detach() < ground_ahead_of_feet_m)
        weight = -foot_bottom / self.cfg.riser_contact_width_m
        return torch.where(riser, weight - weight.detach(), torch.zeros_like(weight))

    def _torque(self, q, dq, q_target, kp, kd) -> torch.Tensor:
        # The drivers' law (surrogait_core.wire.motor_driver_law.pd_torque) with its hard clip smoothed into a tanh:
        # a clipped joint would pass no gradient at all, and the surrogate exists to carry gradients.
        raw = pd_torque(kp, kd, q_target, q, dq)
        return self.torque_limit * torch.tanh(raw / self.torque_limit)

    def _joint_pd(self, q, dq, q_target, kp, kd, dynamics: RobotDynamics | None):
        h = self.dt / self.substeps
        for k in range(self.substeps):
            target = q_target
            if dynamics is not None:  # the new targets are not there yet on delayed robots
                late = (dynamics.delay_substeps > k).unsqueeze(-1)
                target = torch.where(late, dynamics.held_targets, q_target)
            tau = self._torque(q, dq, target, kp, kd)
            if dynamics is not None and dynamics.joint_damping is not None:
                # MuJoCo's passive joint terms; its friction loss is a constraint, smoothed here as tanh
                tau = tau - dynamics.joint_damping * dq - dynamics.joint_friction_loss * torch.tanh(dq / 0.1)
            dq = dq + h * tau / self.joint_inertia
            q = q + h * dq
        return q, dq

    def _noslip_twist(self, prev: RobotState, q, dq, contact):
        feet, jac = self.kinematics(q)
        u = self.kinematics.foot_velocities(jac, dq)  # (N, 4, 3)
        n = q.shape[0]
        eye = torch.eye(3, device=q.device).expand(n, 4, 3, 3)
        A = torch.cat([eye, -_skew(feet)], dim=-1)  # (N, 4, 3, 6): v + w x p = A (v, w)
        c = contact.unsqueeze(-1).unsqueeze(-1)
        At = A.transpose(-1, -2)
        lam = self.cfg.noslip_damping
        M = (c * (At @ A)).sum(1) + lam * self.prior_metric
        prior = torch.cat([prev.base_lin_vel_b + self.dt * GRAVITY * prev.projected_gravity_b, prev.base_ang_vel_b], -1)
        rhs = -(c * (At @ u.unsqueeze(-1))).sum(1).squeeze(-1) + lam * prior @ self.prior_metric.T
        twist = torch.linalg.solve_ex(M, rhs)[0]  # _ex: no error check, which would wait for a GPU every step
        return twist[:, :3], twist[:, 3:]

    def _srb_twist(self, prev: RobotState, q, dq, q_target, contact, kp, kd, mass):
        feet, jac = self.kinematics(q)
        tau = self._torque(q, dq, q_target, kp, kd).reshape(-1, 4, 3, 1)
        jt = jac.transpose(-1, -2) + 1e-3 * torch.eye(3, device=jac.device)  # regularised near singular legs
        force = -contact.unsqueeze(-1) * torch.linalg.solve_ex(jt, tau)[0].squeeze(-1)  # (N, 4, 3) ground on robot
        v, w = prev.base_lin_vel_b, prev.base_ang_vel_b
        accel = force.sum(1) / mass + GRAVITY * prev.projected_gravity_b - torch.cross(w, v, dim=-1)
        moment = torch.cross(feet, force, dim=-1).sum(1)
        v_new = v + self.dt * accel
        w_new = w + self.dt * (moment @ self.inertia_inv.T)
        return v_new, w_new
