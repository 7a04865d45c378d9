"""Write Gazebo Harmonic (`gz sim`) SDF 1.9 models and flat worlds for the Go2 and Go1.

Everything is read from the compiled MJCF (mjcf/<robot>.xml, the one description that
generate_descriptions.py writes), so the Gazebo robot cannot drift from the MuJoCo one;
tests/foundation/test_sdf_parity.py checks masses, inertias, joints, limits and foot positions.

    python ros2_ws/src/surrogait_description/tools/generate_sdf.py

Writes sdf/models/<robot>/model.sdf + model.config and sdf/worlds/<robot>_flat.sdf. A world
includes its robot as model://<robot>: put <share>/surrogait_description/sdf/models (or this
package's sdf/models) on GZ_SIM_RESOURCE_PATH before `gz sim`.

Mapping (names are the MJCF's):
- every MJCF body is a link with the same name (base, FL_hip, FL_thigh, FL_calf, ...), its pose
  relative to its parent link; every hinge a revolute joint (FL_hip_joint, ...) posed at the
  child link, axis in the joint frame, limits: position range, effort = the motor's ctrlrange,
  velocity = the MJCF numeric joint_velocity_limits; damping and friction loss as dynamics;
- each foot is its own link `<LEG>_foot` at the MJCF foot site, welded to the calf by the fixed
  joint `<LEG>_foot_joint` that carries a force_torque sensor: that is how the foot's contact
  force reaches ROS (geometry_msgs/WrenchStamped through ros_gz_bridge);
- inertials are the full tensor about the COM in the link frame (pose rotation zero);
- the robot starts lying folded, as a powered-on robot and the MuJoCo rehearsal do: SDF has no initial joint
  position that gz sim reads (//axis/initial_position is deprecated in SDF 1.8, gone in 1.10, and
  libsdformat 12+ no longer parses it), so links are posed at the MJCF's zero and the model carries a Python
  system (surrogait_description.gz_spawn_pose, through gz sim's PythonSystemLoader) that resets every joint to
  the MJCF's lying pose (numeric lying_joint_pos_sdk) before the first physics step. With all joints at 0
  the calf would start outside its own range (Go2: [-2.72, -0.84] rad), and the joint-limit constraint
  would kick it in on the first step. The world places the folded robot just above the ground.

SDF 1.9: the newest version Debian's libsdformat 12 reads, which tests/foundation/test_sdf_libsdformat.py
parses the files with (gz sim 8 / libsdformat 14 converts 1.9 on load).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

ROBOTS = ("go2", "go1")
SDK_LEGS = ("FR", "FL", "RR", "RL")  # the SDK's leg order, the order of every list written here
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # ros2_ws/src/surrogait_description
MJCF_DIR = PACKAGE_ROOT / "surrogait_description" / "mjcf"
SDF_DIR = PACKAGE_ROOT / "sdf"
SDF_VERSION = "1.9"

# 1 ms, not the MJCF's 2 ms: MuJoCo steps the MJCF with implicitfast (joint damping taken
# implicitly) and soft contacts; DART, gz sim's default engine, with semi-implicit Euler and rigid
# contacts, which want the smaller step. 1 ms also divides the 2 ms period of the bridge's torque
# commands and of the 500 Hz sensors, so every command spans exactly two physics steps.
PHYSICS_STEP_S = 0.001
SENSOR_RATE_HZ = 500.0  # IMU and foot force_torque: the rate of the robot's rt/lowstate
JOINT_STATE_RATE_HZ = 500.0
ODOMETRY_RATE_HZ = 100.0
# The foot link needs an inertial (without one SDF gives it 1 kg) and a positive mass (DART warns
# on massless bodies). It is taken out of the calf, so calf + foot are exactly the MJCF calf; small,
# as the force_torque sensor reads the contact force less foot_mass * (acceleration - gravity).
FOOT_MASS_KG = 0.01
# The folded robot is placed this far above the ground: it settles onto it in the first few steps.
SPAWN_CLEARANCE_M = 0.01
SPAWN_POSE_MODULE = "surrogait_description.gz_spawn_pose"  # the Python system that sets the lying pose
ODOM_FRAME = "world"  # the frames go2_sim's ground truth uses, so the bridged message reads the same
ODOM_CHILD_FRAME = "base_link"


def gz_topics(robot: str, model: mujoco.MjModel | None = None) -> dict:
    """The Gazebo transport topics of `robot`'s model, for the ros_gz_bridge config and the bridge node.

    {"joint_states", "imu", "odometry": topic, "foot_force": {leg: topic} (SDK leg order),
     "cmd_force": {MJCF joint name: topic} (SDK motor order)}. Messages: gz.msgs.Model, gz.msgs.IMU,
    gz.msgs.Odometry, gz.msgs.Wrench, gz.msgs.Double. `model`: the compiled MJCF, if already loaded.
    """
    model = load_model(robot) if model is None else model
    prefix = f"/model/{robot}"
    return {
        "joint_states": f"{prefix}/joint_states",
        "imu": f"{prefix}/imu",
        "odometry": f"{prefix}/odometry",
        "foot_force": {leg: f"{prefix}/foot_force/{leg}" for leg in SDK_LEGS},
        "cmd_force": {joint: f"{prefix}/joint/{joint}/cmd_force" for joint in actuated_joints(model)},
    }


def load_model(robot: str) -> mujoco.MjModel:
    if robot not in ROBOTS:
        raise ValueError(f"unknown robot {robot!r}: expected one of {', '.join(ROBOTS)}")
    return mujoco.MjModel.from_xml_path(str(MJCF_DIR / f"{robot}.xml"))


def actuated_joints(model: mujoco.MjModel) -> list[str]:
    """Joint names in actuator order (the MJCF declares its motors in SDK order)."""
    return [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]


# ---------------------------------------------------------------- numbers and small XML helpers


def _num(value: float) -> str:
    # Values below 1e-12 are last-bit noise of an exact zero: printing them as 0 keeps the text
    # the same on every machine (not 1e-20 here, -3e-21 there); + 0.0 turns -0.0 into 0.
    value = float(value)
    return f"{(0.0 if abs(value) < 1e-12 else value) + 0.0:.9g}"


def _vec(values) -> str:
    return " ".join(_num(v) for v in values)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = text
    return element


def _pose(parent: ET.Element, pos, quat_wxyz=(1.0, 0.0, 0.0, 0.0), relative_to: str | None = None) -> None:
    """<pose>: Euler zeros when there is no rotation, else the exact quaternion (no Euler round trip)."""
    attrs = {"relative_to": relative_to} if relative_to else {}
    quat = np.asarray(quat_wxyz, dtype=float)
    quat = quat / np.linalg.norm(quat) * (1.0 if quat[0] >= 0 else -1.0)
    if np.allclose(quat, (1.0, 0.0, 0.0, 0.0), atol=1e-12):
        _sub(parent, "pose", f"{_vec(pos)} 0 0 0", **attrs)
    else:
        w, x, y, z = quat
        _sub(parent, "pose", f"{_vec(pos)} {_vec((x, y, z, w))}", rotation_format="quat_xyzw", **attrs)


def _numeric(model: mujoco.MjModel, name: str) -> np.ndarray:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, name)
    return model.numeric_data[model.numeric_adr[i] : model.numeric_adr[i] + model.numeric_size[i]].copy()


# ---------------------------------------------------------------- inertia


def body_inertial(model: mujoco.MjModel, body: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, COM, full inertia tensor about the COM) in the body frame, from MuJoCo's principal form."""
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body_iquat[body])
    rot = rot.reshape(3, 3)
    return float(model.body_mass[body]), model.body_ipos[body].copy(), rot @ np.diag(model.body_inertia[body]) @ rot.T


