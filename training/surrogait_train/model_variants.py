"""Named edits of a compiled robot model: the same robot under another simulator's assumptions.

A policy that only walks in the contact model it was trained in has learned the simulator. The
robustness matrix (surrogait_train.conditions) evaluates on these variants; `EnvConfig.model_variant`
selects one by name.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco

from surrogait_core.robot_spec import SDK_LEG_ORDER


def other_contact_model(model: mujoco.MjModel) -> None:
    """Elliptic friction cones (with MuJoCo's impratio 10, so contacts slip less softly), feet of lower friction
    (0.5) and the joint damping, armature and friction loss measured on a Go2 and used by public Go2 models,
    set explicitly (0.1 N m s/rad, 0.01 kg m^2, 0.2 N m) so a model without them gets them too."""
    model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    model.opt.impratio = 10.0
    for leg in SDK_LEG_ORDER:
        foot = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"{leg}_foot")
        if foot < 0:
            raise ValueError(f"model variant 'other_contact_model': the robot model has no geom named {leg}_foot")
        model.geom_friction[foot, 0] = 0.5
    legs = model.jnt_type != mujoco.mjtJoint.mjJNT_FREE
    leg_dofs = model.jnt_dofadr[legs]
    model.dof_damping[leg_dofs] = 0.1
    model.dof_armature[leg_dofs] = 0.01
    model.dof_frictionloss[leg_dofs] = 0.2


MODEL_VARIANTS: dict[str, Callable[[mujoco.MjModel], None]] = {"other_contact_model": other_contact_model}


def apply_model_variant(name: str, model: mujoco.MjModel) -> None:
    """Edit `model` in place as the variant `name` says ("" leaves it as it is)."""
    if not name:
        return
    if name not in MODEL_VARIANTS:
        raise ValueError(f"unknown model variant {name!r}; choose one of: {', '.join(MODEL_VARIANTS)} (or '')")
    MODEL_VARIANTS[name](model)
