"""The robot spec: facts a controller needs, derived from the robot's MJCF (never retyped).

Arrays are in the SDK's motor order (FR, FL, RR, RL × hip, thigh, calf), the order of the
wire and of every policy. The MJCF's kinematic tree (and so MuJoCo's qpos and Pinocchio's q)
orders legs FL, FR, RL, RR; `model_from_sdk` / `sdk_from_model` convert between the two.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from importlib import resources
from pathlib import Path

import mujoco
import numpy as np

ROBOTS = ("go2", "go1")
SDK_LEG_ORDER = ("FR", "FL", "RR", "RL")
LEG_JOINTS = ("hip", "thigh", "calf")


class UnknownRobotError(ValueError):
    pass


def description_dir() -> Path:
    return Path(str(resources.files("surrogait_description") / "mjcf"))


def mjcf_path(robot: str, scene: bool = False) -> Path:
    if robot not in ROBOTS:
        raise UnknownRobotError(f"unknown robot {robot!r}: expected one of {', '.join(ROBOTS)}")
    return description_dir() / (f"{robot}_scene.xml" if scene else f"{robot}.xml")


@dataclasses.dataclass(frozen=True)
class RobotSpec:
    name: str
    mjcf_path: Path
    scene_path: Path
    joint_names: tuple[str, ...]  # SDK order, e.g. "FR_hip"
    model_joint_names: tuple[str, ...]  # MJCF tree order
    model_from_sdk: np.ndarray  # x_model = x_sdk[model_from_sdk]
    sdk_from_model: np.ndarray  # x_sdk = x_model[sdk_from_model]
    foot_names: tuple[str, ...]  # SDK leg order: "FR_foot", ...
    foot_radius_m: float
    default_joint_pos: np.ndarray  # rad, the PD target when standing
    lying_joint_pos: np.ndarray  # rad, the folded pose it lies in when powered on (where the simulators start it)
    joint_pos_lower: np.ndarray  # rad
    joint_pos_upper: np.ndarray  # rad
    joint_vel_limit: np.ndarray  # rad/s
    joint_torque_limit: np.ndarray  # N·m
    nominal_kp: float  # N·m/rad
    nominal_kd: float  # N·m·s/rad
    standing_qpos: np.ndarray  # MuJoCo qpos of the "stand" keyframe (model order)
    total_mass_kg: float

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    @property
    def standing_base_height_m(self) -> float:
        return float(self.standing_qpos[2])

    def to_model_order(self, x_sdk: np.ndarray) -> np.ndarray:
        return np.asarray(x_sdk)[..., self.model_from_sdk]

    def to_sdk_order(self, x_model: np.ndarray) -> np.ndarray:
        return np.asarray(x_model)[..., self.sdk_from_model]


def _numeric(model: mujoco.MjModel, name: str) -> np.ndarray:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, name)
    adr, size = model.numeric_adr[i], model.numeric_size[i]
    return model.numeric_data[adr : adr + size].copy()


@cache
def load_robot_spec(robot: str) -> RobotSpec:
    """Read the spec of `robot` ("go2" or "go1") from its MJCF."""
    path = mjcf_path(robot)
    model = mujoco.MjModel.from_xml_path(str(path))
    joint_names = tuple(f"{leg}_{j}" for leg in SDK_LEG_ORDER for j in LEG_JOINTS)
    hinge_ids = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    model_joint_names = tuple(model.joint(j).name.removesuffix("_joint") for j in hinge_ids)
    model_from_sdk = np.array([joint_names.index(n) for n in model_joint_names])
    sdk_from_model = np.argsort(model_from_sdk)

    # Actuators are declared in SDK order; their control range is the motor's torque limit.
    actuator_joint = [model.joint(model.actuator_trnid[a, 0]).name.removesuffix("_joint") for a in range(model.nu)]
    if tuple(actuator_joint) != joint_names:
        raise ValueError(f"{path}: actuators must be in SDK order {joint_names}, found {actuator_joint}")
    torque_limit = model.actuator_ctrlrange[:, 1].copy()

    ranges_model = np.array([model.jnt_range[j] for j in hinge_ids])
    ranges_sdk = ranges_model[sdk_from_model]
    vel_per_leg_joint = _numeric(model, "joint_velocity_limits")
    foot_geom = model.geom(f"{SDK_LEG_ORDER[0]}_foot")
    return RobotSpec(
        name=robot,
        mjcf_path=path,
        scene_path=mjcf_path(robot, scene=True),
        joint_names=joint_names,
        model_joint_names=model_joint_names,
        model_from_sdk=model_from_sdk,
        sdk_from_model=sdk_from_model,
        foot_names=tuple(f"{leg}_foot" for leg in SDK_LEG_ORDER),
        foot_radius_m=float(foot_geom.size[0]),
        default_joint_pos=_numeric(model, "default_joint_pos_sdk"),
        lying_joint_pos=_numeric(model, "lying_joint_pos_sdk"),
        joint_pos_lower=ranges_sdk[:, 0].copy(),
        joint_pos_upper=ranges_sdk[:, 1].copy(),
        joint_vel_limit=np.tile(vel_per_leg_joint, len(SDK_LEG_ORDER)),
        joint_torque_limit=torque_limit,
        nominal_kp=float(_numeric(model, "nominal_kp")[0]),
        nominal_kd=float(_numeric(model, "nominal_kd")[0]),
        standing_qpos=model.key("stand").qpos.copy(),
        total_mass_kg=float(model.body_mass.sum()),
    )
