"""Batched MuJoCo physics for N robots: joint PD inside the physics steps, stepped by `mujoco.rollout`.

The robot's MJCF declares torque motors (ctrlrange = torque limit, SDK order). Training needs
the PD loop at the physics rate, so `build_pd_model` turns each motor into a position-PD
actuator on the compiled MjModel:

    tau = clamp(kp * (ctrl - q) - kd * qdot, -tau_max, tau_max),   ctrl in the joint range

(gain `kp`, affine bias `(0, -kp, -kd)`, forcerange = the spec's torque limit, ctrlrange =
joint range: only a backstop, since the environment already clips targets to the contract's
narrower soft joint range). With fixed joint targets as controls, `mujoco.rollout` then advances every
robot `substeps` physics steps per policy step in C++ worker threads (no Python per robot).

Touch sensors on the feet (added to the model) give the contact schedule the surrogate uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from mujoco import rollout

from surrogait_core.robot_spec import SDK_LEG_ORDER, RobotSpec

FOOT_TOUCH_SITE_RADIUS_M = 0.03  # slightly larger than the foot sphere so its contact points fall inside


def build_pd_model(spec: RobotSpec, kp: float, kd: float, physics_dt_s: float) -> mujoco.MjModel:
    """The robot in its scene with PD actuators (SDK order) and foot touch sensors."""
    mj_spec = mujoco.MjSpec.from_file(str(spec.scene_path))
    for leg in SDK_LEG_ORDER:
        body = mj_spec.body(f"{leg}_calf")
        foot = mj_spec.site(f"{leg}_foot")
        site = body.add_site(name=f"{leg}_touch", pos=foot.pos, size=[FOOT_TOUCH_SITE_RADIUS_M, 0, 0])
        mj_spec.add_sensor(
            name=f"{leg}_touch", type=mujoco.mjtSensor.mjSENS_TOUCH, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site.name
        )
    model = mj_spec.compile()
    model.opt.timestep = physics_dt_s
    for a in range(model.nu):
        joint = model.actuator_trnid[a, 0]
        model.actuator_gaintype[a] = mujoco.mjtGain.mjGAIN_FIXED
        model.actuator_gainprm[a, :] = 0.0
        model.actuator_gainprm[a, 0] = kp
        model.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
        model.actuator_biasprm[a, :] = 0.0
        model.actuator_biasprm[a, 1] = -kp
        model.actuator_biasprm[a, 2] = -kd
        model.actuator_forcelimited[a] = 1
        model.actuator_forcerange[a] = spec.joint_torque_limit[a] * np.array([-1.0, 1.0])
        model.actuator_ctrllimited[a] = 1
        model.actuator_ctrlrange[a] = model.jnt_range[joint]
    return model


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
    """N copies of one model, advanced together: `step(state, joint_targets) -> (state, touch)`."""

    def __init__(self, model: mujoco.MjModel, substeps: int, num_threads: int = 2):
        self.model = model
        self.substeps = substeps
        self.num_threads = max(1, num_threads)
        self.layout = StateLayout.of(model)
        self.datas = [mujoco.MjData(model) for _ in range(self.num_threads)]
        self._rollout = rollout.Rollout(nthread=self.num_threads) if self.num_threads > 1 else None
        touch_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{leg}_touch") for leg in SDK_LEG_ORDER]
        self.touch_adr = np.array([model.sensor_adr[i] for i in touch_ids])

    def state_from_qpos(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """Full-physics state vectors (N, nstate) for the given joint configurations, at rest time 0."""
        data = self.datas[0]
        out = np.empty((len(qpos), self.layout.size))
        for i in range(len(qpos)):  # resets only, not the hot path
            mujoco.mj_resetData(self.model, data)
            data.qpos[:] = qpos[i]
            data.qvel[:] = qvel[i]
            mujoco.mj_getState(self.model, data, out[i], mujoco.mjtState.mjSTATE_FULLPHYSICS)
        return out

    def step(self, state: np.ndarray, joint_targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Advance every robot `substeps` physics steps holding its joint targets (SDK order).

        Returns the new states (N, nstate) and the mean foot touch force over the substeps
        (N, 4; SDK leg order, newtons).
        """
        n = len(state)
        control = np.repeat(joint_targets[:, None, :], self.substeps, axis=1)
        if self._rollout is not None:
            states, sensors = self._rollout.rollout([self.model] * n, self.datas, state, control, nstep=self.substeps)
        else:
            states, sensors = rollout.rollout([self.model] * n, self.datas[:1], state, control, nstep=self.substeps)
        touch = sensors[:, :, self.touch_adr].mean(axis=1)
        return states[:, -1], touch

    def close(self) -> None:
        if self._rollout is not None:
            self._rollout.close()
            self._rollout = None
