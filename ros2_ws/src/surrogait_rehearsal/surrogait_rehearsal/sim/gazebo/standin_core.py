"""The MuJoCo Go2 as Gazebo presents it to ROS: driven by joint forces, read out as Gazebo's sensors.

ROS-free: the stand-in node (gz_standin_node) publishes what this reads and feeds it the forces it
receives. The scene, start pose, IMU and its noise are go2_sim's (`Go2Sim`); what differs is the
interface, which is Gazebo's:

- forces: the latest force per joint is held and applied at every physics step, as
  gz-sim-apply-joint-force-system does (it keeps the last `cmd_force` value and adds it to the joint's
  force command in every PreUpdate); clipped to the MJCF's torque range as its motors' ctrlrange does;
- joint states with the MJCF joint names in the model's kinematic tree order (FL, FR, RL, RR): the Go2
  SDF's joint state publisher lists them in SDK order, so a stand-in in another order checks that the
  bridge maps joints by name, never by position;
- each foot's wrench as a force_torque sensor on a fixed joint between calf (parent) and foot (child)
  reports it, in the foot's frame: with a massless foot the wrench the foot passes to the calf is the
  ground's contact force on it (and its moment about the foot centre).
"""

from __future__ import annotations

import mujoco
import numpy as np

from surrogait_rehearsal.sim.gazebo.topics import gazebo_joint_name
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig


class ForceDrivenGo2:
    """One Go2 in MuJoCo; `set_force(joint, N·m)` holds a joint's force until the next, `step()` advances."""

    def __init__(self, config: SimConfig) -> None:
        self.sim = Go2Sim(config)
        self.spec = spec = self.sim.spec
        self.model, self.data = self.sim.model, self.sim.data
        self.slot = {gazebo_joint_name(n): i for i, n in enumerate(spec.joint_names)}  # joint name -> SDK slot
        self.joint_names = tuple(gazebo_joint_name(n) for n in spec.model_joint_names)  # kinematic tree order
        self.force_cmd = np.zeros(spec.num_joints)  # SDK order, the latest per joint (Gazebo's starts at 0)
        self._feet = np.array([self.model.geom(name).id for name in spec.foot_names])
        self._foot_slot = {int(g): leg for leg, g in enumerate(self._feet)}
        self._floor = self.model.geom("floor").id

    @property
    def time_s(self) -> float:
        return self.sim.time_s

    def set_force(self, joint: str, value: float) -> None:
        """Hold `value` (N·m) on `joint` (an MJCF joint name) from the next step on; KeyError for an unknown joint."""
        self.force_cmd[self.slot[joint]] = value

    def step(self) -> None:
        tau = np.clip(self.force_cmd, -self.spec.joint_torque_limit, self.spec.joint_torque_limit)
        self.sim.applied_tau[:] = tau  # the recorder's joint_tau
        self.data.ctrl[:] = tau  # the MJCF's motors are declared in SDK order
        mujoco.mj_step(self.model, self.data)

    def joint_state(self) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
        """(names, position, velocity, effort) in the model's kinematic tree order."""
        order = self.spec.model_from_sdk
        return (self.joint_names, self.sim.joint_pos()[order], self.sim.joint_vel()[order],
                self.sim.applied_tau[order])

    def foot_wrenches(self, sign: float) -> tuple[np.ndarray, np.ndarray]:
        """(forces, torques), each (4, 3) in the foot frames (the MJCF foot geom's, i.e. the calf's orientation),
        legs in SDK order: the ground's force on each foot and its moment about the foot centre, times
        `sign` (+1: the wrench the foot applies on the calf, SDFormat's child_to_parent)."""
        d = self.data
        n = len(self._feet)
        forces_w, torques_w = np.zeros((n, 3)), np.zeros((n, 3))
        wrench = np.zeros(6)
        for i in range(d.ncon):
            c = d.contact[i]
            g1, g2 = int(c.geom1), int(c.geom2)
            if self._floor not in (g1, g2):
                continue
            foot = g2 if g1 == self._floor else g1
            leg = self._foot_slot.get(foot)
            if leg is None:
                continue
            mujoco.mj_contactForce(self.model, d, i, wrench)
            # The contact frame's rows are the normal (from geom1 to geom2) and two tangents; the force it
            # gives acts on geom2.
            f_w = c.frame.reshape(3, 3).T @ wrench[:3]
            if foot == g1:
                f_w = -f_w
            forces_w[leg] += f_w
            r = c.pos - d.geom_xpos[foot]  # moment arm about the foot centre (the fixed joint's origin)
            torques_w[leg] += (r[1] * f_w[2] - r[2] * f_w[1], r[2] * f_w[0] - r[0] * f_w[2],
                               r[0] * f_w[1] - r[1] * f_w[0])
        rot = d.geom_xmat[self._feet].reshape(-1, 3, 3)  # world from foot
        # Into each foot's frame: x_foot = R^T x_world, for all legs at once.
        return sign * np.einsum("lji,lj->li", rot, forces_w), sign * np.einsum("lji,lj->li", rot, torques_w)
