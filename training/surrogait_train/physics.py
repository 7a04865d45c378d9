"""Batched MuJoCo physics for N robots: joint PD inside the physics steps, stepped by `mujoco.rollout`.

The robot's MJCF declares torque motors (ctrlrange = torque limit, SDK order). Training needs
the PD loop at the physics rate, so `build_pd_model` turns each motor into a position-PD
actuator on the compiled MjModel:

    tau = clamp(kp * (ctrl - q) - kd * qdot, -tau_max, tau_max),   ctrl in the joint range

(per joint: gain `kp`, affine bias `(0, -kp, -kd)`, forcerange = the spec's torque limit, ctrlrange =
joint range: only a backstop, since the environment already clips targets to the contract's
narrower soft joint range). With fixed joint targets as controls, `mujoco.rollout` then advances every
robot `substeps` physics steps per policy step in C++ worker threads (no Python per robot).

Touch sensors on the feet (added to the model) give the contact schedule the surrogate uses.

Domain randomisation (randomization.py) gives each robot its own copy of the model, edited by
`vary_model` (ground friction, base mass and centre of mass, motor strength), and delays new joint
targets by whole physics steps: during the first `delay` substeps of a policy period a robot's PD
still tracks its previous targets, as a motor driver does while the new command is on its way.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import mujoco
import numpy as np
from mujoco import rollout

from surrogait_core.robot_spec import SDK_LEG_ORDER, RobotSpec
from surrogait_core.terrain import Terrain, compile_with_terrain
from surrogait_train.config import EnvConfig

FOOT_TOUCH_SITE_RADIUS_M = 0.03  # slightly larger than the foot sphere so its contact points fall inside


def build_pd_model(
    spec: RobotSpec, kp: float | np.ndarray, kd: float | np.ndarray, physics_dt_s: float, terrain: Terrain | None = None
) -> mujoco.MjModel:
    """The robot in its scene with PD actuators (SDK order; gains per joint or one for all) and foot touch sensors;
    on `terrain`'s course if given (surrogait_core.terrain)."""
    mj_spec = mujoco.MjSpec.from_file(str(spec.scene_path))
    for leg in SDK_LEG_ORDER:
        body = mj_spec.body(f"{leg}_calf")
        foot = mj_spec.site(f"{leg}_foot")
        site = body.add_site(name=f"{leg}_touch", pos=foot.pos, size=[FOOT_TOUCH_SITE_RADIUS_M, 0, 0])
        mj_spec.add_sensor(
            name=f"{leg}_touch", type=mujoco.mjtSensor.mjSENS_TOUCH, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name
        )
    model = mj_spec.compile() if terrain is None else compile_with_terrain(mj_spec, terrain)
    model.opt.timestep = physics_dt_s
    for a in range(model.nu):
        joint = model.actuator_trnid[a, 0]
        model.actuator_gaintype[a] = mujoco.mjtGain.mjGAIN_FIXED
        model.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
        model.actuator_forcelimited[a] = 1
        model.actuator_forcerange[a] = spec.joint_torque_limit[a] * np.array([-1.0, 1.0])
        model.actuator_ctrllimited[a] = 1
        model.actuator_ctrlrange[a] = model.jnt_range[joint]
    set_pd_gains(model, kp, kd)
    return model


def set_pd_gains(model: mujoco.MjModel, kp: float | np.ndarray, kd: float | np.ndarray) -> None:
    """Write joint PD gains (N m/rad, N m s/rad; per actuator = SDK order, or one for all) into a PD model."""
    kp = np.broadcast_to(np.asarray(kp, dtype=np.float64), (model.nu,))
    kd = np.broadcast_to(np.asarray(kd, dtype=np.float64), (model.nu,))
    model.actuator_gainprm[:, :] = 0.0
    model.actuator_gainprm[:, 0] = kp
    model.actuator_biasprm[:, :] = 0.0
    model.actuator_biasprm[:, 1] = -kp
    model.actuator_biasprm[:, 2] = -kd