def _about_origin(mass: float, com: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """Parallel-axis theorem: the tensor about the frame origin."""
    return inertia + mass * (com @ com * np.eye(3) - np.outer(com, com))


def foot_inertial(radius: float) -> tuple[float, np.ndarray]:
    """The foot link's own mass and tensor (a solid sphere of the foot's radius)."""
    return FOOT_MASS_KG, 0.4 * FOOT_MASS_KG * radius**2 * np.eye(3)


def without_foot(mass: float, com: np.ndarray, inertia: np.ndarray, foot_pos: np.ndarray,
                 foot_mass: float, foot_tensor: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The calf's inertial less a foot at foot_pos, so that calf + foot make the MJCF calf exactly."""
    rest_mass = mass - foot_mass
    rest_com = (mass * com - foot_mass * foot_pos) / rest_mass
    rest_origin = _about_origin(mass, com, inertia) - _about_origin(foot_mass, foot_pos, foot_tensor)
    rest = rest_origin - rest_mass * (rest_com @ rest_com * np.eye(3) - np.outer(rest_com, rest_com))
    moments = np.linalg.eigvalsh(rest)
    if rest_mass <= 0 or moments.min() <= 0 or 2 * moments.max() > moments.sum():
        raise ValueError(f"a {foot_mass} kg foot leaves the calf a non-physical inertia (moments {moments})")
    return rest_mass, rest_com, rest


def _inertial_xml(link: ET.Element, mass: float, com: np.ndarray, tensor: np.ndarray) -> None:
    inertial = _sub(link, "inertial")
    _sub(inertial, "pose", f"{_vec(com)} 0 0 0")
    _sub(inertial, "mass", _num(mass))
    inertia = _sub(inertial, "inertia")
    for name, (i, j) in (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)), ("iyz", (1, 2)),
                         ("izz", (2, 2))):
        _sub(inertia, name, _num(tensor[i, j]))


