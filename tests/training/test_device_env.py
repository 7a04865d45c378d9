"""The device-resident environment (`env.backend=mjx env.device=...`, surrogait_train/device_env.py): the same robots
as the host environment on MJX, with nothing crossing between host and device in a steady-state step.

Here torch and JAX both run on the CPU; `SURROGAIT_TEST_DEVICE=cuda` runs these tests with both on the GPU
(bench/gpu_check.sh does).

Side by side, the two environments start from the same robots (`copy_from`) and take the same actions (the
clock-driven trot of their commands) for 1 s. They run the same jitted MJX step on the same inputs, so the
physics agrees exactly where the inputs do; the tolerances, and why:
- float64: measured bit-identical states, observations and rewards (0 difference in 50 steps on flat ground with
  every robot's own friction, mass, centre of mass, motor strength and delay; and in 10 steps on the
  mixed-terrain courses, the robots' front feet on the features); asserted 1e-9 rad, 1e-9 rad/s and 1e-5 in
  observations and rewards, room for another summation order (a GPU's torch kernels compute the rewards there).
- float32: each robot's model fields are computed from its variation in float32 on the device, where the host
  computes them in float64 and rounds (`physics.vary_model`): a last-bit difference that the contact solve
  amplifies (measured <= 6e-7 rad, 2.7e-5 rad/s, 1.3e-6 in observations, 4e-8 in rewards over 1 s); asserted
  1e-4 rad, 1e-2 rad/s, 1e-3 and 1e-4: 100x the measurement, and 5x tighter than MJX's agreement with MuJoCo C
  in float32 (test_mjx_backend.py).
Resets and random draws are the device's own (torch's generator, not NumPy's): they are tested for what they
must do, not compared value by value.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import pytest
import torch

from surrogait_core.terrain import TERRAINS, make_terrain
from surrogait_train.config import ConfigError, EnvConfig, RandomizationConfig, load_config
from surrogait_train.device_env import DeviceLocomotionEnv, to_jax
from surrogait_train.devices import learner_device, make_env
from surrogait_train.env import TERRAIN_LEVELS, LocomotionEnv
from surrogait_train.physics import vary_model
from surrogait_train.trainer import Trainer, trainer_from_checkpoint
from surrogait_train.transfers import TransferCounter

OWN_TARGET = ("make test-mjx: MJX on this CPU as on a GPU; minutes of XLA compiles where JAX's compile cache is "
              "cold (scripts/run_tests.py)")
DEVICE = os.environ.get("SURROGAIT_TEST_DEVICE", "cpu")
ROBOTS = 8
STEPS = 25  # half a second of control at 50 Hz: every foot touches down and lifts off (the trot's period 0.5 s)
# randomised physics, but no observation noise and no pushes: both are drawn from each environment's own generator
QUIET = RandomizationConfig(enabled=True, joint_pos_noise_rad=0.0, joint_vel_noise_rad_s=0.0, gyro_noise_rad_s=0.0,
                            gravity_noise=0.0, base_lin_vel_noise_m_s=0.0, push_interval_s=[1000.0, 1000.0])


def _config(device: str = "", float64: bool = False, terrain: str = "flat") -> EnvConfig:
    """ROBOTS robots on MJX; each episode's gait clock starts at a random phase, the reference stands at zero."""
    return EnvConfig(num_envs=ROBOTS, num_threads=1, backend="mjx", mjx_float64=float64, terrain=terrain,
                     device=device, random_start_phase=True, stand_speed_m_s=0.3)


def _device_env(float64: bool = False, randomization: RandomizationConfig = QUIET, seed: int = 3):
    return DeviceLocomotionEnv(_config(DEVICE, float64), seed=seed, randomization=randomization)


