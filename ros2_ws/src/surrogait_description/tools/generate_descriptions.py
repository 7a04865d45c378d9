"""Write the Go2 and Go1 MJCF (and URDF) files from the fact sheets in shared/robots/.

The fact-sheet numbers live here, once. Everything else in the project reads the
generated MJCF (MuJoCo and Pinocchio alike) and derives the robot spec from it.

    python ros2_ws/src/surrogait_description/tools/generate_descriptions.py

The standing keyframe is the equilibrium under the nominal joint PD: the generator
settles the robot in MuJoCo from the kinematic pose and records the result, so a
simulation started from the keyframe begins at rest instead of dropping by the knee sag.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import mujoco
import numpy as np

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "surrogait_description"
LEGS = ("FL", "FR", "RL", "RR")  # kinematic tree order (the model's qpos order)
SDK_LEGS = ("FR", "FL", "RR", "RL")  # the SDK's motor order
JOINTS = ("hip", "thigh", "calf")


@dataclasses.dataclass(frozen=True)
class Inertial:
    mass: float
    com: tuple[float, float, float]
    principal: tuple[float, float, float]
    quat_wxyz: tuple[float, float, float, float]
    side: str  # which leg the fact sheet gives ("L", "R" or "" for the trunk)
    front: bool = True  # the fact sheet's hip is a front hip


@dataclasses.dataclass(frozen=True)
class RobotFacts:
    name: str
    hip_offset: tuple[float, float]  # (x, |y|) of the hips in the trunk
    thigh_offset_y: float
    thigh_length: float
    calf_length: float
    foot_radius: float
    imu_pos: tuple[float, float, float]
    trunk_half_size: tuple[float, float, float]
    trunk: Inertial
    hip: Inertial
    thigh: Inertial
    calf: Inertial
    hip_range: tuple[float, float]
    front_thigh_range: tuple[float, float]
    rear_thigh_range: tuple[float, float]
    calf_range: tuple[float, float]
    torque_limits: tuple[float, float, float]  # hip, thigh, calf (N·m)
    velocity_limits: tuple[float, float, float]  # rad/s
    friction: float
    nominal_kp: float
    nominal_kd: float
    default_joint_pos_sdk: tuple[float, ...]
    # The folded pose the robot lies in when powered on, before a stand-up (shared/robots/go2.md): where the
    # simulators start it.
    lying_joint_pos_sdk: tuple[float, ...] = (0.0, 1.36, -2.65) * 4


GO2 = RobotFacts(
    name="go2",
    hip_offset=(0.1934, 0.0465),
    thigh_offset_y=0.0955,
    thigh_length=0.213,
    calf_length=0.213,
    foot_radius=0.022,
    imu_pos=(-0.02557, 0.0, 0.04232),
    trunk_half_size=(0.1881, 0.04675, 0.057),
    trunk=Inertial(6.921, (0.021112, 0, -0.005366), (0.107027, 0.0980771, 0.0244531),
                   (-0.000543471, 0.713435, -0.00173769, 0.700719), ""),
    hip=Inertial(0.678, (-0.0054, 0.00194, -0.000105), (0.00088403, 0.000596003, 0.000479967),
                 (0.497014, 0.499245, 0.505462, 0.498237), "L"),
    thigh=Inertial(1.152, (-0.00374, -0.0223, -0.0327), (0.00594973, 0.00584149, 0.000878787),
                   (0.829533, 0.0847635, -0.0200632, 0.551623), "L"),
    calf=Inertial(0.241352, (0.00629595, -0.000622121, -0.141417),
                  (0.0014901, 0.00146356, 5.31397e-05),
                  (0.710672, 0.00154099, -0.00450087, 0.703508), "L"),
    hip_range=(-1.0472, 1.0472),
    front_thigh_range=(-1.5708, 3.4907),
    rear_thigh_range=(-0.5236, 4.5379),
    calf_range=(-2.7227, -0.83776),
    torque_limits=(23.7, 23.7, 45.43),
    velocity_limits=(30.1, 30.1, 20.06),
    friction=0.8,
    nominal_kp=40.0,
    nominal_kd=1.0,
    default_joint_pos_sdk=(-0.1, 0.8, -1.5, 0.1, 0.8, -1.5, -0.1, 1.0, -1.5, 0.1, 1.0, -1.5),
)

GO1 = RobotFacts(
    name="go1",
    hip_offset=(0.1881, 0.04675),
    thigh_offset_y=0.08,
    thigh_length=0.213,
    calf_length=0.213,
    foot_radius=0.023,
    imu_pos=(0.0, 0.0, 0.0),
    trunk_half_size=(0.125, 0.04, 0.057),
    trunk=Inertial(5.204, (0.0223, 0.002, -0.0005), (0.0716565, 0.0630105, 0.0168101),
                   (-0.00342088, 0.705204, 0.000106698, 0.708996), ""),
    hip=Inertial(0.68, (-0.0049166, 0.00762615, -8.865e-05), (0.000734064, 0.000468438, 0.000398719),
                 (0.507341, 0.514169, 0.495027, 0.482891), "R"),
    thigh=Inertial(1.009, (-0.00304722, 0.019315, -0.0305004), (0.00478717, 0.00460903, 0.000709268),
                   (0.65243, -0.0272313, 0.0775126, 0.753383), "R"),
    calf=Inertial(0.195862, (0.00429862, 0.000976676, -0.146197),
                  (0.00149767, 0.00148468, 3.58427e-05),
                  (0.691246, 0.00357467, 0.00511118, 0.722592), "R"),
    hip_range=(-0.863, 0.863),
    front_thigh_range=(-0.686, 4.501),
    rear_thigh_range=(-0.686, 4.501),
    calf_range=(-2.818, -0.888),
    torque_limits=(23.7, 23.7, 35.55),
    velocity_limits=(30.0, 30.0, 20.0),
    friction=0.7,
    nominal_kp=40.0,
    nominal_kd=1.0,
    default_joint_pos_sdk=(-0.1, 0.8, -1.5, 0.1, 0.8, -1.5, -0.1, 1.0, -1.5, 0.1, 1.0, -1.5),
)


def _fmt(values) -> str:
    return " ".join(f"{float(v):.9g}" for v in values)


def _full_inertia(inertial: Inertial, leg: str, mirror_x_for_rear: bool) -> tuple[np.ndarray, np.ndarray]:
    """COM and full inertia tensor of a link for `leg`, mirrored from the fact sheet's leg.

    A mirror S (diag of ±1) maps the tensor as S·I·S and the COM as S·c; this keeps the
    tensor physical, which a sign flip of the principal-frame quaternion would not.
    """
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, np.array(inertial.quat_wxyz, dtype=float))
    rot = rot.reshape(3, 3)
    inertia = rot @ np.diag(inertial.principal) @ rot.T
    mirror = np.ones(3)
    if inertial.side and leg[1] != inertial.side:
        mirror[1] = -1.0
    if mirror_x_for_rear and leg[0] == "R":
        mirror[0] = -1.0
    s = np.diag(mirror)
    return s @ np.array(inertial.com), s @ inertia @ s


def _inertial_xml(inertial: Inertial, leg: str, mirror_x_for_rear: bool) -> str:
    com, tensor = _full_inertia(inertial, leg, mirror_x_for_rear)
    full = (tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[0, 1], tensor[0, 2], tensor[1, 2])
    return f'<inertial pos="{_fmt(com)}" mass="{inertial.mass}" fullinertia="{_fmt(full)}"/>'


def _leg_xml(facts: RobotFacts, leg: str) -> str:
    sx = 1.0 if leg[0] == "F" else -1.0
    sy = 1.0 if leg[1] == "L" else -1.0
    hip_pos = (sx * facts.hip_offset[0], sy * facts.hip_offset[1], 0.0)
    thigh_range = facts.front_thigh_range if leg[0] == "F" else facts.rear_thigh_range
    r = facts.foot_radius
    return f"""
    <body name="{leg}_hip" pos="{_fmt(hip_pos)}">
      {_inertial_xml(facts.hip, leg, mirror_x_for_rear=True)}
      <joint name="{leg}_hip_joint" class="hip" range="{_fmt(facts.hip_range)}"/>
      <geom class="visual" type="cylinder" size="0.046 0.02" pos="0 {sy * 0.05:.4g} 0" zaxis="0 1 0"/>
      <body name="{leg}_thigh" pos="0 {sy * facts.thigh_offset_y:.9g} 0">
        {_inertial_xml(facts.thigh, leg, mirror_x_for_rear=False)}
        <joint name="{leg}_thigh_joint" class="thigh" range="{_fmt(thigh_range)}"/>
        <geom class="collision" type="capsule" size="0.022" fromto="0 0 -0.03 0 0 {-facts.thigh_length + 0.04:.4g}"/>
        <body name="{leg}_calf" pos="0 0 {-facts.thigh_length:.9g}">
          {_inertial_xml(facts.calf, leg, mirror_x_for_rear=False)}
          <joint name="{leg}_calf_joint" class="calf" range="{_fmt(facts.calf_range)}"/>
          <geom class="collision" type="capsule" size="0.013" fromto="0 0 -0.02 0 0 {-facts.calf_length + 0.04:.4g}"/>
          <geom name="{leg}_foot" class="foot" size="{r}" pos="0 0 {-facts.calf_length:.9g}"/>
          <site name="{leg}_foot" pos="0 0 {-facts.calf_length:.9g}" size="{r}"/>
        </body>
      </body>
    </body>"""


def mjcf_text(facts: RobotFacts, keyframe_qpos: np.ndarray | None = None) -> str:
    hip_tau, thigh_tau, calf_tau = facts.torque_limits
    legs = "".join(_leg_xml(facts, leg) for leg in LEGS)
    motors = "\n".join(
        f'    <motor name="{leg}_{j}" joint="{leg}_{j}_joint" class="{j}"/>'
        for leg in SDK_LEGS for j in JOINTS
    )
    keyframe = ""
    if keyframe_qpos is not None:
        keyframe = f'  <keyframe>\n    <key name="stand" qpos="{_fmt(np.round(keyframe_qpos, 5))}"/>\n  </keyframe>\n'
    hx, hy, hz = facts.trunk_half_size
    return f"""<!-- Unitree {facts.name.upper()}: generated by tools/generate_descriptions.py from shared/robots/{facts.name}.md; do not edit by hand. -->
