"""The MJX physics backend (`env.backend=mjx`): the same robots from the same states as MuJoCo C, on the CPU here
and on a GPU where one exists (JAX's default device).

Tolerances, and why:
- float64, one control step from rest: the same algorithm in the same precision; only the order of floating-point
  sums differs, so the states agree to rounding (measured 1e-14; asserted 1e-9).
- float64, a 1 s rollout: both constraint solvers stop at the model's tolerance (1e-8) from different warm starts
  (MuJoCo C's worker threads reuse one MjData for many robots), so differences of that order enter every step
  and are carried along (measured <= 4e-7 rad, 3e-6 rad/s over 50 control steps; asserted 1e-5, 1e-4).
- float32, the precision a GPU is fast in: rounding of 1e-7 relative, amplified by the contact solve (measured
  <= 2e-5 rad, 5e-4 rad/s over the same rollout; asserted 5e-4, 1e-2).
- Height fields: MJX keeps at most 4 contacts per foot on a height-field prism where MuJoCo C keeps 6, so the
  contact forces and thereby the motions differ (measured 0.6 rad/s in the first step): on a course the backends
  are compared as robots: standing 1 s, base heights agree to 7e-5 m and attitudes to 4e-4 (asserted 2e-3 m, 1e-2).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from surrogait_train.config import EnvConfig, RandomizationConfig, load_config
from surrogait_train.env import LocomotionEnv
from surrogait_train.mjx_physics import MjxPhysics
from surrogait_train.physics import BatchedPhysics
from surrogait_train.trainer import Trainer

OWN_TARGET = ("make test-mjx: MJX on this CPU as on a GPU; minutes of XLA compiles where JAX's compile cache is "
              "cold (scripts/run_tests.py)")
ROBOTS = 8
ROLLOUT_STEPS = 50  # 1 s of control at 50 Hz


def _env(backend: str, float64: bool = True, terrain: str = "flat", randomized: bool = True) -> LocomotionEnv:
    cfg = EnvConfig(num_envs=ROBOTS, num_threads=2, backend=backend, mjx_float64=float64, terrain=terrain)
    return LocomotionEnv(cfg, seed=3, randomization=RandomizationConfig(enabled=randomized))


def _side_by_side(float64: bool) -> list[dict[str, float]]:
    """Both backends step the same randomised robots (friction, mass, centre of mass, motor strength, action delay)
    with the same actions, the clock-driven trot of their commands; per step, the largest difference."""
    cpu, mjx = _env("cpu"), _env("mjx", float64)
    cpu.reset(seed=1), mjx.reset(seed=1)
    layout = cpu.physics.layout
    errors = []
    for _ in range(ROLLOUT_STEPS):
        actions = cpu.reference_action()
        touch_cpu = cpu.step(actions)[3]["touch"]
        touch_mjx = mjx.step(actions)[3]["touch"]
        diff = np.abs(cpu._mj_state - mjx._mj_state)
        errors.append({"qpos": diff[:, layout.qpos].max(), "qvel": diff[:, layout.qvel].max(),
                       "touch_n": (touch_cpu - touch_mjx).abs().max().item()})
    cpu.close(), mjx.close()
    worst = {key: max(e[key] for e in errors) for key in errors[0]}
    print(f"MJX vs MuJoCo C, float{64 if float64 else 32}, {ROLLOUT_STEPS} control steps: largest differences {worst}")
    return errors


@pytest.fixture(scope="module")
def float32_errors() -> list[dict[str, float]]:
    return _side_by_side(float64=False)


@pytest.fixture(scope="module")
def float64_errors(float32_errors) -> list[dict[str, float]]:  # after float32: JAX's x64 switch is process-wide
    return _side_by_side(float64=True)


def test_the_backend_is_chosen_by_configuration_and_cpu_stays_the_default():
    assert isinstance(LocomotionEnv(EnvConfig(num_envs=2)).physics, BatchedPhysics)
    assert isinstance(LocomotionEnv(EnvConfig(num_envs=2, backend="mjx")).physics, MjxPhysics)


def test_a_wrong_backend_or_device_is_refused_with_what_to_use():
    with pytest.raises(ValueError, match=r"env.backend='gpu'.*cpu, mjx"):
        LocomotionEnv(EnvConfig(num_envs=2, backend="gpu"))
    with pytest.raises(ValueError, match=r"env.mjx_device='tpu'.*no 'tpu' device.*available"):
        LocomotionEnv(EnvConfig(num_envs=2, backend="mjx", mjx_device="tpu"))


def test_one_control_step_in_float64_equals_mujoco_c_to_rounding(float64_errors):
    first = float64_errors[0]
    assert first["qpos"] < 1e-9 and first["qvel"] < 1e-9 and first["touch_n"] < 1e-6


def test_the_go1_steps_alike_too(float64_errors):
    """Another robot model: its own masses, motors and feet."""
    envs = [LocomotionEnv(EnvConfig(num_envs=4, robot="go1", backend=b, mjx_float64=True), seed=3,
                          randomization=RandomizationConfig(enabled=True)) for b in ("cpu", "mjx")]
    for env in envs:
        env.reset(seed=1)
    actions = envs[0].reference_action()
    for env in envs:
        env.step(actions)
    np.testing.assert_allclose(envs[1]._mj_state, envs[0]._mj_state, rtol=0, atol=1e-9)


def test_a_one_second_rollout_in_float64_stays_within_the_solver_tolerance(float64_errors):
    assert max(e["qpos"] for e in float64_errors) < 1e-5
    assert max(e["qvel"] for e in float64_errors) < 1e-4
    assert max(e["touch_n"] for e in float64_errors) < 1e-2


def test_a_one_second_rollout_in_float32_stays_within_single_precision(float32_errors):
    assert max(e["qpos"] for e in float32_errors) < 5e-4
    assert max(e["qvel"] for e in float32_errors) < 1e-2
    assert max(e["touch_n"] for e in float32_errors) < 1.0


# A fifth of a second: an MJX step on height fields costs 1-3 s of CPU here (50 steps took 60 s alone), and the
# standing robots' heights move by under 3 mm in a half or a whole second (measured in the CPU environment).
COURSE_STEPS = 10


def test_on_a_course_both_backends_keep_the_robots_standing_alike(float64_errors):
    """Per-robot height fields (a mixed-terrain curriculum: every robot its own course) in MJX."""
    cpu, mjx = _env("cpu", terrain="mixed", randomized=False), _env("mjx", terrain="mixed", randomized=False)
    cpu.reset(seed=2), mjx.reset(seed=2)
    standing = torch.zeros(ROBOTS, cpu.action_size)
    for _ in range(COURSE_STEPS):
        cpu.step(standing), mjx.step(standing)
    for env in (cpu, mjx):
        assert env.episode_step.min() >= COURSE_STEPS, "a robot fell or left its course"
    torch.testing.assert_close(mjx.state.base_height, cpu.state.base_height, rtol=0, atol=2e-3)
    torch.testing.assert_close(mjx.state.projected_gravity_b, cpu.state.projected_gravity_b, rtol=0, atol=1e-2)
    cpu.close(), mjx.close()


def test_the_trainer_runs_on_the_mjx_backend(tmp_path, tiny_overrides):
    trainer = Trainer(load_config(None, [*tiny_overrides, "env.backend=mjx"]), tmp_path)
    trainer.train(max_iterations=2, progress=False)
    assert trainer.iteration == 2 and trainer.env_steps == 2 * 6 * 8
    assert isinstance(trainer.env.physics, MjxPhysics) and (tmp_path / "checkpoint.pt").is_file()
    trainer.env.close()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="thread pinning is Linux's")
def test_jax_cpu_backend_runs_one_pool_thread_so_mjx_cannot_wedge():
    """XLA's CPU pool deadlocked on MJX's batched Cholesky with two threads (mjx_physics.py says how); the backend
    starts with one, in a fresh process as a user's would, and this process's own CPUs are left as they were."""
    script = (
        "import os; from surrogait_train.config import EnvConfig; from surrogait_train.env import LocomotionEnv\n"
        "cpus = os.sched_getaffinity(0); LocomotionEnv(EnvConfig(num_envs=2, backend='mjx'))\n"
        "names = [open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task')]\n"
        "print(names.count('tf_XLAEigen'), os.sched_getaffinity(0) == cpus)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split()[-2:] == ["1", "True"]
