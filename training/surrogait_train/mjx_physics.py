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
warm start carries over, as in C); the state vectors come in from the host and go back to it every
control step (N x 38 floats each way), because the environment keeps its state in NumPy.
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
from surrogait_train.physics import StateLayout, full_states_from_qpos

# The model fields `physics.vary_model` edits: they may differ between robots.
PER_ROBOT_FIELDS = ("geom_friction", "body_mass", "body_inertia", "body_ipos", "actuator_gainprm", "actuator_biasprm",
                    "dof_damping", "dof_frictionloss")


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