<mujoco model="{facts.name}">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="0.002" integrator="implicitfast"/>

  <custom>
    <!-- Facts a controller needs that MJCF has no element for; the robot spec reads them. -->
    <numeric name="nominal_kp" data="{facts.nominal_kp}"/>
    <numeric name="nominal_kd" data="{facts.nominal_kd}"/>
    <numeric name="default_joint_pos_sdk" data="{_fmt(facts.default_joint_pos_sdk)}"/>
    <numeric name="joint_velocity_limits" data="{_fmt(facts.velocity_limits)}"/>
    <numeric name="lying_joint_pos_sdk" data="{_fmt(facts.lying_joint_pos_sdk)}"/>
  </custom>

  <default>
    <joint damping="0.1" armature="0.01" frictionloss="0.2" axis="0 1 0"/>
    <geom contype="0" conaffinity="0" condim="3" friction="{facts.friction} 0.005 0.0001"/>
    <default class="hip"><joint axis="1 0 0"/><motor ctrlrange="{-hip_tau} {hip_tau}"/></default>
    <default class="thigh"><motor ctrlrange="{-thigh_tau} {thigh_tau}"/></default>
    <default class="calf"><motor ctrlrange="{-calf_tau} {calf_tau}"/></default>
    <!-- Robot geoms touch the ground only (conaffinity 1), never each other. -->
    <default class="collision"><geom conaffinity="1" group="3" rgba="0.3 0.3 0.35 1"/></default>
    <default class="foot"><geom type="sphere" conaffinity="1" priority="1" rgba="0.1 0.1 0.1 1"/></default>
    <default class="visual"><geom contype="0" conaffinity="0" group="2" mass="0" density="0" rgba="0.6 0.6 0.65 1"/></default>
  </default>

  <worldbody>
    <body name="base" pos="0 0 0.35">
      <freejoint name="floating_base"/>
      {_inertial_xml(facts.trunk, "", mirror_x_for_rear=False)}
      <geom name="trunk" class="collision" type="box" size="{hx} {hy} {hz}"/>
      <site name="imu" pos="{_fmt(facts.imu_pos)}"/>{legs}
    </body>
  </worldbody>

  <actuator>
    <!-- SDK motor order: FR, FL, RR, RL; torque limits as control ranges. -->
{motors}
  </actuator>

  <sensor>
    <framequat name="imu_quat" objtype="site" objname="imu"/>
    <gyro name="imu_gyro" site="imu"/>
    <accelerometer name="imu_acc" site="imu"/>
  </sensor>
{keyframe}</mujoco>
"""


SCENE = """<!-- A {name} on flat ground; generated by tools/generate_descriptions.py. -->
<mujoco model="{name}_scene">
  <include file="{name}.xml"/>
  <visual><headlight diffuse="0.6 0.6 0.6" ambient="0.3 0.3 0.3"/><global offwidth="640" offheight="480"/></visual>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.25 0.3 0.35" rgb2="0.35 0.4 0.45" width="512" height="512"/>
    <material name="grid" texture="grid" texrepeat="1 1" texuniform="true"/>
  </asset>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="0 0 0.05" material="grid" contype="1" conaffinity="1" friction="1 0.005 0.0001"/>
  </worldbody>