# ---------------------------------------------------------------- geometry


def _geometry(parent: ET.Element, model: mujoco.MjModel, geom: int) -> None:
    kind, size = mujoco.mjtGeom(int(model.geom_type[geom])), model.geom_size[geom]
    shape = _sub(parent, "geometry")
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        _sub(_sub(shape, "box"), "size", _vec(2 * size))
    elif kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        _sub(_sub(shape, "sphere"), "radius", _num(size[0]))
    elif kind in (mujoco.mjtGeom.mjGEOM_CAPSULE, mujoco.mjtGeom.mjGEOM_CYLINDER):
        # MuJoCo's size is (radius, half length of the cylindrical part); SDF's length is the whole part.
        body = _sub(shape, "capsule" if kind == mujoco.mjtGeom.mjGEOM_CAPSULE else "cylinder")
        _sub(body, "radius", _num(size[0]))
        _sub(body, "length", _num(2 * size[1]))
    else:
        raise ValueError(f"geom {model.geom(geom).name or geom}: type {kind} has no SDF primitive here")


def _collides(model: mujoco.MjModel, geom: int) -> bool:
    return bool(model.geom_contype[geom] or model.geom_conaffinity[geom])


def _geom_xml(link: ET.Element, model: mujoco.MjModel, geom: int, name: str, pos, quat) -> None:
    """A visual for every geom, plus a collision with its sliding friction for the ones that touch."""
    if _collides(model, geom):
        collision = _sub(link, "collision", name=f"{name}_collision")
        _pose(collision, pos, quat)
        _geometry(collision, model, geom)
        # DART (gz sim) combines two surfaces' mu by the minimum: the ground is given MuJoCo's floor
        # friction (1), so foot-ground contacts get the foot's, as MuJoCo does through the foot's priority.
        mu = _num(model.geom_friction[geom, 0])
        ode = _sub(_sub(_sub(collision, "surface"), "friction"), "ode")
        _sub(ode, "mu", mu)
        _sub(ode, "mu2", mu)
    visual = _sub(link, "visual", name=f"{name}_visual")
    _pose(visual, pos, quat)
    _geometry(visual, model, geom)
    material = _sub(visual, "material")
    rgba = " ".join(f"{v:.3g}" for v in model.geom_rgba[geom])  # float32 in MuJoCo: 3 digits say it all
    _sub(material, "ambient", rgba)
    _sub(material, "diffuse", rgba)