def _side_by_side(float64: bool, terrain: str = "flat", steps: int = STEPS) -> dict[str, float]:
    """The largest differences between the host and the device environment over `steps` control steps from the same
    randomised robots. On the mixed-terrain courses (each robot its own kind and curriculum level) the robots start
    where the features begin, their front feet on them, and are sent forward."""
    config = _config(float64=float64, terrain=terrain)
    if terrain == "mixed":
        config.terrain_start_level_max = 3
    host = LocomotionEnv(config, seed=3, randomization=QUIET)
    device = DeviceLocomotionEnv(_config(DEVICE, float64, terrain), seed=3, randomization=QUIET)
    host.reset(seed=1)
    device.reset(seed=1)
    layout = host.physics.layout
    if terrain == "mixed":
        host._mj_state[:, layout.qpos.start] = 0.5  # m: where the features begin
        host.commands[:] = torch.tensor([0.8, 0.0, 0.0])
        assert len(set(host.terrain_level.tolist())) > 1
    device.copy_from(host)
    worst = dict.fromkeys(("qpos", "qvel", "obs", "reward", "touch", "reference", "dones"), 0.0)
    for _ in range(steps):
        actions = host.reference_action()
        worst["reference"] = max(worst["reference"], (device.reference_action().cpu() - actions).abs().max().item())
        obs, reward, done, info = host.step(actions)
        d_obs, d_reward, d_done, d_info = device.step(actions.to(device.device))
        assert torch.equal(d_done.cpu(), done) and not done.any(), "the window is meant to hold no reset"
        errors = {
            "qpos": np.abs(device.qpos.cpu().numpy() - host._mj_state[:, layout.qpos]).max(),
            "qvel": np.abs(device.qvel.cpu().numpy() - host._mj_state[:, layout.qvel]).max(),
            "obs": (d_obs.cpu() - obs).abs().max().item(),
            "reward": (d_reward.cpu() - reward).abs().max().item(),
            "touch": (d_info["touch"].cpu() - info["touch"]).abs().max().item(),
        }
        for key, value in errors.items():
            worst[key] = max(worst[key], float(value))
    host.close(), device.close()
    print(f"device vs host, float{64 if float64 else 32}, {terrain}: {worst}")
    return worst


def test_env_device_picks_the_device_resident_environment_and_the_host_one_stays_the_default():
    assert type(make_env(EnvConfig(num_envs=2))) is LocomotionEnv
    assert type(make_env(EnvConfig(num_envs=2, backend="mjx"))) is LocomotionEnv  # the host round trip, as before
    env = make_env(EnvConfig(num_envs=2, backend="mjx", device=DEVICE))
    assert type(env) is DeviceLocomotionEnv and env.device.type == torch.device(DEVICE).type
    assert env.physics.device.platform == ("cpu" if DEVICE == "cpu" else "gpu")


def test_cuda_asked_for_where_there_is_none_is_refused_with_what_exists_and_what_to_do(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=r"env.device='cuda'.*no CUDA device.*devices here: cpu.*env.device=cpu"):
        make_env(EnvConfig(num_envs=2, backend="mjx", device="cuda"))
    cfg = load_config(None, ["learner.device=cuda:1"])
    with pytest.raises(ConfigError, match=r"learner.device='cuda:1'.*no CUDA device.*CUDA variant"):
        learner_device(cfg, same_as_env=False)


