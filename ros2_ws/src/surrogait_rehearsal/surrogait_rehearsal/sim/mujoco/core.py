"""The simulated Go2: MuJoCo physics driven by the motors' PD (see motor_driver), read out as the robot's sensors.

ROS-free and DDS-free: the node (`go2_sim_node`) feeds it LowCmds and publishes what it reads.
Arrays handed in or out are in SDK motor order (FR, FL, RR, RL × hip, thigh, calf); MuJoCo's
qpos/qvel use the MJCF tree order (FL, FR, RL, RR) and are converted with the robot spec.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

from surrogait_core.robot_spec import RobotSpec, load_robot_spec
from surrogait_core.terrain import TERRAINS, scene_model
from surrogait_core.wire.go2_wire import MotorCommands
from surrogait_rehearsal.sim.motor_driver import MOTOR_MODELS, MotorTorques

INITIAL_POSES = ("lying", "stand")
# The folded pose a Go2 is put down in before stand-up (shared/robots/go2.md), SDK order.
LYING_JOINT_POS = np.tile([0.0, 1.36, -2.65], 4)
LYING_SETTLE_S = 1.5  # passive settling from the folded pose until the robot is at rest on the floor


class SimConfigError(ValueError):
    pass


@dataclasses.dataclass
class SimConfig:
    robot: str = "go2"
    physics_dt_s: float = 0.002
    initial_pose: str = "lying"  # "lying": on the floor, motors passive (as powered on); "stand": keyframe
    imu_quat_noise_std_rad: float = 0.0  # small-angle rotation noise on the IMU orientation
    imu_gyro_noise_std: float = 0.01  # rad/s
    imu_acc_noise_std: float = 0.05  # m/s²
    seed: int = 0
    motor_model: str = "driver"  # when the PD law runs: every physics step, or once per LowCmd (MOTOR_MODELS)
    terrain: str = "flat"  # the ground: flat, or a course of surrogait_core.terrain (the trainer's own)
    terrain_seed: int = 0

    def validate(self) -> None:
        if not 0.0 < self.physics_dt_s <= 0.002:
            raise SimConfigError(
                f"physics_dt {self.physics_dt_s} s: must be in (0, 0.002] (motor PD runs at >= 500 Hz)")
        if self.initial_pose not in INITIAL_POSES:
            raise SimConfigError(f"initial_pose {self.initial_pose!r}: expected one of {', '.join(INITIAL_POSES)}")
        if self.terrain not in TERRAINS:
            raise SimConfigError(f"terrain {self.terrain!r}: expected one of {', '.join(TERRAINS)}")
        if self.motor_model not in MOTOR_MODELS:
            raise SimConfigError(f"motor_model {self.motor_model!r}: expected one of {', '.join(MOTOR_MODELS)}")
        for name in ("imu_quat_noise_std_rad", "imu_gyro_noise_std", "imu_acc_noise_std"):
            if getattr(self, name) < 0.0:
                raise SimConfigError(f"{name} must be >= 0, got {getattr(self, name)}")


@dataclasses.dataclass
class RobotReadout:
    """What the robot's sensors report (LowState content), SDK order, body frame for the IMU."""

    quat_wxyz: np.ndarray
    gyro_b: np.ndarray  # rad/s
    accel_b: np.ndarray  # m/s², includes the gravity reaction (≈ +9.81 z at rest)
    joint_pos: np.ndarray  # rad
    joint_vel: np.ndarray  # rad/s
    joint_tau_est: np.ndarray  # N·m, the torque the drivers applied
    foot_force_n: np.ndarray  # FR, FL, RR, RL: normal contact force, N


@dataclasses.dataclass
class GroundTruth:
    """Scoring only: nothing on the robot measures these."""

    time_s: float
    base_pos_w: np.ndarray  # m, world
    base_quat_wxyz: np.ndarray  # world from body
    base_lin_vel_w: np.ndarray  # m/s, world
    base_lin_vel_b: np.ndarray  # m/s, body
    base_ang_vel_b: np.ndarray  # rad/s, body


def quat_rotate_inverse(quat_wxyz: np.ndarray, v_w: np.ndarray) -> np.ndarray:
    """Express world vector v_w in the frame of orientation quat_wxyz (world from body)."""
    mat = np.empty(9)
    mujoco.mju_quat2Mat(mat, quat_wxyz)
    return mat.reshape(3, 3).T @ v_w