# ---------------------------------------------------------------- the model


def _relative(pos_a, quat_a, pos_b, quat_b) -> tuple[np.ndarray, np.ndarray]:
    """Pose b expressed in frame a (both given in the same parent frame)."""
    inv = np.zeros(4)
    mujoco.mju_negQuat(inv, quat_a)
    rel_pos, rel_quat = np.zeros(3), np.zeros(4)
    mujoco.mju_rotVecQuat(rel_pos, np.asarray(pos_b) - pos_a, inv)
    mujoco.mju_mulQuat(rel_quat, inv, quat_b)
    return rel_pos, rel_quat


def _feet(model: mujoco.MjModel) -> dict[int, str]:
    """{calf body: leg} for every site named <LEG>_foot (the MJCF marks each foot by a site and a geom)."""
    feet = {}
    for leg in SDK_LEGS:
        site = model.site(f"{leg}_foot")
        feet[int(site.bodyid[0])] = leg
    return feet


def _joint_xml(model_el: ET.Element, model: mujoco.MjModel, body: int, velocity_limits: np.ndarray) -> None:
    joint = int(model.body_jntadr[body])
    name = model.joint(joint).name
    hinge = mujoco.mjtJoint(int(model.jnt_type[joint])) == mujoco.mjtJoint.mjJNT_HINGE
    if model.body_jntnum[body] != 1 or not hinge or not model.jnt_limited[joint]:
        raise ValueError(f"body {model.body(body).name}: expected one limited hinge")
    actuator = next(a for a in range(model.nu) if model.actuator_trnid[a, 0] == joint)
    dof = model.jnt_dofadr[joint]
    leg_joint = ("hip", "thigh", "calf").index(name.split("_")[1])
    element = _sub(model_el, "joint", name=name, type="revolute")
    _pose(element, model.jnt_pos[joint])  # in the child link's frame, as SDF defines a joint's pose
    _sub(element, "parent", model.body(model.body_parentid[body]).name)
    _sub(element, "child", model.body(body).name)
    axis = _sub(element, "axis")
    _sub(axis, "xyz", _vec(model.jnt_axis[joint]))
    limit = _sub(axis, "limit")
    _sub(limit, "lower", _num(model.jnt_range[joint, 0]))
    _sub(limit, "upper", _num(model.jnt_range[joint, 1]))
    _sub(limit, "effort", _num(model.actuator_ctrlrange[actuator, 1]))
    _sub(limit, "velocity", _num(velocity_limits[leg_joint]))
    dynamics = _sub(axis, "dynamics")
    _sub(dynamics, "damping", _num(model.dof_damping[dof]))
    _sub(dynamics, "friction", _num(model.dof_frictionloss[dof]))
    _sub(dynamics, "spring_reference", "0")
    _sub(dynamics, "spring_stiffness", "0")


def _foot_xml(model_el: ET.Element, model: mujoco.MjModel, topics: dict, calf: int, leg: str) -> None:
    site = model.site(f"{leg}_foot")
    geom = model.geom(f"{leg}_foot")
    link = _sub(model_el, "link", name=f"{leg}_foot")
    _pose(link, site.pos, site.quat, relative_to=model.body(calf).name)
    mass, tensor = foot_inertial(float(geom.size[0]))
    _inertial_xml(link, mass, np.zeros(3), tensor)
    pos, quat = _relative(site.pos, site.quat, geom.pos, geom.quat)
    _geom_xml(link, model, geom.id, f"{leg}_foot", pos, quat)
    joint = _sub(model_el, "joint", name=f"{leg}_foot_joint", type="fixed")
    _sub(joint, "parent", model.body(calf).name)
    _sub(joint, "child", f"{leg}_foot")
    sensor = _sub(joint, "sensor", name=f"{leg}_foot_force", type="force_torque")
    _sub(sensor, "always_on", "true")
    _sub(sensor, "update_rate", _num(SENSOR_RATE_HZ))
    _sub(sensor, "topic", topics["foot_force"][leg])
    ft = _sub(sensor, "force_torque")
    _sub(ft, "frame", "child")  # the foot's frame, which has the calf's orientation
    _sub(ft, "measure_direction", "child_to_parent")  # what the foot pushes into the calf: the ground's push


