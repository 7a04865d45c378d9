"""A gz sim system, in Python: put the model's joints at their spawn positions before the first physics step.

The generated Go2 / Go1 models (tools/generate_sdf.py) load it through Gazebo Harmonic's PythonSystemLoader:

    <plugin filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader">
      <module_name>surrogait_description.gz_spawn_pose</module_name>
      <initial_joint_positions>FR_hip_joint 0 FR_thigh_joint 1.36 FR_calf_joint -2.65 ...</initial_joint_positions>
    </plugin>

Why a system: SDF has no initial joint position gz sim reads (//axis/initial_position was deprecated in SDF 1.8
and libsdformat 12+ does not parse it), and gz sim starts every joint at 0, where a quadruped's calf is outside
its own range. gz sim's `Joint.reset_position` sets a joint's position through the physics system, which applies
it in the same iteration, before it steps: the robot's first simulated instant is the lying pose. A world reset
applies it again.

The module must be importable by gz sim's embedded Python: a sourced colcon workspace's PYTHONPATH has it
(ros2 launch), the rehearsal harness puts this package's folder on PYTHONPATH (harness.gazebo).
"""

from __future__ import annotations

from types import ModuleType

PLUGIN_ELEMENT = "initial_joint_positions"


class SpawnPoseError(ValueError):
    """The plugin's joint positions cannot be applied; the message says which and why."""


def parse_joint_positions(text: str) -> dict[str, float]:
    """'<joint> <rad> <joint> <rad> ...' -> {joint: rad}."""
    words = text.split()
    if not words or len(words) % 2:
        raise SpawnPoseError(f"<{PLUGIN_ELEMENT}> {text!r}: expected pairs of a joint name and a position in rad")
    positions: dict[str, float] = {}
    for name, value in zip(words[::2], words[1::2], strict=True):
        try:
            positions[name] = float(value)
        except ValueError:
            raise SpawnPoseError(f"<{PLUGIN_ELEMENT}>: {name} {value!r} is not a number (rad)") from None
    return positions


class SpawnPose:
    """The system: `configure` finds the joints, `pre_update` resets them once (and again after a world reset).

    `sim` is gz sim's Python module (gz.sim8 on Harmonic): its Model and Joint classes do the work.
    """

    def __init__(self, sim: ModuleType):
        self._sim = sim
        self._joints: list[tuple[object, float]] = []
        self._pending = False

    def configure(self, entity, sdf, ecm, event_mgr) -> None:
        model = self._sim.Model(entity)
        positions = parse_joint_positions(sdf.get_string(PLUGIN_ELEMENT))
        missing = []
        for name, position in positions.items():
            joint = model.joint_by_name(ecm, name)
            if not joint:  # gz's kNullEntity is 0
                missing.append(name)
            self._joints.append((self._sim.Joint(joint), position))
        if missing:
            raise SpawnPoseError(f"model {model.name(ecm)!r} has no joint {', '.join(missing)} "
                                 f"(<{PLUGIN_ELEMENT}> names joints of the model it is attached to)")
        self._pending = True

    def pre_update(self, info, ecm) -> None:
        if not self._pending:
            return
        for joint, position in self._joints:
            joint.reset_position(ecm, [position])
            joint.reset_velocity(ecm, [0.0])
        self._pending = False

    def reset(self, info, ecm) -> None:
        self._pending = True


def get_system() -> SpawnPose:
    """PythonSystemLoader's entry point."""
    try:
        from gz import sim8 as sim  # Gazebo Harmonic
    except ImportError:
        from gz import sim  # later releases drop the version from the module name
    return SpawnPose(sim)
