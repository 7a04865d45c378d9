"""The spawn-pose system (surrogait_description.gz_spawn_pose) against a stand-in for gz sim's Python API.

gz sim cannot be installed here, so its `Model` and `Joint` classes are played by a small stand-in with the
calls the system makes (gz.sim8: Model.joint_by_name / name, Joint.reset_position / reset_velocity, entities
as integers, 0 for none). What this checks is the system's own logic: each joint reset once, before the
first step, to the positions the plugin element names; again after a world reset; loud errors otherwise.
"""

from __future__ import annotations

import types

import pytest

from surrogait_description.gz_spawn_pose import SpawnPose, SpawnPoseError, parse_joint_positions

JOINTS = {"FR_hip_joint": 11, "FR_thigh_joint": 12, "FR_calf_joint": 13}


def stand_in_sim(calls: list):
    class Model:
        def __init__(self, entity):
            self.entity = entity

        def joint_by_name(self, ecm, name):
            return JOINTS.get(name, 0)

        def name(self, ecm):
            return "go2"

    class Joint:
        def __init__(self, entity):
            self.entity = entity

        def reset_position(self, ecm, positions):
            calls.append(("position", self.entity, list(positions)))

        def reset_velocity(self, ecm, velocities):
            calls.append(("velocity", self.entity, list(velocities)))

    return types.SimpleNamespace(Model=Model, Joint=Joint)


class Sdf:
    def __init__(self, text: str):
        self.text = text

    def get_string(self, key):
        assert key == "initial_joint_positions"
        return self.text


def test_each_joint_is_reset_once_before_the_first_step_and_again_after_a_world_reset():
    calls: list = []
    system = SpawnPose(stand_in_sim(calls))
    system.configure(1, Sdf("FR_hip_joint 0 FR_thigh_joint 1.36 FR_calf_joint -2.65"), "ecm", None)
    assert calls == [], "nothing before the first update"
    system.pre_update(None, "ecm")
    assert calls == [("position", 11, [0.0]), ("velocity", 11, [0.0]), ("position", 12, [1.36]),
                     ("velocity", 12, [0.0]), ("position", 13, [-2.65]), ("velocity", 13, [0.0])]
    system.pre_update(None, "ecm")
    assert len(calls) == 6, "only once: afterwards the joints are the physics' own"
    system.reset(None, "ecm")
    system.pre_update(None, "ecm")
    assert len(calls) == 12 and calls[6:] == calls[:6]


def test_a_joint_the_model_does_not_have_is_refused_by_name():
    system = SpawnPose(stand_in_sim([]))
    with pytest.raises(SpawnPoseError, match="no joint FR_knee_joint"):
        system.configure(1, Sdf("FR_hip_joint 0 FR_knee_joint 1.0"), "ecm", None)


@pytest.mark.parametrize("text", ["", "FR_hip_joint", "FR_hip_joint zero", "FR_hip_joint 0 FR_calf_joint"])
def test_malformed_positions_are_refused(text):
    with pytest.raises(SpawnPoseError):
        parse_joint_positions(text)


def test_positions_parse_in_order():
    assert parse_joint_positions(" a 1\n b -2.5 ") == {"a": 1.0, "b": -2.5}