def _imu_xml(link: ET.Element, model: mujoco.MjModel, topics: dict) -> None:
    site = model.site("imu")
    sensor = _sub(link, "sensor", name="imu", type="imu")
    _pose(sensor, site.pos, site.quat)
    _sub(sensor, "always_on", "true")
    _sub(sensor, "update_rate", _num(SENSOR_RATE_HZ))
    _sub(sensor, "topic", topics["imu"])
    imu = _sub(sensor, "imu")
    # Without a named reference frame gz sim reports the orientation relative to the starting one;
    # ENU is the world frame (x east, z up), the frame the robot's own IMU attitude is read in.
    _sub(_sub(imu, "orientation_reference_frame"), "localization", "ENU")
    _sub(imu, "enable_orientation", "true")


def _plugins_xml(model_el: ET.Element, topics: dict, spawn_pose: dict[str, float]) -> None:
    publisher = _sub(model_el, "plugin", filename="gz-sim-joint-state-publisher-system",
                     name="gz::sim::systems::JointStatePublisher")
    _sub(publisher, "topic", topics["joint_states"])
    _sub(publisher, "update_rate", _num(JOINT_STATE_RATE_HZ))  # versions without it publish every step
    for joint in topics["cmd_force"]:
        _sub(publisher, "joint_name", joint)
    # One ApplyJointForce per motor: it listens on /model/<model>/joint/<joint>/cmd_force (gz.msgs.Double)
    # and holds the last torque until the next message.
    for joint in topics["cmd_force"]:
        force = _sub(model_el, "plugin", filename="gz-sim-apply-joint-force-system",
                     name="gz::sim::systems::ApplyJointForce")
        _sub(force, "joint_name", joint)
    # Before the first physics step: every joint to the lying pose (module docstring; gz_spawn_pose).
    spawn = _sub(model_el, "plugin", filename="gz-sim-python-system-loader-system",
                 name="gz::sim::systems::PythonSystemLoader")
    _sub(spawn, "module_name", SPAWN_POSE_MODULE)
    _sub(spawn, "initial_joint_positions", " ".join(f"{joint} {_num(q)}" for joint, q in spawn_pose.items()))
    odometry = _sub(model_el, "plugin", filename="gz-sim-odometry-publisher-system",
                    name="gz::sim::systems::OdometryPublisher")
    _sub(odometry, "odom_frame", ODOM_FRAME)
    _sub(odometry, "robot_base_frame", ODOM_CHILD_FRAME)
    _sub(odometry, "odom_topic", topics["odometry"])
    _sub(odometry, "odom_publish_frequency", _num(ODOMETRY_RATE_HZ))
    _sub(odometry, "dimensions", "3")


