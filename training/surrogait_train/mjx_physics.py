"""Batched physics on JAX's device (a GPU where there is one) with MJX: `env.backend=mjx`.

The same robots, model and interface as `physics.BatchedPhysics` (the CPU backend, the default):
`step(state, joint_targets, previous_targets, delay_steps) -> (state, touch)` on MuJoCo full-physics
state vectors, so the environment, the surrogate and the learner do not know which backend runs.
MJX is MuJoCo's own algorithm re-written in JAX: with `float64=True` one control step matches the C
library to ~1e-13 (tests/training/test_mjx_backend.py); in float32, the precision a GPU is fast in,
to ~1e-5 rad in positions.

Why MJX and not MuJoCo Warp: the GPU machine a session may be lent has JAX with its CUDA plugins
and no Warp, and Warp's 149 MB wheel is more than one call can carry there (issue 18).

Per-robot models (domain randomisation, a mixed-terrain curriculum): the environment edits its C
model copies (`own_models`) as for the CPU backend and then calls `models_changed(rows)`; the edited
fields of those rows are copied to the device. The fields that may differ per robot are the ones
`physics.vary_model` edits, plus the height field: its distinct courses are kept once each on the
device and every robot holds an index into them (a height field is 64 k floats: one per robot would
not fit 32 k robots).

Where the data lives: the batched `mjx.Data` stays on the device between steps (so the solver's
warm start carries over, as in C). Through `step`, the state vectors come in from the host and go back
to it every control step (N x 38 floats each way), because the host environment (env.py) keeps its
state in NumPy. `resident_step` takes and returns JAX arrays on the device instead: the device-resident
environment (device_env.py) hands its torch tensors over through DLPack, and each robot's model
variation comes as a row of parameters (`VARIATION_PARAMS`) that the step turns into its model fields
on the device (`varied_fields`: the same edit as `physics.vary_model`), so no per-robot model copy
exists anywhere (a C model is ~1 MB: 32 k copies would not fit).

Matrix products run at full float32 precision (`jax.default_matmul_precision("highest")`): on a GPU,
XLA's default lets float32 products use TF32 (10-bit mantissa), which on the lent H200 made a 1 s
float32 rollout drift 8.9e-3 rad from MuJoCo C, against 2e-5 on the CPU
(bench/results/gpu_check_h200_first.log).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

# MJX prints "Failed to import warp" when its optional Warp path is absent
with contextlib.redirect_stdout(io.StringIO()):
    from mujoco import mjx

from surrogait_core.robot_spec import SDK_LEG_ORDER
from surrogait_train.physics import StateLayout, floating_base_body, full_states_from_qpos, leg_dofs

# The model fields `physics.vary_model` edits: they may differ between robots.
PER_ROBOT_FIELDS = ("geom_friction", "body_mass", "body_inertia", "body_ipos", "actuator_gainprm", "actuator_biasprm",
                    "dof_damping", "dof_frictionloss")
# One robot's variation as `resident_step` takes it, a row of (N, 9): `physics.vary_model`'s arguments (NaN joint
# damping or friction loss: the model's own).
VARIATION_PARAMS = ("friction", "added_base_mass_kg", "com_x_m", "com_y_m", "com_z_m", "kp_scale", "kd_scale",
                    "joint_damping", "joint_friction_loss")
MATMUL_PRECISION = "highest"  # see the module docstring: no TF32 in float32 products

# JAX takes 75 % of a GPU's memory at its start unless told otherwise; the device-resident environment's torch
# tensors share the GPU, so JAX allocates as it goes. Read when JAX's GPU backend starts, so set before that.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


class MjxPhysics:
    """N robots advanced together by MJX on one JAX device; see the module docstring."""

    def __init__(self, model: mujoco.MjModel, substeps: int, device: str = "", float64: bool = False):
        if model.na:
            raise ValueError("env.backend=mjx: actuators with activation state are not supported by this backend")
        if float64:
            jax.config.update("jax_enable_x64", True)
        _use_compile_cache()
        self.dtype = jnp.float64 if float64 else jnp.float32
        self.device = _pick_device(device)
        self.model = model
        self.models: list[mujoco.MjModel] | None = None
        self.substeps = substeps
        self.layout = StateLayout.of(model)
        if self.layout.size != 1 + model.nq + model.nv:
            raise ValueError("env.backend=mjx: the model's state holds more than time, qpos and qvel (mocap bodies or "
                             "plugins), which this backend does not carry")
        self._scratch = mujoco.MjData(model)
        with jax.default_device(self.device):
            self._mx = _to_dtype(mjx.put_model(model), self.dtype)
        touch_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{leg}_touch") for leg in SDK_LEG_ORDER]
        self._touch_adr = np.array([model.sensor_adr[i] for i in touch_ids])
        self._data = None  # (N,) mjx.Data on the device, made on the first step
        self._fields: dict[str, jax.Array] | None = None  # PER_ROBOT_FIELDS, (N, ...) each, once own_models
        self._hfield_table: list[np.ndarray] = []  # distinct height fields' data
        self._hfield_index = np.zeros(0, dtype=np.int32)  # (N,) each robot's row of the table
        self._step_shared = jax.jit(jax.vmap(self._control_step, in_axes=(None, 0, 0, 0, 0, 0, 0)))
        self._step_per_robot = jax.jit(jax.vmap(self._robot_control_step, in_axes=(0, None, None, 0, 0, 0, 0, 0, 0, 0)))
        self._base_body = floating_base_body(model)
        self._leg_dofs = leg_dofs(model)
        self._resident_steps: dict[tuple[bool, bool], callable] = {}  # (varied, courses) -> jitted step
        self._resident_data = None  # (N,) mjx.Data of resident_step, kept apart from step's
        self._gains = None  # (kp, kd) per actuator on the device: what a variation's scales multiply
        self._course_table = None  # (C, nhfielddata) height fields of resident_step's courses

    # ----------------------------------------------------------------- the BatchedPhysics interface
    def state_from_qpos(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """Full-physics state vectors (N, nstate) for the given joint configurations, at rest time 0."""
        return full_states_from_qpos(self.model, self._scratch, qpos, qvel)

    def own_models(self, num_robots: int) -> list[mujoco.MjModel]:
        """Give each robot its own copy of the model (once); edit them, then call `models_changed`."""
        if self.models is None:
            self.models = [copy.copy(self.model) for _ in range(num_robots)]
            self._fields = {
                name: jax.device_put(np.repeat(getattr(self.model, name)[None], num_robots, 0).astype(self.dtype),
                                     self.device)
                for name in PER_ROBOT_FIELDS
            }
            self._hfield_table = [self.model.hfield_data.copy()]
            self._hfield_index = np.zeros(num_robots, dtype=np.int32)
        return self.models

    def models_changed(self, rows: np.ndarray) -> None:
        """Copy robots `rows`' edited model copies (indices or a boolean mask) to the device."""
        if self.models is None:
            return
        rows = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            return
        for name in PER_ROBOT_FIELDS:
            values = np.stack([getattr(self.models[i], name) for i in rows]).astype(self.dtype)
            self._fields[name] = self._fields[name].at[rows].set(jax.device_put(values, self.device))
        if self.model.nhfield:
            for i in rows:
                self._hfield_index[i] = self._hfield_row(self.models[i].hfield_data)

    def step(
        self,
        state: np.ndarray,
        joint_targets: np.ndarray,
        previous_targets: np.ndarray | None = None,
        delay_steps: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Advance every robot `substeps` physics steps holding its joint targets; as BatchedPhysics.step."""
        n = len(state)
        if previous_targets is None:
            previous_targets = joint_targets
        delay = np.zeros(n, dtype=np.int32) if delay_steps is None else np.asarray(delay_steps, dtype=np.int32)
        put = lambda x: jax.device_put(np.asarray(x, dtype=self.dtype), self.device)  # noqa: E731
        if self._data is None or self._data.qpos.shape[0] != n:
            with jax.default_device(self.device):
                self._data = _to_dtype(jax.vmap(lambda _: mjx.make_data(self._mx))(jnp.arange(n)), self.dtype)
        args = (put(state[:, self.layout.qpos]), put(state[:, self.layout.qvel]), put(joint_targets),
                put(previous_targets), jax.device_put(delay, self.device))
        with jax.default_matmul_precision(MATMUL_PRECISION):
            if self.models is None:
                self._data, touch = self._step_shared(self._mx, self._data, *args)
            else:
                table = jax.device_put(np.stack(self._hfield_table).astype(self.dtype), self.device)
                index = jax.device_put(self._hfield_index, self.device)
                self._data, touch = self._step_per_robot(self._fields, self._mx, table, index, self._data, *args)
        out = np.empty_like(state)
        out[:, 0] = state[:, 0] + self.substeps * self.model.opt.timestep
        out[:, self.layout.qpos] = np.asarray(self._data.qpos)
        out[:, self.layout.qvel] = np.asarray(self._data.qvel)
        return out, np.array(touch, dtype=np.float64)

    def close(self) -> None:
        self._data = None
        self._resident_data = None

    # ----------------------------------------------------------------- device-resident stepping
    def set_nominal_gains(self, kp: np.ndarray, kd: np.ndarray) -> None:
        """The PD gains (per actuator = SDK order) that a variation's kp_scale and kd_scale multiply."""
        self._gains = tuple(jax.device_put(np.asarray(g, dtype=self.dtype), self.device) for g in (kp, kd))

    def set_course_table(self, hfield_data: np.ndarray) -> None:
        """The height fields (C, nhfielddata: MuJoCo's normalised elevations) `resident_step`'s `course` indexes."""
        if not self.model.nhfield:
            raise ValueError("the model has no height field to exchange")
        self._course_table = jax.device_put(np.asarray(hfield_data, dtype=self.dtype), self.device)

    def resident_step(self, qpos: jax.Array, qvel: jax.Array, joint_targets: jax.Array, previous_targets: jax.Array,
                      delay_steps: jax.Array, variation: jax.Array | None = None, course: jax.Array | None = None,
                      ) -> tuple[jax.Array, jax.Array, jax.Array]:
        """Advance every robot one policy period on the device, as `step` does; arrays in and out stay there.

        qpos (N, nq), qvel (N, nv), the targets (N, nu) in the physics' dtype, delay_steps (N,) int32;
        `variation` (N, 7) each robot's `VARIATION_PARAMS` (None: the model as built, for all);
        `course` (N,) int32 each robot's row of `set_course_table` (None: the model's own height field).
        Returns the new qpos, qvel and the mean foot touch (N, 4) over the substeps.
        """
        key = (variation is not None, course is not None)
        if key not in self._resident_steps:
            axes = (None, None, None, 0, 0, 0, 0, 0, 0, 0 if key[0] else None, 0 if key[1] else None)
            self._resident_steps[key] = jax.jit(jax.vmap(self._resident_control_step, in_axes=axes))
        if variation is not None and self._gains is None:
            raise ValueError("resident_step with a variation needs the nominal gains first (set_nominal_gains)")
        if course is not None and self._course_table is None:
            raise ValueError("resident_step with courses needs their height fields first (set_course_table)")
        n = qpos.shape[0]
        if self._resident_data is None or self._resident_data.qpos.shape[0] != n:
            with jax.default_device(self.device):
                self._resident_data = _to_dtype(jax.vmap(lambda _: mjx.make_data(self._mx))(jnp.arange(n)), self.dtype)
        with jax.default_matmul_precision(MATMUL_PRECISION):
            self._resident_data, touch = self._resident_steps[key](
                self._mx, self._gains, self._course_table, self._resident_data, qpos, qvel, joint_targets,
                previous_targets, delay_steps, variation, course,
            )  # fmt: skip
        return self._resident_data.qpos, self._resident_data.qvel, touch

    def varied_model_fields(self, variation: jax.Array) -> dict[str, jax.Array]:
        """The model fields (N, ...) that `resident_step` gives robots of these `VARIATION_PARAMS` rows (N, 7)."""
        if self._gains is None:
            raise ValueError("varied_model_fields needs the nominal gains first (set_nominal_gains)")
        one = lambda p: varied_fields(self._mx, self._base_body, self._leg_dofs, *self._gains, p)  # noqa: E731
        with jax.default_matmul_precision(MATMUL_PRECISION):
            return jax.jit(jax.vmap(one))(variation)

    def _resident_control_step(self, mx, gains, course_table, data, qpos, qvel, targets, previous, delay, variation,
                               course):
        if variation is not None:
            mx = mx.replace(**varied_fields(mx, self._base_body, self._leg_dofs, *gains, variation))
        if course is not None:
            mx = mx.replace(hfield_data=course_table[course])
        return self._control_step(mx, data, qpos, qvel, targets, previous, delay)

    # ----------------------------------------------------------------- on the device
    def _control_step(self, mx, data, qpos, qvel, targets, previous, delay):
        """One robot, one policy period: `substeps` MJX steps; the new targets from substep `delay` on."""
        data = data.replace(qpos=qpos, qvel=qvel)

        def substep(d, k):
            # the cast keeps the carry's type when JAX's process-wide x64 switch was turned on by a float64 backend
            d = _to_dtype(mjx.step(mx, d.replace(ctrl=jnp.where(k < delay, previous, targets))), self.dtype)
            return d, d.sensordata[self._touch_adr]

        data, touch = jax.lax.scan(substep, data, jnp.arange(self.substeps))
        return data, touch.mean(axis=0)

    def _robot_control_step(self, fields, mx, hfield_table, hfield_index, data, qpos, qvel, targets, previous, delay):
        mx = mx.replace(**fields, hfield_data=hfield_table[hfield_index])
        return self._control_step(mx, data, qpos, qvel, targets, previous, delay)

    def _hfield_row(self, hfield_data: np.ndarray) -> int:
        for row, known in enumerate(self._hfield_table):
            if np.array_equal(known, hfield_data):
                return row
        self._hfield_table.append(hfield_data.copy())
        return len(self._hfield_table) - 1


def varied_fields(mx, base_body: int, leg_dofs: np.ndarray, kp: jax.Array, kd: jax.Array,
                  params: jax.Array) -> dict[str, jax.Array]:
    """One robot's model fields for its `VARIATION_PARAMS` row: `physics.vary_model`'s edit, in JAX.

    Every geom gets the sliding friction; the base gains the added mass (at least 10 % of its own is kept) with its
    rotational inertia scaled alike and its centre of mass moved; the PD gains are the nominal ones times the
    robot's motor-strength scales; the leg joints get the joint damping and friction loss (NaN: the model's own).
    """
    friction, added_mass, com, kp_scale, kd_scale = params[0], params[1], params[2:5], params[5], params[6]
    damping, friction_loss = params[7], params[8]
    mass = mx.body_mass[base_body]
    new_mass = jnp.maximum(mass + added_mass, 0.1 * mass)
    gain = jnp.zeros_like(mx.actuator_gainprm).at[:, 0].set(kp * kp_scale)
    bias = jnp.zeros_like(mx.actuator_biasprm).at[:, 1].set(-kp * kp_scale).at[:, 2].set(-kd * kd_scale)
    legs_damping, legs_friction_loss = mx.dof_damping[leg_dofs], mx.dof_frictionloss[leg_dofs]
    return {
        "geom_friction": mx.geom_friction.at[:, 0].set(friction),
        "body_mass": mx.body_mass.at[base_body].set(new_mass),
        "body_inertia": mx.body_inertia.at[base_body].set(mx.body_inertia[base_body] * (new_mass / mass)),
        "body_ipos": mx.body_ipos.at[base_body].set(mx.body_ipos[base_body] + com),
        "actuator_gainprm": gain,
        "actuator_biasprm": bias,
        "dof_damping": mx.dof_damping.at[leg_dofs].set(jnp.where(jnp.isnan(damping), legs_damping, damping)),
        "dof_frictionloss": mx.dof_frictionloss.at[leg_dofs].set(
            jnp.where(jnp.isnan(friction_loss), legs_friction_loss, friction_loss)),
    }


def _use_compile_cache() -> None:
    """Keep compiled step functions on disk: the next run with the same model and robot count starts in seconds,
    not the ~15 s (CPU) a compile takes. SURROGAIT_JAX_CACHE names the folder ("" turns it off); a cache folder the
    caller already gave JAX is left as it is."""
    folder = os.environ.get("SURROGAIT_JAX_CACHE", str(Path.home() / ".cache" / "surrogait" / "jax"))
    if folder and not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_compilation_cache_dir", folder)


def _start_cpu_backend_with_one_thread() -> None:
    """Start JAX's CPU backend with a thread pool of one, where JAX has no GPU plugin and has not started yet.

    XLA's CPU runtime deadlocks on MJX's step with a pool of several threads: the Newton solver's batched Cholesky
    (a LAPACK call) runs on a pool thread, splits its batch of robots over the same pool and waits; when every pool
    thread runs such a call, nobody is left to do the split work and all threads sleep for ever (measured here: 256
    robots on 2 cores hung within 60 control steps in 2 runs of 2, all threads asleep in `jax::ParallelBatchMap`;
    `--xla_cpu_multi_thread_eigen=false` does not help). The pool is sized from the CPUs the creating thread may run
    on, so this thread is pinned to one CPU while JAX starts and set free after; threads made later (torch's,
    MuJoCo's) are not affected. A pool of one ran 2 x 100 steps, and ~40 % faster. On a GPU machine nothing changes.
    """
    from importlib.util import find_spec

    from jax._src import xla_bridge

    if not hasattr(os, "sched_setaffinity") or find_spec("jax_plugins"):
        return
    if xla_bridge.backends_are_initialized():
        if _xla_cpu_pool_threads() > 1:
            warnings.warn("JAX's CPU backend was started before surrogait_train.mjx_physics was imported, with a "
                          "pool of several threads, on which MJX's step can deadlock (the docstring of "
                          "_start_cpu_backend_with_one_thread says why); import surrogait_train.mjx_physics before "
                          "anything uses JAX", stacklevel=3)
        return
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    try:
        jax.devices()
    finally:
        os.sched_setaffinity(0, cpus)


def _xla_cpu_pool_threads() -> int:
    try:
        return sum(Path(f"/proc/self/task/{t}/comm").read_text().strip() == "tf_XLAEigen"
                   for t in os.listdir("/proc/self/task"))
    except OSError:
        return 0


# Before anyone in this process starts JAX's backend through this module (MjxPhysics, the benchmarks).
_start_cpu_backend_with_one_thread()


def _pick_device(name: str) -> jax.Device:
    """JAX's device `name` ("gpu", "cpu", "cuda:1"; "" = JAX's default: a GPU where one is present)."""
    if not name:
        return jax.devices()[0]
    platform, _, index = name.partition(":")
    try:
        devices = jax.devices(platform)
    except RuntimeError as e:
        raise ValueError(f"env.mjx_device={name!r}: JAX has no {platform!r} device here ({e}); "
                         f"available: {[str(d) for d in jax.devices()]}") from None
    i = int(index) if index else 0
    if i >= len(devices):
        raise ValueError(f"env.mjx_device={name!r}: only {len(devices)} {platform} device(s) here")
    return devices[i]


def _to_dtype(tree, dtype):
    """A model's or data's floating-point arrays in `dtype` (MJX makes float64 ones whenever JAX's x64 is on)."""
    def cast(x):
        return x.astype(dtype) if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.floating) else x

    return jax.tree_util.tree_map(cast, tree)
