"""The Gazebo SDF models say what the MJCF says: checked through MuJoCo, with the SDF read as plain XML.

No sdformat library installs here (docs ../shared/ENVIRONMENT.md), so the test resolves the SDF
pose graph itself (link poses relative_to their parent link, joint frames in the child link,
axes in the joint frame) and runs its own forward kinematics over it.
"""

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest

from surrogait_core.robot_spec import ROBOTS, SDK_LEG_ORDER, load_robot_spec

REPO = Path(__file__).resolve().parents[2]
DESCRIPTION = REPO / "ros2_ws/src/surrogait_description"
GENERATOR = DESCRIPTION / "tools/generate_sdf.py"
MJCF_DIR = DESCRIPTION / "surrogait_description/mjcf"
LEG_JOINTS = ("hip", "thigh", "calf")


def _generator():
    spec = importlib.util.spec_from_file_location("generate_sdf", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- reading the SDF


def _rotation(values: list[float], quat_xyzw: bool) -> np.ndarray:
    if quat_xyzw:
        x, y, z, w = np.array(values) / np.linalg.norm(values)
        return np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ])
    roll, pitch, yaw = values  # SDF: fixed axes x, then y, then z
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _pose(element: ET.Element | None) -> np.ndarray:
    """4x4 transform of a <pose> element (identity when absent)."""
    transform = np.eye(4)
    if element is None:
        return transform
    values = [float(v) for v in element.text.split()]
    quat = element.get("rotation_format", "euler_rpy") == "quat_xyzw"
    assert len(values) == (7 if quat else 6), f"pose {element.text!r}"
    transform[:3, :3] = _rotation(values[3:], quat)
    transform[:3, 3] = values[:3]
    return transform


def _floats(element: ET.Element, path: str) -> np.ndarray:
    return np.array([float(v) for v in element.find(path).text.split()])


def _inertial(link: ET.Element) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, COM, inertia tensor about the COM) in the link frame."""
    inertial = link.find("inertial")
    assert inertial is not None, f"link {link.get('name')} has no <inertial> (SDF would give it 1 kg)"
    pose = _pose(inertial.find("pose"))
    i = {k: float(inertial.find(f"inertia/{k}").text) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    tensor = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
    rot = pose[:3, :3]
    return float(inertial.find("mass").text), pose[:3, 3], rot @ tensor @ rot.T


class SdfModel:
    """The links, joints and pose graph of one <model>, with forward kinematics over it."""

    def __init__(self, path: Path):
        self.root = ET.parse(path).getroot()
        assert self.root.get("version") == "1.9"
        self.model = self.root.find("model")
        self.links = {link.get("name"): link for link in self.model.findall("link")}
        self.joints = {joint.get("name"): joint for joint in self.model.findall("joint")}
        self.parent_joint = {joint.find("child").text: joint for joint in self.joints.values()}

    def link_in_model(self, name: str) -> np.ndarray:
        """A link's pose in the model frame with every joint at 0."""
        pose = self.links[name].find("pose")
        relative_to = pose.get("relative_to") if pose is not None else None
        base = self.link_in_model(relative_to) if relative_to else np.eye(4)
        return base @ _pose(pose)

    def joint_axis_in_child(self, joint: ET.Element) -> np.ndarray:
        xyz = joint.find("axis/xyz")
        assert xyz.get("expressed_in") is None, "the test reads axes in the joint frame only"
        return _pose(joint.find("pose"))[:3, :3] @ _floats(joint, "axis/xyz")

    def forward(self, positions: dict[str, float]) -> dict[str, np.ndarray]:
        """Every link's pose in the model frame at joint `positions` (missing joints at 0)."""
        poses: dict[str, np.ndarray] = {}

        def pose_of(name: str) -> np.ndarray:
            if name in poses:
                return poses[name]
            joint = self.parent_joint.get(name)
            if joint is None:
                poses[name] = self.link_in_model(name)
                return poses[name]
            parent = joint.find("parent").text
            parent_to_child = np.linalg.inv(self.link_in_model(parent)) @ self.link_in_model(name)
            child_to_joint = _pose(joint.find("pose"))
            motion = np.eye(4)
            if joint.get("type") == "revolute":
                axis = _floats(joint, "axis/xyz")
                axis = axis / np.linalg.norm(axis)
                angle = positions.get(joint.get("name"), 0.0)
                k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
                motion[:3, :3] = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
            else:
                assert joint.get("type") == "fixed", joint.get("type")
            poses[name] = (pose_of(parent) @ parent_to_child @ child_to_joint @ motion
                           @ np.linalg.inv(child_to_joint))
            return poses[name]

        for link in self.links:
            pose_of(link)
        return poses