def model_sdf(robot: str) -> str:
    """The SDF text of `robot`'s model, converted from its compiled MJCF."""
    model = load_model(robot)
    topics = gz_topics(robot, model)
    velocity_limits = _numeric(model, "joint_velocity_limits")
    feet = _feet(model)
    foot_geoms = {model.geom(f"{leg}_foot").id for leg in feet.values()}
    imu_body = int(model.site("imu").bodyid[0])
    armature = sorted({round(float(a), 9) for a in model.dof_armature[6:]})

    root = ET.Element("sdf", version=SDF_VERSION)
    root.append(ET.Comment(
        f" Unitree {robot.upper()}: generated from mjcf/{robot}.xml by tools/generate_sdf.py; do not edit by hand. "
        f"Not expressible in SDF {SDF_VERSION}, so absent in Gazebo: the joints' armature (rotor inertia, "
        f"{', '.join(_num(a) for a in armature)} kg m^2). "))
    model_el = _sub(root, "model", name=robot, canonical_link=model.body(1).name)
    _sub(model_el, "self_collide", "false")  # as in the MJCF: robot geoms touch the ground, never each other
    for body in range(1, model.nbody):
        name = model.body(body).name
        link = _sub(model_el, "link", name=name)
        if model.body_parentid[body] != 0:
            _pose(link, model.body_pos[body], model.body_quat[body], relative_to=model.body(model.body_parentid[body]).name)
        mass, com, tensor = body_inertial(model, body)
        if body in feet:
            site = model.site(f"{feet[body]}_foot")
            foot_mass, foot_tensor = foot_inertial(float(model.geom(f"{feet[body]}_foot").size[0]))
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, site.quat)
            rot = rot.reshape(3, 3)
            mass, com, tensor = without_foot(mass, com, tensor, site.pos, foot_mass, rot @ foot_tensor @ rot.T)
        _inertial_xml(link, mass, com, tensor)
        geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and g not in foot_geoms]
        for index, geom in enumerate(geoms):
            _geom_xml(link, model, geom, model.geom(geom).name or f"{name}_{index}", model.geom_pos[geom],
                      model.geom_quat[geom])
        if body == imu_body:
            _imu_xml(link, model, topics)
        if model.body_parentid[body] != 0:
            _joint_xml(model_el, model, body, velocity_limits)
        if body in feet:
            _foot_xml(model_el, model, topics, body, feet[body])
    _plugins_xml(model_el, topics, lying_joint_positions(model))
    return _document(root)


def model_config(robot: str) -> str:
    root = ET.Element("model")
    _sub(root, "name", robot)
    _sub(root, "version", "1.0")
    _sub(root, "sdf", "model.sdf", version=SDF_VERSION)
    author = _sub(root, "author")
    _sub(author, "name", "surrogait developers")
    _sub(author, "email", "dev@surrogait.invalid")
    _sub(root, "description", f"Unitree {robot.upper()} for gz sim, generated from mjcf/{robot}.xml by "
                              "tools/generate_sdf.py; do not edit by hand.")
    return _document(root)


# ---------------------------------------------------------------- the world


def lying_joint_positions(model: mujoco.MjModel) -> dict[str, float]:
    """{MJCF joint name: rad}: the lying pose (numeric lying_joint_pos_sdk, SDK order = actuator order)."""
    return dict(zip(actuated_joints(model), (float(q) for q in _numeric(model, "lying_joint_pos_sdk")), strict=True))


def lowest_point(model: mujoco.MjModel, joint_positions: dict[str, float], base_height: float = 0.0) -> float:
    """Height of the robot's lowest collision surface with its base level at `base_height` and the joints at
    `joint_positions` (the others at 0)."""
    data = mujoco.MjData(model)
    data.qpos[:] = 0.0
    data.qpos[2], data.qpos[3] = base_height, 1.0
    for name, q in joint_positions.items():
        data.qpos[model.jnt_qposadr[model.joint(name).id]] = q
    mujoco.mj_kinematics(model, data)
    lowest = np.inf
    for geom in range(model.ngeom):
        if not _collides(model, geom):
            continue
        z, rot, size = data.geom_xpos[geom][2], data.geom_xmat[geom].reshape(3, 3), model.geom_size[geom]
        kind = mujoco.mjtGeom(int(model.geom_type[geom]))
        if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            bottom = z - size[0]
        elif kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
            bottom = z - abs(rot[2, 2]) * size[1] - size[0]
        elif kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
            bottom = z - abs(rot[2, 2]) * size[1] - size[0] * np.sqrt(max(0.0, 1.0 - rot[2, 2] ** 2))
        elif kind == mujoco.mjtGeom.mjGEOM_BOX:
            bottom = z - float(np.abs(rot[2]) @ size)
        else:
            raise ValueError(f"geom {model.geom(geom).name or geom}: no lowest point for type {kind}")
        lowest = min(lowest, bottom)
    return float(lowest)