def floating_base_body(model: mujoco.MjModel) -> int:
    """The body of the model's free joint: the robot's base."""
    free = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
    if len(free) != 1:
        raise ValueError(f"the robot model needs exactly one free joint (its floating base), found {len(free)}")
    return int(model.jnt_bodyid[free[0]])


def vary_model(
    model: mujoco.MjModel,
    nominal: mujoco.MjModel,
    friction: float,
    added_base_mass_kg: float,
    base_com_offset_m: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    joint_damping: float = float("nan"),
    joint_friction_loss: float = float("nan"),
    gravity_dir_w: np.ndarray | None = None,
) -> None:
    """Make `model` (a copy of `nominal`) one robot's variation of it.

    Every geom gets sliding friction `friction`, so a foot-ground contact has that coefficient
    whichever geom MuJoCo's priority rule picks. The base gains `added_base_mass_kg` with its
    rotational inertia scaled alike (same shape, heavier) and its centre of mass moved by
    `base_com_offset_m` (body frame); the PD gains are the robot's effective motor strength. Every leg joint
    gets `joint_damping` (N m s/rad) and `joint_friction_loss` (N m); NaN keeps the nominal model's. Gravity
    points along `gravity_dir_w` (a unit vector, world frame; None: the nominal model's), a slope on level ground.
    """
    base = floating_base_body(nominal)
    model.geom_friction[:, 0] = friction
    mass = nominal.body_mass[base]
    new_mass = max(mass + added_base_mass_kg, 0.1 * mass)
    model.body_mass[base] = new_mass
    model.body_inertia[base] = nominal.body_inertia[base] * (new_mass / mass)
    model.body_ipos[base] = nominal.body_ipos[base] + base_com_offset_m
    set_pd_gains(model, kp, kd)
    legs = leg_dofs(nominal)
    model.dof_damping[legs] = nominal.dof_damping[legs] if np.isnan(joint_damping) else joint_damping
    model.dof_frictionloss[legs] = (nominal.dof_frictionloss[legs] if np.isnan(joint_friction_loss)
                                    else joint_friction_loss)
    g = np.linalg.norm(nominal.opt.gravity)
    model.opt.gravity = nominal.opt.gravity if gravity_dir_w is None else g * np.asarray(gravity_dir_w)


def leg_dofs(model: mujoco.MjModel) -> np.ndarray:
    """The degrees of freedom of every joint but the floating base's."""
    return model.jnt_dofadr[model.jnt_type != mujoco.mjtJoint.mjJNT_FREE]


def full_states_from_qpos(model: mujoco.MjModel, data: mujoco.MjData, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
    """Full-physics state vectors (N, nstate) for joint configurations (N, nq) and velocities (N, nv), time 0."""
    out = np.empty((len(qpos), mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)))
    for i in range(len(qpos)):  # resets only, not the hot path
        mujoco.mj_resetData(model, data)
        data.qpos[:] = qpos[i]
        data.qvel[:] = qvel[i]
        mujoco.mj_getState(model, data, out[i], mujoco.mjtState.mjSTATE_FULLPHYSICS)
    return out


@dataclass(frozen=True)
class StateLayout:
    """Where qpos/qvel live in MuJoCo's full-physics state vector."""

    size: int
    qpos: slice
    qvel: slice

    @classmethod
    def of(cls, model: mujoco.MjModel) -> StateLayout:
        full = mujoco.mjtState.mjSTATE_FULLPHYSICS
        t = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_TIME)
        return cls(
            size=mujoco.mj_stateSize(model, full),
            qpos=slice(t, t + model.nq),
            qvel=slice(t + model.nq, t + model.nq + model.nv),
        )


