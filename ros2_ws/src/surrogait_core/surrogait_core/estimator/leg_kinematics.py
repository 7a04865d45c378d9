"""Foot positions and velocities in the base frame, from Pinocchio kinematics of the robot's MJCF.

The same MJCF file that MuJoCo simulates is read by Pinocchio (one source of truth for link
lengths). The floating base is held at the identity, so world quantities of that model *are*
base-frame quantities: `foot_pos_b[i]` is the vector from the base origin to foot i's sphere
centre, `foot_vel_b[i]` its rate of change caused by the joints alone (the base's own motion
is the estimator's business, not this module's).

Everything in and out is in the SDK's order (legs FR, FL, RR, RL), as on the wire; the
conversion to Pinocchio's tree order (FL, FR, RL, RR) happens only here.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin

from surrogait_core.robot_spec import RobotSpec

_BASE_JOINT = 1  # Pinocchio joint 0 is the universe, 1 the MJCF free joint of the base


@dataclasses.dataclass(frozen=True)
class FeetMotion:
    """Each foot (sphere centre) relative to the base, base frame, SDK leg order; (4, 3) each."""

    pos_b: np.ndarray  # m
    vel_b: np.ndarray  # m/s, from the joints alone
    ang_vel_b: np.ndarray  # rad/s, angular velocity of the foot (calf) link relative to the base


class LegKinematics:
    """Forward (and, for synthesising test data, inverse) kinematics of the four legs."""

    def __init__(self, spec: RobotSpec):
        self.spec = spec
        self.model = pin.buildModelFromMJCF(str(spec.mjcf_path))
        self.data = self.model.createData()
        if self.model.nq != 7 + spec.num_joints or self.model.nv != 6 + spec.num_joints:
            raise ValueError(
                f"{spec.mjcf_path}: expected a free-flyer model with {spec.num_joints} joints, "
                f"Pinocchio read nq={self.model.nq}, nv={self.model.nv}"
            )
        missing = [f for f in spec.foot_names if not self.model.existFrame(f)]
        if missing:
            raise ValueError(f"{spec.mjcf_path}: no foot frames {missing}; regenerate the description")
        self.foot_frame_ids = [self.model.getFrameId(f) for f in spec.foot_names]  # SDK leg order
        self._q = pin.neutral(self.model)  # base at the origin, identity rotation
        self._v = np.zeros(self.model.nv)
        # The base frame in the model's world: identity for an MJCF free joint, but composing with
        # it keeps the answer right if the description ever places the free joint elsewhere.
        pin.forwardKinematics(self.model, self.data, self._q)
        self._world_T_base = self.data.oMi[_BASE_JOINT].copy()
        self._base_at_origin = bool(np.allclose(self._world_T_base.homogeneous, np.eye(4), rtol=0.0, atol=1e-12))
        pin.updateFramePlacements(self.model, self.data)
        if not self.model.existFrame("imu"):
            raise ValueError(f"{spec.mjcf_path}: no 'imu' site; regenerate the description")
        imu_w = self.data.oMf[self.model.getFrameId("imu")].translation
        # Where the IMU sits on the base (m, base frame): the accelerometer's lever arm.
        self.imu_pos_b = self._world_T_base.rotation.T @ (imu_w - self._world_T_base.translation)

    def _set_joints(self, joint_pos: np.ndarray, joint_vel: np.ndarray | None) -> None:
        self._q[7:] = self.spec.to_model_order(joint_pos)
        self._v[6:] = 0.0 if joint_vel is None else self.spec.to_model_order(joint_vel)

    def feet_motion(self, joint_pos: np.ndarray, joint_vel: np.ndarray) -> FeetMotion:
        """Positions, velocities and angular velocities of the feet relative to the base (base frame)."""
        self._set_joints(joint_pos, joint_vel)
        pin.forwardKinematics(self.model, self.data, self._q, self._v)
        pin.updateFramePlacements(self.model, self.data)
        # 500 times a second in the estimator: the four feet gathered in one array each, then one transform.
        pos = np.array([self.data.oMf[fid].translation for fid in self.foot_frame_ids])
        twists = [pin.getFrameVelocity(self.model, self.data, fid, pin.LOCAL_WORLD_ALIGNED)
                  for fid in self.foot_frame_ids]
        vel = np.array([t.linear for t in twists])
        ang = np.array([t.angular for t in twists])
        if not self._base_at_origin:
            rot_wb, base_w = self._world_T_base.rotation, self._world_T_base.translation
            pos, vel, ang = (pos - base_w) @ rot_wb, vel @ rot_wb, ang @ rot_wb  # rows: R^T x
        return FeetMotion(pos, vel, ang)

    def com_b(self, joint_pos: np.ndarray) -> np.ndarray:
        """The whole robot's centre of mass relative to the base origin, base frame, m (MJCF masses)."""
        self._set_joints(joint_pos, None)
        com_w = pin.centerOfMass(self.model, self.data, self._q)
        return self._world_T_base.rotation.T @ (com_w - self._world_T_base.translation)

    def feet(self, joint_pos: np.ndarray, joint_vel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Foot positions (4, 3) in m and velocities (4, 3) in m/s, base frame, SDK leg order."""
        motion = self.feet_motion(joint_pos, joint_vel)
        return motion.pos_b, motion.vel_b

    def foot_positions(self, joint_pos: np.ndarray) -> np.ndarray:
        return self.feet(joint_pos, np.zeros(self.spec.num_joints))[0]

    def foot_jacobians(self, joint_pos: np.ndarray) -> np.ndarray:
        """d foot_pos_b / d joint_pos of each leg's own three joints: (4, 3, 3), SDK order."""
        self._set_joints(joint_pos, None)
        pin.computeJointJacobians(self.model, self.data, self._q)
        pin.updateFramePlacements(self.model, self.data)
        rot_bw = self._world_T_base.rotation.T
        jac = np.empty((4, 3, 3))
        for i, fid in enumerate(self.foot_frame_ids):
            full = pin.getFrameJacobian(self.model, self.data, fid, pin.LOCAL_WORLD_ALIGNED)[:3, 6:]
            full_sdk = self.spec.to_sdk_order(full)  # columns back to SDK joint order
            jac[i] = rot_bw @ full_sdk[:, 3 * i : 3 * i + 3]
        return jac

    def joints_for_feet(
        self, foot_pos_b: np.ndarray, joint_pos_guess: np.ndarray, iterations: int = 20, tol_m: float = 1e-10
    ) -> np.ndarray:
        """Inverse kinematics (damped Newton, per leg): joint positions (SDK order) putting the
        feet at `foot_pos_b` (4, 3). Used to synthesise consistent sensor data for tests and
        scripted trajectories; the estimator itself needs only forward kinematics."""
        q = np.array(joint_pos_guess, dtype=np.float64)
        for _ in range(iterations):
            err = np.asarray(foot_pos_b) - self.foot_positions(q)
            if np.max(np.abs(err)) < tol_m:
                break
            jac = self.foot_jacobians(q)
            for leg in range(4):
                j = jac[leg]
                q[3 * leg : 3 * leg + 3] += j.T @ np.linalg.solve(j @ j.T + 1e-9 * np.eye(3), err[leg])
        return q