def test_device_settings_that_cannot_work_together_are_refused(monkeypatch):
    with pytest.raises(ConfigError, match=r"env.device='cuda' needs env.backend=mjx.*MuJoCo C"):
        make_env(EnvConfig(num_envs=2, device="cuda"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU as far as the check can tell
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    with pytest.raises(ConfigError, match=r"learner.device='cuda'.*environment's tensors are on cpu.*one device"):
        learner_device(load_config(None, ["learner.device=cuda"]))
    assert learner_device(load_config(None, ["learner.device=cuda"]), same_as_env=False) == torch.device("cuda", 0)
    with pytest.raises(ConfigError, match=r"only 1 CUDA device|1 CUDA device\(s\), cuda:0 to cuda:0"):
        learner_device(load_config(None, ["learner.device=cuda:3"]), same_as_env=False)
    with pytest.raises(ConfigError, match=r"env.mjx_device='gpu'.*leave env.mjx_device empty"):
        DeviceLocomotionEnv(EnvConfig(num_envs=2, backend="mjx", device="cpu", mjx_device="gpu"))
    with pytest.raises(ConfigError, match=r"env.course_heading_gain.*env.backend=cpu"):
        DeviceLocomotionEnv(EnvConfig(num_envs=2, backend="mjx", device="cpu", terrain="mixed",
                                      course_heading_gain=1.0))


def test_in_float32_the_robots_move_as_in_the_host_environment_to_single_precision():
    worst = _side_by_side(float64=False)
    assert worst["qpos"] < 1e-4 and worst["qvel"] < 1e-2 and worst["touch"] < 1.0
    assert worst["obs"] < 1e-3 and worst["reward"] < 1e-4 and worst["reference"] < 1e-3


def test_done_robots_start_new_episodes_on_the_device_and_the_others_carry_on():
    env = _device_env()
    env.reset(seed=6)
    for _ in range(3):
        env.step(env.reference_action())
    ending = torch.arange(ROBOTS, device=env.device) % 2 == 0
    env.episode_step = torch.where(ending, env.max_episode_steps - 1, env.episode_step)
    before = {name: getattr(env, name).clone() for name in ("commands", "qpos", "held_targets")}
    friction_before = env.variation.friction.clone()
    _, _, done, info = env.step(env.reference_action())
    assert torch.equal(done, ending) and torch.equal(info["time_out"], ending)
    new, old = ending, ~ending
    standing = torch.as_tensor(env.spec.standing_qpos, dtype=env.qpos.dtype, device=env.device)
    assert torch.equal(env.qpos[new, :7], standing[:7].expand(int(new.sum()), -1))
    assert (env.qpos[new, 7:] - standing[7:]).abs().max() <= env.cfg.init_joint_noise_rad
    assert (env.qvel[new] == 0).all() and (env.episode_step[new] == 0).all()
    assert (env.last_action[new] == 0).all() and torch.equal(env.held_targets[new], env._default_targets.expand(4, -1))
    low, high = env._command_low, env._command_high
    assert ((env.commands[new] >= low) & (env.commands[new] <= high)).all()
    assert not torch.equal(env.commands[new], before["commands"][new])
    assert not torch.equal(env.variation.friction[new], friction_before[new])
    assert ((env.variation.friction >= 0.2) & (env.variation.friction <= 1.5)).all()
    assert torch.equal(env.commands[old], before["commands"][old])
    assert torch.equal(env.variation.friction[old], friction_before[old])
    assert not torch.equal(env.qpos[old], before["qpos"][old]) and (env.episode_step[old] > 0).all()
    obs = env.observation(env.state, env.last_action, noise={})
    assert torch.equal(obs[new], env.observation(env._sim_state(), env.last_action, noise={})[new])


def test_a_steady_state_step_moves_nothing_between_host_and_device():
    env = _device_env(randomization=RandomizationConfig(enabled=True))  # noise and pushes drawn on the device too
    env.reset(seed=7)
    actions = env.reference_action()
    for _ in range(3):  # the first step compiles and allocates
        env.step(actions)
    with TransferCounter() as counter:
        for _ in range(5):
            env.step(actions)
    assert counter.events == {}, f"host transfers in 5 steps: {dict(counter.events)}"


def test_the_counter_sees_each_kind_of_transfer():
    """The test above can fail: each way a step could reach the host is counted (or, for JAX, refused)."""
    import jax
    import jax.numpy as jnp

    x, a = torch.ones(4, device=DEVICE), jnp.ones(3)
    with TransferCounter() as counter:
        x.sum().item()
        bool(x.any())
        x.cpu().tolist()
        torch.as_tensor(np.ones(3)).to(DEVICE)
        x[x > 0]
        torch.linalg.solve(torch.eye(2, device=DEVICE), torch.ones(2, device=DEVICE))
        try:
            float(a.sum())  # counted; on a GPU also refused by JAX's transfer guard
        except Exception as e:  # noqa: BLE001
            assert "Disallowed device-to-host transfer" in str(e)
        with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
            jax.device_put(np.ones(3))
    events = counter.events
    assert events["torch wait: host read (item/float/bool)"] == 2 and events["torch host read (.tolist)"] == 1
    assert events["torch tensor from host data"] == 1 and events["torch wait: boolean mask"] == 1
    assert events["torch wait: linalg error check"] == 1 and events["jax host read"] >= 1
    if DEVICE != "cpu":
        assert events["torch copy between devices"] >= 2


def test_a_shac_iteration_moves_the_same_few_values_to_the_host_whatever_its_horizon(tmp_path, tiny_overrides):
    """Per step nothing: what a training iteration reads back (its logged statistics) does not grow with its
    number of steps."""
    trainer = Trainer(load_config(None, [*tiny_overrides, "env.backend=mjx", f"env.device={DEVICE}",
                                         "randomization.enabled=true"]), tmp_path)
    assert isinstance(trainer.env, DeviceLocomotionEnv) and trainer.learner.device == trainer.env.device
    trainer.learner.iterate()  # compiles, allocates
    counts = {}
    for horizon in (2, 5):
        trainer.learner.cfg.horizon = horizon
        with TransferCounter() as counter:
            trainer.learner.iterate()
        counts[horizon] = dict(counter.events)
    assert counts[2] == counts[5], counts
    trainer.env.close()


def test_ppo_trains_on_the_device_resident_environment_with_its_learner_on_that_device():
    from surrogait_train.ppo.config import from_train_config
    from surrogait_train.ppo.train import PPOSession

    cfg = load_config(None, ["env.num_envs=8", "env.num_threads=1", "randomization.enabled=true",
                             "learner.actor_hidden=[32,32]", "env.backend=mjx", f"env.device={DEVICE}"])
    session = PPOSession(cfg, from_train_config(cfg, num_steps_per_env=4, num_mini_batches=1, num_learning_epochs=1))
    try:
        assert isinstance(session.env, DeviceLocomotionEnv)
        assert session.device == session.env.device and session.vec_env.device == session.env.device
        assert next(session.actor.parameters()).device == session.env.device
        assert session.vec_env.get_observations()["policy"].device == session.env.device
        session.learn(2)
        assert session.env_samples == 2 * 4 * 8
    finally:
        session.close()


def test_the_trainer_trains_resumes_and_exports_on_the_device(tmp_path, tiny_overrides):
    overrides = [*tiny_overrides, "env.backend=mjx", f"env.device={DEVICE}", "randomization.enabled=true"]
    trainer = Trainer(load_config(None, overrides), tmp_path)
    trainer.train(max_iterations=2, progress=False)
    assert trainer.iteration == 2 and (tmp_path / "checkpoint.pt").is_file()
    assert next(trainer.actor.parameters()).device.type == torch.device(DEVICE).type
    trainer.env.close()
    resumed = trainer_from_checkpoint(tmp_path / "checkpoint.pt")
    again, fresh = trainer_from_checkpoint(tmp_path / "checkpoint.pt"), Trainer(load_config(None, overrides), tmp_path)
    assert resumed.iteration == 2 and isinstance(resumed.env, DeviceLocomotionEnv)
    # the robots restart from new episodes drawn by the checkpoint's generator: the same on every resume
    assert torch.equal(resumed.env.qpos, again.env.qpos) and not torch.equal(resumed.env.qpos, fresh.env.qpos)
    again.env.close(), fresh.env.close()
    resumed.train(max_iterations=3, progress=False)
    assert resumed.iteration == 3
    from surrogait_train.export import export_onnx

    assert export_onnx(resumed.actor, resumed.env.contract, tmp_path / "p.onnx").is_file()
    resumed.env.close()


def test_a_robots_variation_becomes_the_model_fields_vary_model_gives_it():
    """What each robot's row of parameters turns into on the device, against MuJoCo C's model edited by
    physics.vary_model (the host environment's per-robot model copies)."""
    env = _device_env(randomization=RandomizationConfig(enabled=True, base_com_offset_m=0.05,
                                                        joint_damping=[0.5, 2.0], joint_friction_loss=[0.0, 0.3]))
    env.reset(seed=4)
    fields = env.physics.varied_model_fields(to_jax(env.variation_params()))
    v = env.variation
    for i in range(ROBOTS):
        model = copy.copy(env.model)
        vary_model(model, env.model, float(v.friction[i]), float(v.added_base_mass_kg[i]),
                   v.base_com_offset_m[i].cpu().numpy(), env.kp.cpu().numpy() * float(v.kp_scale[i]),
                   env.kd.cpu().numpy() * float(v.kd_scale[i]), float(v.joint_damping[i]),
                   float(v.joint_friction_loss[i]))
        for name, value in fields.items():
            np.testing.assert_allclose(np.asarray(value[i]), getattr(model, name), rtol=1e-6, atol=1e-7, err_msg=name)
    assert len(set(v.friction.tolist())) == ROBOTS and len(set(v.joint_damping.tolist())) == ROBOTS
    nominal = env.physics.varied_model_fields(to_jax(_device_env(float64=False).variation_params()))
    np.testing.assert_allclose(np.asarray(nominal["dof_damping"][0]), env.model.dof_damping, rtol=1e-6)  # NaN: own


def test_the_surrogate_is_told_the_same_robot_dynamics():
    """Gains, added mass, delay, held targets and the joints' passive terms where they are randomised."""
    randomization = RandomizationConfig(enabled=True, joint_damping=[0.5, 2.0])
    host = LocomotionEnv(_config(), seed=3, randomization=randomization)
    device = DeviceLocomotionEnv(_config(DEVICE), seed=3, randomization=randomization)
    host.reset(seed=1)
    device.copy_from(host)
    expected, got = host.robot_dynamics(), device.robot_dynamics()
    for name in ("kp", "kd", "added_mass_kg", "delay_substeps", "held_targets", "joint_damping", "joint_friction_loss"):
        torch.testing.assert_close(getattr(got, name).cpu(), getattr(expected, name), rtol=0, atol=1e-6, msg=name)


def test_the_ground_under_the_base_and_the_feet_is_each_robots_course():
    host = LocomotionEnv(EnvConfig(num_envs=ROBOTS, terrain="mixed", terrain_start_level_max=3), seed=5)
    device = DeviceLocomotionEnv(_config(DEVICE, True, "mixed"), seed=5)
    host.reset(seed=2)
    rng = np.random.default_rng(0)
    qpos = host.physics.layout.qpos
    host._mj_state[:, qpos.start:qpos.start + 2] = rng.uniform([0.6, -1.5], [4.4, 1.5], (ROBOTS, 2))  # on the features
    yaw = rng.uniform(-np.pi, np.pi, ROBOTS)
    turned = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], -1)  # feet around the base, any heading
    host._mj_state[:, qpos.start + 3:qpos.start + 7] = turned
    device.copy_from(host)
    assert len(set(host.terrain_level.tolist())) > 1, "the robots should stand on several curriculum levels"
    x, y = host._mj_state[:, qpos.start], host._mj_state[:, qpos.start + 1]
    course = [make_terrain(TERRAINS[k], host.cfg.terrain_seed + lv, TERRAIN_LEVELS[lv]) for k, lv in
              zip(host.terrain_kind, host.terrain_level, strict=True)]
    expected = np.array([c.height_at(x[i], y[i]) for i, c in enumerate(course)])
    np.testing.assert_allclose(device.ground_height().cpu().numpy(), expected, rtol=0, atol=1e-6)
    assert np.abs(expected).max() > 0.01, "the points should lie on the courses' features, not only on flat ground"
    torch.testing.assert_close(device.foot_ground_offset(device.state).cpu(), host.foot_ground_offset(host.state),
                               rtol=0, atol=1e-6)


# float64 last: JAX's x64 switch is process-wide, and the float32 steps above share their compiles with other files'
def test_in_float64_on_the_terrain_courses_the_robots_move_as_in_the_host_environment_to_rounding():
    """Randomised robots, every one on its own course (kind and curriculum level) with its height field picked on
    the device; the rewards measure each foot from the ground under it, looked up on the device. A tenth of a
    second: MJX on a height field is slow on a CPU."""
    worst = _side_by_side(float64=True, terrain="mixed", steps=5)
    assert worst["qpos"] < 1e-9 and worst["qvel"] < 1e-9 and worst["touch"] < 1e-6
    assert worst["obs"] < 1e-5 and worst["reward"] < 1e-5 and worst["reference"] < 1e-5