class BatchedPhysics:
    """N robots advanced together: `step(state, joint_targets) -> (state, touch)`.

    All robots share `model` until `own_models(n)` gives each its own copy (`models[i]`, for
    domain randomisation); `step` then advances robot i with `models[i]`.
    """

    def __init__(self, model: mujoco.MjModel, substeps: int, num_threads: int = 2):
        self.model = model
        self.models: list[mujoco.MjModel] | None = None
        self.substeps = substeps
        self.num_threads = max(1, num_threads)
        self.layout = StateLayout.of(model)
        self.datas = [mujoco.MjData(model) for _ in range(self.num_threads)]
        self._rollout = rollout.Rollout(nthread=self.num_threads) if self.num_threads > 1 else None
        touch_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{leg}_touch") for leg in SDK_LEG_ORDER]
        self.touch_adr = np.array([model.sensor_adr[i] for i in touch_ids])
        self.substep_states: np.ndarray | None = None
        self.substep_controls: np.ndarray | None = None

    def state_from_qpos(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """Full-physics state vectors (N, nstate) for the given joint configurations, at rest time 0."""
        return full_states_from_qpos(self.model, self.datas[0], qpos, qvel)

    def own_models(self, num_robots: int) -> list[mujoco.MjModel]:
        """Give each robot its own copy of the model (once); returns the copies, robot order."""
        if self.models is None:
            self.models = [copy.copy(self.model) for _ in range(num_robots)]
        return self.models

    def models_changed(self, rows: np.ndarray) -> None:
        """Robots `rows`' model copies were edited: nothing to do, `step` reads the copies themselves."""

    def step(
        self,
        state: np.ndarray,
        joint_targets: np.ndarray,
        previous_targets: np.ndarray | None = None,
        delay_steps: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Advance every robot `substeps` physics steps holding its joint targets (SDK order).

        With `delay_steps` (N,), robot i holds `previous_targets[i]` for its first `delay_steps[i]`
        substeps (0 to `substeps`). Returns the new states (N, nstate) and the mean foot touch
        force over the substeps (N, 4; SDK leg order, newtons).
        """
        n = len(state)
        control = np.repeat(joint_targets[:, None, :], self.substeps, axis=1)
        if delay_steps is not None and np.any(delay_steps > 0):
            late = np.arange(self.substeps)[None, :] < np.asarray(delay_steps)[:, None]  # (N, substeps)
            control = np.where(late[..., None], previous_targets[:, None, :], control)
        models = self.models if self.models is not None else [self.model] * n
        if self._rollout is not None:
            states, sensors = self._rollout.rollout(models, self.datas, state, control, nstep=self.substeps)
        else:
            states, sensors = rollout.rollout(models, self.datas[:1], state, control, nstep=self.substeps)
        touch = sensors[:, :, self.touch_adr].mean(axis=1)
        self.substep_states = states  # (N, substeps, nstate): the motion between control steps (preflight)
        self.substep_controls = control  # (N, substeps, 12): the targets each physics step held
        return states[:, -1], touch

    def close(self) -> None:
        if self._rollout is not None:
            self._rollout.close()
            self._rollout = None


BACKENDS = ("cpu", "mjx")


def make_physics(model: mujoco.MjModel, cfg: EnvConfig) -> BatchedPhysics:
    """The batched physics `cfg.backend` names: "cpu" (MuJoCo C on `num_threads` threads) or "mjx" (MJX on JAX's
    device, surrogait_train.mjx_physics); both have BatchedPhysics's interface."""
    if cfg.backend == "cpu":
        return BatchedPhysics(model, cfg.substeps, cfg.num_threads)
    if cfg.backend == "mjx":
        try:
            from surrogait_train.mjx_physics import MjxPhysics
        except ImportError as e:
            raise ValueError(f"env.backend=mjx needs MJX and JAX ({e}); install them with "
                             "`pip install mujoco-mjx==3.17.0 jax` (with a GPU: jax[cuda12])") from None
        return MjxPhysics(model, cfg.substeps, cfg.mjx_device, cfg.mjx_float64)
    raise ValueError(f"env.backend={cfg.backend!r}: expected one of {', '.join(BACKENDS)}")