class Go2Sim:
    """One simulated robot. Call `step(cmd, cmd_seq)` once per physics step with the last valid LowCmd."""

    def __init__(self, config: SimConfig, spec: RobotSpec | None = None) -> None:
        config.validate()
        self.config = config
        self.spec = spec or load_robot_spec(config.robot)
        self.model = scene_model(self.spec.scene_path, config.terrain, config.terrain_seed)
        self.model.opt.timestep = config.physics_dt_s
        self.data = mujoco.MjData(self.model)
        self._rng = np.random.default_rng(config.seed)
        joints = [self.model.joint(f"{n}_joint") for n in self.spec.model_joint_names]  # model order
        self._joint_qpos_adr = np.array([j.qposadr[0] for j in joints])
        self._joint_dof_adr = np.array([j.dofadr[0] for j in joints])
        self._foot_geoms = np.array([self.model.geom(name).id for name in self.spec.foot_names])
        # geom id -> SDK leg slot (-1: not a foot); one extra entry so that index -1 also reads -1.
        self._foot_slot = np.full(self.model.ngeom + 1, -1)
        self._foot_slot[self._foot_geoms] = np.arange(len(self._foot_geoms))
        self._floor_geom = self.model.geom("floor").id
        self._base_body = self.model.body("base").id
        self._sensor = {n: self._sensor_slice(n) for n in ("imu_quat", "imu_gyro", "imu_acc")}
        self.motors = MotorTorques(config.motor_model, self.spec.joint_torque_limit)
        self.applied_tau = np.zeros(self.spec.num_joints)  # SDK order, last step
        self.reset()

    def _sensor_slice(self, name: str) -> slice:
        s = self.model.sensor(name)
        return slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))

    # --- state -------------------------------------------------------------------------------
    def reset(self) -> None:
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = self.spec.standing_qpos
        if self.config.initial_pose == "lying":
            self.data.qpos[2] = 0.15
            self.data.qpos[self._joint_qpos_adr] = self.spec.to_model_order(LYING_JOINT_POS)
            # Settle passively so the run starts at rest, as a robot put down on the floor.
            self.data.ctrl[:] = 0.0
            for _ in range(int(round(LYING_SETTLE_S / self.model.opt.timestep))):
                mujoco.mj_step(self.model, self.data)
            self.data.time = 0.0
        mujoco.mj_forward(self.model, self.data)
        self.motors.reset()
        self.applied_tau[:] = 0.0

    @property
    def time_s(self) -> float:
        return float(self.data.time)

    def joint_pos(self) -> np.ndarray:
        return self.spec.to_sdk_order(self.data.qpos[self._joint_qpos_adr])

    def joint_vel(self) -> np.ndarray:
        return self.spec.to_sdk_order(self.data.qvel[self._joint_dof_adr])

    # --- stepping ----------------------------------------------------------------------------
    def step(self, cmd: MotorCommands | None, cmd_seq: int | None = None) -> None:
        """Advance one physics step with the motor torques of the configured motor model.

        `cmd_seq` numbers the valid LowCmds (a new number: a command arrived since the last step);
        the `driver` model does not need it, `on_command` does.
        """
        tau = self.motors.torques(cmd, cmd_seq, self.joint_pos(), self.joint_vel())
        self.applied_tau[:] = tau
        self.data.ctrl[:] = tau  # actuators are declared in SDK order
        mujoco.mj_step(self.model, self.data)

    def push(self, lin_vel_w: np.ndarray, ang_vel_w: np.ndarray) -> None:
        """Add a velocity to the base once (fault injection: a shove). Both vectors in the world frame."""
        self.data.qvel[0:3] += lin_vel_w
        # A free joint's angular velocity is in the body frame.
        self.data.qvel[3:6] += quat_rotate_inverse(self.data.qpos[3:7], np.asarray(ang_vel_w, dtype=np.float64))

    # --- readouts ----------------------------------------------------------------------------
    def foot_forces(self) -> np.ndarray:
        """Normal contact force between each foot and the floor (N), SDK leg order FR, FL, RR, RL."""
        forces = np.zeros(len(self._foot_geoms))
        ncon = self.data.ncon
        if ncon == 0:
            return forces
        contact = self.data.contact
        g1, g2 = contact.geom1[:ncon], contact.geom2[:ncon]
        other = np.where(g1 == self._floor_geom, g2, np.where(g2 == self._floor_geom, g1, -1))
        slots = self._foot_slot[other]
        wrench = np.zeros(6)
        for i in np.flatnonzero(slots >= 0):
            mujoco.mj_contactForce(self.model, self.data, int(i), wrench)
            forces[slots[i]] += abs(wrench[0])  # contact frame x is the normal
        return forces

    def readout(self) -> RobotReadout:
        s = self.data.sensordata
        quat = s[self._sensor["imu_quat"]].copy()
        if self.config.imu_quat_noise_std_rad > 0.0:
            dq = np.empty(4)
            angle = self._rng.normal(0.0, self.config.imu_quat_noise_std_rad)
            mujoco.mju_axisAngle2Quat(dq, self._unit_vector(), angle)
            noisy = np.empty(4)
            mujoco.mju_mulQuat(noisy, quat, dq)
            quat = noisy
        if quat[0] < 0.0:
            quat = -quat  # a single hemisphere, as the robot's IMU reports
        gyro = s[self._sensor["imu_gyro"]] + self._rng.normal(0.0, self.config.imu_gyro_noise_std, 3)
        acc = s[self._sensor["imu_acc"]] + self._rng.normal(0.0, self.config.imu_acc_noise_std, 3)
        return RobotReadout(
            quat_wxyz=quat,
            gyro_b=gyro,
            accel_b=acc,
            joint_pos=self.joint_pos(),
            joint_vel=self.joint_vel(),
            joint_tau_est=self.applied_tau.copy(),
            foot_force_n=self.foot_forces(),
        )

    def _unit_vector(self) -> np.ndarray:
        v = self._rng.normal(size=3)
        return v / np.linalg.norm(v)

    def ground_truth(self) -> GroundTruth:
        quat = self.data.qpos[3:7].copy()
        lin_w = self.data.qvel[0:3].copy()
        return GroundTruth(
            time_s=self.time_s,
            base_pos_w=self.data.qpos[0:3].copy(),
            base_quat_wxyz=quat,
            base_lin_vel_w=lin_w,
            base_lin_vel_b=quat_rotate_inverse(quat, lin_w),
            base_ang_vel_b=self.data.qvel[3:6].copy(),
        )