def spawn_height(model: mujoco.MjModel) -> float:
    """Base height at which the robot, lying folded as the spawn-pose system puts it, clears the ground."""
    return round(-lowest_point(model, lying_joint_positions(model)) + SPAWN_CLEARANCE_M, 3)


def world_sdf(robot: str) -> str:
    """A flat world with the physics and sensor systems the model needs, and the robot included."""
    model = load_model(robot)
    scene = mujoco.MjModel.from_xml_path(str(MJCF_DIR / f"{robot}_scene.xml"))
    root = ET.Element("sdf", version=SDF_VERSION)
    root.append(ET.Comment(f" {robot.upper()} on flat ground for gz sim; generated by tools/generate_sdf.py. "
                           f"Needs sdf/models on GZ_SIM_RESOURCE_PATH. "))
    world = _sub(root, "world", name=f"{robot}_flat")
    physics = _sub(world, "physics", name=f"{PHYSICS_STEP_S * 1000:g}ms", type="dart", default="true")
    _sub(physics, "max_step_size", _num(PHYSICS_STEP_S))
    _sub(physics, "real_time_factor", "1")
    _sub(physics, "real_time_update_rate", _num(1.0 / PHYSICS_STEP_S))
    _sub(world, "gravity", _vec(model.opt.gravity))
    systems = (("physics", "Physics"), ("user-commands", "UserCommands"), ("scene-broadcaster", "SceneBroadcaster"),
               ("imu", "Imu"), ("forcetorque", "ForceTorque"))
    # No rendering Sensors system: the model has no camera or lidar, and it would need a GPU or EGL
    # even for a headless server. The IMU and force_torque sensors have systems of their own.
    for filename, name in systems:
        _sub(world, "plugin", filename=f"gz-sim-{filename}-system", name=f"gz::sim::systems::{name}")
    sun = _sub(world, "light", type="directional", name="sun")
    _sub(sun, "cast_shadows", "true")
    _sub(sun, "pose", "0 0 10 0 0 0")
    _sub(sun, "diffuse", "0.8 0.8 0.8 1")
    _sub(sun, "specular", "0.2 0.2 0.2 1")
    _sub(sun, "direction", "-0.5 0.1 -0.9")

    floor = scene.geom("floor")
    ground = _sub(world, "model", name="ground_plane")
    _sub(ground, "static", "true")
    link = _sub(ground, "link", name="link")
    collision = _sub(link, "collision", name="collision")
    plane = _sub(_sub(collision, "geometry"), "plane")
    _sub(plane, "normal", "0 0 1")
    _sub(plane, "size", "100 100")
    ode = _sub(_sub(_sub(collision, "surface"), "friction"), "ode")
    _sub(ode, "mu", _num(floor.friction[0]))
    _sub(ode, "mu2", _num(floor.friction[0]))
    visual = _sub(link, "visual", name="visual")
    plane = _sub(_sub(visual, "geometry"), "plane")
    _sub(plane, "normal", "0 0 1")
    _sub(plane, "size", "100 100")
    material = _sub(visual, "material")
    _sub(material, "ambient", "0.8 0.8 0.8 1")
    _sub(material, "diffuse", "0.8 0.8 0.8 1")

    include = _sub(world, "include")
    _sub(include, "uri", f"model://{robot}")
    _sub(include, "name", robot)  # the /model/<robot>/... topics depend on this name
    _sub(include, "pose", f"0 0 {_num(spawn_height(model))} 0 0 0")
    return _document(root)


# ---------------------------------------------------------------- files


def _document(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def outputs(robot: str) -> dict[Path, str]:
    """{path: text} of every file written for `robot` (the test compares these with the committed ones)."""
    return {
        SDF_DIR / "models" / robot / "model.sdf": model_sdf(robot),
        SDF_DIR / "models" / robot / "model.config": model_config(robot),
        SDF_DIR / "worlds" / f"{robot}_flat.sdf": world_sdf(robot),
    }


def main(robots: list[str]) -> None:
    for robot in robots or ROBOTS:
        for path, text in outputs(robot).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(PACKAGE_ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