</mujoco>
"""


def settle_standing_qpos(scene_path: Path, facts: RobotFacts, seconds: float = 3.0) -> np.ndarray:
    """Stand the robot under the nominal PD and return its resting qpos."""
    model = mujoco.MjModel.from_xml_path(str(scene_path))
    data = mujoco.MjData(model)
    sdk_to_qpos = {f"{leg}_{j}": i for i, (leg, j) in enumerate((a, b) for a in SDK_LEGS for b in JOINTS)}
    targets = np.zeros(model.nu)
    qadr = np.zeros(model.nu, dtype=int)
    for a in range(model.nu):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        targets[a] = facts.default_joint_pos_sdk[sdk_to_qpos[name]]
        qadr[a] = model.jnt_qposadr[model.actuator_trnid[a, 0]]
    data.qpos[qadr] = targets
    mujoco.mj_kinematics(model, data)
    foot_z = min(data.site_xpos[model.site(f"{leg}_foot").id][2] for leg in LEGS)
    data.qpos[2] += -foot_z + facts.foot_radius
    for _ in range(int(seconds / model.opt.timestep)):
        q, dq = data.qpos[qadr], data.qvel[qadr - 1]
        data.ctrl[:] = facts.nominal_kp * (targets - q) - facts.nominal_kd * dq
        mujoco.mj_step(model, data)
    qpos = data.qpos.copy()
    qpos[:2] = 0.0
    return qpos


def _body_inertia_full(model: mujoco.MjModel, body: int) -> np.ndarray:
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body_iquat[body])
    rot = rot.reshape(3, 3)
    return rot @ np.diag(model.body_inertia[body]) @ rot.T


def urdf_text(robot_path: Path) -> str:
    """A URDF for ROS tools (robot_state_publisher, Gazebo), converted from the compiled MJCF."""
    model = mujoco.MjModel.from_xml_path(str(robot_path))
    name = model.names[: model.names.index(b"\0")].decode()
    out = ['<?xml version="1.0"?>',
           f"<!-- Generated from mjcf/{robot_path.name} by tools/generate_descriptions.py; do not edit. -->",
           f'<robot name="{name}">']
    for b in range(1, model.nbody):
        body = model.body(b)
        inertia = _body_inertia_full(model, b)
        out.append(f'  <link name="{body.name}">')
        if model.body_mass[b] > 0:
            out.append(
                f'    <inertial><origin xyz="{_fmt(model.body_ipos[b])}" rpy="0 0 0"/><mass value="{model.body_mass[b]:.9g}"/>'
                f'<inertia ixx="{inertia[0, 0]:.9g}" ixy="{inertia[0, 1]:.9g}" ixz="{inertia[0, 2]:.9g}" '
                f'iyy="{inertia[1, 1]:.9g}" iyz="{inertia[1, 2]:.9g}" izz="{inertia[2, 2]:.9g}"/></inertial>'
            )
        if body.name == "base":
            g = model.geom("trunk")
            box = f'<geometry><box size="{_fmt(2 * g.size)}"/></geometry>'
            out.append(f"    <visual>{box}</visual><collision>{box}</collision>")
        out.append("  </link>")
        if b > 1:
            j = model.body_jntadr[b]
            parent = model.body(model.body_parentid[b]).name
            lo, hi = model.jnt_range[j]
            actuator = next(a for a in range(model.nu) if model.actuator_trnid[a, 0] == j)
            effort = model.actuator_ctrlrange[actuator, 1]
            leg_joint = ("hip", "thigh", "calf").index(body.name.split("_")[1])
            velocity = _numeric_data(model, "joint_velocity_limits")[leg_joint]
            out.append(
                f'  <joint name="{model.joint(j).name}" type="revolute"><parent link="{parent}"/><child link="{body.name}"/>'
                f'<origin xyz="{_fmt(model.body_pos[b])}" rpy="0 0 0"/><axis xyz="{_fmt(model.jnt_axis[j])}"/>'
                f'<limit lower="{lo:.9g}" upper="{hi:.9g}" effort="{effort:.9g}" velocity="{velocity:.9g}"/>'
                f'<dynamics damping="{model.dof_damping[model.jnt_dofadr[j]]:.9g}" '
                f'friction="{model.dof_frictionloss[model.jnt_dofadr[j]]:.9g}"/></joint>'
            )
    for leg in LEGS:
        site = model.site(f"{leg}_foot")
        sphere = f'<geometry><sphere radius="{model.geom(f"{leg}_foot").size[0]:.9g}"/></geometry>'
        out.append(f'  <link name="{leg}_foot"><visual>{sphere}</visual><collision>{sphere}</collision></link>')
        out.append(
            f'  <joint name="{leg}_foot_fixed" type="fixed"><parent link="{leg}_calf"/><child link="{leg}_foot"/>'
            f'<origin xyz="{_fmt(site.pos)}" rpy="0 0 0"/></joint>'
        )
    imu = model.site("imu")
    out.append('  <link name="imu"/>')
    out.append(f'  <joint name="imu_fixed" type="fixed"><parent link="base"/><child link="imu"/>'
               f'<origin xyz="{_fmt(imu.pos)}" rpy="0 0 0"/></joint>')
    out.append("</robot>")
    return "\n".join(out) + "\n"


def _numeric_data(model: mujoco.MjModel, name: str) -> np.ndarray:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, name)
    return model.numeric_data[model.numeric_adr[i] : model.numeric_adr[i] + model.numeric_size[i]]


def write(facts: RobotFacts) -> None:
    mjcf_dir = PACKAGE_DIR / "mjcf"
    robot_path = mjcf_dir / f"{facts.name}.xml"
    scene_path = mjcf_dir / f"{facts.name}_scene.xml"
    robot_path.write_text(mjcf_text(facts))
    scene_path.write_text(SCENE.format(name=facts.name))
    robot_path.write_text(mjcf_text(facts, settle_standing_qpos(scene_path, facts)))
    urdf_path = PACKAGE_DIR / "urdf" / f"{facts.name}.urdf"
    urdf_path.write_text(urdf_text(robot_path))
    print(f"wrote {robot_path.relative_to(PACKAGE_DIR.parent)}, {scene_path.name} and urdf/{urdf_path.name}")


if __name__ == "__main__":
    for robot in (GO2, GO1):
        write(robot)