def _mjcf(robot: str) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(MJCF_DIR / f"{robot}.xml"))


def _sdf(robot: str) -> SdfModel:
    return SdfModel(DESCRIPTION / "sdf/models" / robot / "model.sdf")


def _mujoco_inertial(model: mujoco.MjModel, body: int) -> tuple[float, np.ndarray, np.ndarray]:
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body_iquat[body])
    rot = rot.reshape(3, 3)
    return float(model.body_mass[body]), model.body_ipos[body], rot @ np.diag(model.body_inertia[body]) @ rot.T


def _composite(parts: list[tuple[float, np.ndarray, np.ndarray]]) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM and inertia about the COM of rigidly joined parts, all given in one frame."""
    mass = sum(m for m, _, _ in parts)
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = sum(i + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, i in parts)
    return mass, com, inertia


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("robot", ROBOTS)
def test_committed_files_are_what_the_generator_writes(robot):
    for path, text in _generator().outputs(robot).items():
        assert path.exists(), f"{path} is missing: run tools/generate_sdf.py"
        assert path.read_text() == text, f"{path.relative_to(REPO)} is stale: run tools/generate_sdf.py"


@pytest.mark.parametrize("robot", ROBOTS)
def test_links_are_the_mjcf_bodies_plus_one_foot_per_leg(robot):
    model, sdf = _mjcf(robot), _sdf(robot)
    bodies = [model.body(b).name for b in range(1, model.nbody)]
    feet = [f"{leg}_foot" for leg in SDK_LEG_ORDER]
    assert sorted(sdf.links) == sorted(bodies + feet)
    assert sdf.model.get("name") == robot and sdf.model.get("canonical_link") == "base"
    root_links = [name for name in sdf.links if name not in sdf.parent_joint]
    assert root_links == ["base"], "one floating base, every other link hangs from a joint"


@pytest.mark.parametrize("robot", ROBOTS)
def test_masses_and_inertias_match_the_mjcf(robot):
    """Each MJCF body is its link together with what is welded to it (the calf and its foot).

    Mass, COM and the inertia tensor about the COM in the link frame, to 1e-6 relative (1e-10 kg m^2
    absolute for the near-zero products of inertia); every link on its own is physical.
    """
    model, sdf = _mjcf(robot), _sdf(robot)
    welded = {}
    for joint in sdf.joints.values():
        if joint.get("type") == "fixed":
            welded.setdefault(joint.find("parent").text, []).append(joint.find("child").text)
    for b in range(1, model.nbody):
        name = model.body(b).name
        frame = sdf.link_in_model(name)
        parts = []
        for link in [name, *welded.get(name, [])]:
            mass, com, inertia = _inertial(sdf.links[link])
            to_body = np.linalg.inv(frame) @ sdf.link_in_model(link)
            rot = to_body[:3, :3]
            parts.append((mass, rot @ com + to_body[:3, 3], rot @ inertia @ rot.T))
        mass, com, inertia = _composite(parts)
        mj_mass, mj_com, mj_inertia = _mujoco_inertial(model, b)
        assert mass == pytest.approx(mj_mass, rel=1e-6), name
        np.testing.assert_allclose(com, mj_com, atol=1e-6, err_msg=f"{name} COM")
        np.testing.assert_allclose(inertia, mj_inertia, rtol=1e-6, atol=1e-10, err_msg=f"{name} inertia")
    for name, link in sdf.links.items():
        mass, _, inertia = _inertial(link)
        moments = np.linalg.eigvalsh(inertia)
        assert mass > 0 and moments.min() > 0 and 2 * moments.max() <= moments.sum(), f"{name}: not physical"
    total = sum(_inertial(link)[0] for link in sdf.links.values())
    assert total == pytest.approx(float(model.body_mass.sum()), rel=1e-9)


@pytest.mark.parametrize("robot", ROBOTS)
def test_joints_match_the_mjcf(robot):
    """Names, parent/child, axis (in the child frame and, through the pose graph, in the model frame),
    position / effort / velocity limits, damping and friction."""
    model, sdf = _mjcf(robot), _sdf(robot)
    velocity = model.numeric("joint_velocity_limits").data
    hinges = [j for j in range(model.njnt) if model.jnt_type[j] == int(mujoco.mjtJoint.mjJNT_HINGE)]
    revolute = {name: joint for name, joint in sdf.joints.items() if joint.get("type") == "revolute"}
    assert sorted(revolute) == sorted(model.joint(j).name for j in hinges)
    data = mujoco.MjData(model)
    data.qpos[3] = 1.0
    mujoco.mj_kinematics(model, data)
    zero = sdf.forward({})
    for j in hinges:
        name, body = model.joint(j).name, model.jnt_bodyid[j]
        joint = revolute[name]
        assert joint.find("child").text == model.body(body).name
        assert joint.find("parent").text == model.body(model.body_parentid[body]).name
        axis = sdf.joint_axis_in_child(joint)
        np.testing.assert_allclose(axis, model.jnt_axis[j], atol=1e-9, err_msg=f"{name} axis")
        np.testing.assert_allclose(zero[model.body(body).name][:3, :3] @ axis, data.xaxis[j], atol=1e-9)
        limit = joint.find("axis/limit")
        assert float(limit.find("lower").text) == pytest.approx(model.jnt_range[j, 0], abs=1e-9), name
        assert float(limit.find("upper").text) == pytest.approx(model.jnt_range[j, 1], abs=1e-9), name
        actuator = next(a for a in range(model.nu) if model.actuator_trnid[a, 0] == j)
        assert float(limit.find("effort").text) == pytest.approx(model.actuator_ctrlrange[actuator, 1]), name
        kind = LEG_JOINTS.index(name.split("_")[1])
        assert float(limit.find("velocity").text) == pytest.approx(velocity[kind]), name
        dof = model.jnt_dofadr[j]
        assert float(joint.find("axis/dynamics/damping").text) == pytest.approx(model.dof_damping[dof]), name
        assert float(joint.find("axis/dynamics/friction").text) == pytest.approx(model.dof_frictionloss[dof]), name


def _configurations(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    lower, upper = model.jnt_range[1:, 0], model.jnt_range[1:, 1]
    rng = np.random.default_rng(16)
    configs = {"stand": model.key("stand").qpos[7:], "zero": np.zeros(model.njnt - 1)}
    configs.update({f"random{i}": rng.uniform(lower, upper) for i in range(3)})
    return configs


@pytest.mark.parametrize("robot", ROBOTS)
def test_forward_kinematics_matches_mujoco(robot):
    """Feet (SDF foot link origin vs MuJoCo foot site and foot geom) and every link frame, in the base
    frame, at the standing keyframe, at zero and at three random in-range configurations, to 1e-6."""
    model, sdf = _mjcf(robot), _sdf(robot)
    data = mujoco.MjData(model)
    names = [model.joint(j).name for j in range(1, model.njnt)]
    for label, q in _configurations(model).items():
        data.qpos[:] = 0.0
        data.qpos[3] = 1.0  # base at the origin, upright: MuJoCo's world frame is the base frame
        data.qpos[7:] = q
        mujoco.mj_kinematics(model, data)
        poses = sdf.forward(dict(zip(names, q, strict=True)))
        in_base = {name: np.linalg.inv(poses["base"]) @ pose for name, pose in poses.items()}
        for leg in SDK_LEG_ORDER:
            foot = in_base[f"{leg}_foot"][:3, 3]
            np.testing.assert_allclose(foot, data.site_xpos[model.site(f"{leg}_foot").id], atol=1e-6,
                                       err_msg=f"{robot} {label}: {leg} foot vs site")
            np.testing.assert_allclose(foot, data.geom_xpos[model.geom(f"{leg}_foot").id], atol=1e-6,
                                       err_msg=f"{robot} {label}: {leg} foot vs geom")
        for b in range(1, model.nbody):
            name = model.body(b).name
            np.testing.assert_allclose(in_base[name][:3, 3], data.xpos[b], atol=1e-6, err_msg=f"{label} {name}")
            np.testing.assert_allclose(in_base[name][:3, :3], data.xmat[b].reshape(3, 3), atol=1e-6,
                                       err_msg=f"{label} {name} orientation")


def _collision_shapes(link: ET.Element) -> list[tuple]:
    shapes = []
    for collision in link.findall("collision"):
        shape = collision.find("geometry")[0]
        dims = tuple(round(float(v), 9) for child in shape for v in child.text.split())
        mu = float(collision.find("surface/friction/ode/mu").text)
        pos = tuple(np.round(_pose(collision.find("pose"))[:3, 3], 9))
        shapes.append((shape.tag, dims, pos, mu))
    return sorted(shapes)


@pytest.mark.parametrize("robot", ROBOTS)
def test_collision_geometry_matches_the_mjcf(robot):
    """Every MJCF geom that touches the ground is a collision of the same shape, size, place and
    sliding friction (the foot sphere on the foot link); robot geoms never collide with each other."""
    model, sdf = _mjcf(robot), _sdf(robot)
    kinds = {mujoco.mjtGeom.mjGEOM_BOX: "box", mujoco.mjtGeom.mjGEOM_SPHERE: "sphere",
             mujoco.mjtGeom.mjGEOM_CAPSULE: "capsule", mujoco.mjtGeom.mjGEOM_CYLINDER: "cylinder"}
    expected: dict[str, list] = {name: [] for name in sdf.links}
    for g in range(model.ngeom):
        if not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        kind = kinds[mujoco.mjtGeom(int(model.geom_type[g]))]
        size = model.geom_size[g]
        dims = {"box": 2 * size, "sphere": size[:1], "capsule": (size[0], 2 * size[1]),
                "cylinder": (size[0], 2 * size[1])}[kind]
        link, pos = model.body(model.geom_bodyid[g]).name, model.geom_pos[g]
        if model.geom(g).name.endswith("_foot"):
            link, pos = model.geom(g).name, pos - model.site(model.geom(g).name).pos
        expected[link].append((kind, tuple(round(float(v), 9) for v in dims), tuple(np.round(pos, 9)),
                               float(model.geom_friction[g, 0])))
    for name, link in sdf.links.items():
        assert _collision_shapes(link) == sorted(expected[name]), name
    assert sdf.model.find("self_collide").text == "false"


@pytest.mark.parametrize("robot", ROBOTS)
def test_sensors_and_plugins_publish_on_the_agreed_topics(robot):
    """The IMU at the MJCF IMU site, a force_torque sensor on each foot's fixed joint, the joint state
    publisher, one ApplyJointForce per motor and the odometry publisher, on the topics the bridge uses."""
    model, sdf = _mjcf(robot), _sdf(robot)
    topics = _generator().gz_topics(robot)
    prefix = f"/model/{robot}"
    motors = [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]
    assert topics == {
        "joint_states": f"{prefix}/joint_states",
        "imu": f"{prefix}/imu",
        "odometry": f"{prefix}/odometry",
        "foot_force": {leg: f"{prefix}/foot_force/{leg}" for leg in ("FR", "FL", "RR", "RL")},
        "cmd_force": {joint: f"{prefix}/joint/{joint}/cmd_force" for joint in motors},
    }

    imus = sdf.model.findall(".//sensor[@type='imu']")
    assert len(imus) == 1 and imus[0] in list(sdf.links["base"])
    imu = imus[0]
    assert imu.find("topic").text == topics["imu"] and float(imu.find("update_rate").text) == 500
    assert imu.find("always_on").text == "true"
    assert imu.find("imu/orientation_reference_frame/localization").text == "ENU"
    np.testing.assert_allclose(_pose(imu.find("pose"))[:3, 3], model.site("imu").pos, atol=1e-9)

    assert len(sdf.model.findall(".//sensor[@type='force_torque']")) == 4
    for leg in SDK_LEG_ORDER:
        joint = sdf.joints[f"{leg}_foot_joint"]
        assert joint.get("type") == "fixed"
        assert (joint.find("parent").text, joint.find("child").text) == (f"{leg}_calf", f"{leg}_foot")
        sensor = joint.find("sensor[@type='force_torque']")
        assert sensor.find("topic").text == topics["foot_force"][leg]
        assert float(sensor.find("update_rate").text) == 500 and sensor.find("always_on").text == "true"
        assert sensor.find("force_torque/frame").text == "child"
        assert sensor.find("force_torque/measure_direction").text == "child_to_parent"

    plugins = sdf.model.findall("plugin")
    by_name: dict[str, list] = {}
    for plugin in plugins:
        by_name.setdefault(plugin.get("name"), []).append(plugin)
    (publisher,) = by_name["gz::sim::systems::JointStatePublisher"]
    assert publisher.get("filename") == "gz-sim-joint-state-publisher-system"
    assert publisher.find("topic").text == topics["joint_states"]
    assert [e.text for e in publisher.findall("joint_name")] == motors
    forces = by_name["gz::sim::systems::ApplyJointForce"]
    assert sorted(p.find("joint_name").text for p in forces) == sorted(motors), "one ApplyJointForce per motor"
    assert {p.get("filename") for p in forces} == {"gz-sim-apply-joint-force-system"}
    (odometry,) = by_name["gz::sim::systems::OdometryPublisher"]
    assert odometry.get("filename") == "gz-sim-odometry-publisher-system"
    assert odometry.find("odom_topic").text == topics["odometry"]
    assert odometry.find("dimensions").text == "3"
    assert float(odometry.find("odom_publish_frequency").text) == 100


@pytest.mark.parametrize("robot", ROBOTS)
def test_world_has_the_systems_and_includes_the_robot_clear_of_the_ground(robot):
    world = ET.parse(DESCRIPTION / "sdf/worlds" / f"{robot}_flat.sdf").getroot()
    assert world.get("version") == "1.9"
    world = world.find("world")
    assert float(world.find("physics/max_step_size").text) in (0.001, 0.002)
    systems = {p.get("name"): p.get("filename") for p in world.findall("plugin")}
    for name, filename in (("Physics", "physics"), ("UserCommands", "user-commands"),
                           ("SceneBroadcaster", "scene-broadcaster"), ("Imu", "imu"), ("ForceTorque", "forcetorque")):
        assert systems.get(f"gz::sim::systems::{name}") == f"gz-sim-{filename}-system", name
    assert world.find("model[@name='ground_plane']/link/collision/geometry/plane") is not None
    include = world.find("include")
    assert include.find("uri").text == f"model://{robot}"
    assert include.find("name").text == robot, "the /model/<robot>/... topics need this model name"
    # The robot starts lying folded (the spawn-pose system sets its joints before the first step,
    # test_sdf_libsdformat): at the spawn height its feet, the lowest points of that pose, are just clear
    # of the ground (by this file's own forward kinematics over the SDF).
    model, sdf = _mjcf(robot), _sdf(robot)
    spawn = _pose(include.find("pose"))
    lying = dict(zip([f"{name}_joint" for name in load_robot_spec(robot).joint_names],
                     load_robot_spec(robot).lying_joint_pos, strict=True))
    poses = sdf.forward(lying)
    clearances = []
    for leg in SDK_LEG_ORDER:
        radius = float(sdf.links[f"{leg}_foot"].find("collision/geometry/sphere/radius").text)
        clearances.append((spawn @ poses[f"{leg}_foot"])[2, 3] - radius)
    assert 0.0 < min(clearances) < 0.02, clearances
    config = ET.parse(DESCRIPTION / "sdf/models" / robot / "model.config").getroot()
    assert config.find("sdf").text == "model.sdf" and config.find("sdf").get("version") == "1.9"
    assert model.nu == len(sdf.model.findall("plugin[@name='gz::sim::systems::ApplyJointForce']"))
