"""The policy node's decision logic, without rclpy: state machine + inputs + policy → motor targets."""

import dataclasses

import numpy as np
import pytest
from policy_files import lowstate, write_linear_policy, write_test_policy

from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_controller import ControllerConfig, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire.go2_wire import ESTOP_KEYS, STAND_UP_KEYS, WALK_KEYS, Gamepad

SPEC = load_robot_spec("go2")
LYING = np.array([0.0, 1.36, -2.65] * 4)


def controller(path, **config):
    runner = PolicyRunner(OnnxPolicy(path, robot="go2"))
    return PolicyController(runner, ControllerConfig(stand_up_duration_s=1.0, **config))


GYRO_NOISE = np.random.default_rng(0)


def run(ctrl, t0, t1, joint_pos=None, keys=()):
    """Cycles at 50 Hz from t0 to t1 with a fresh lowstate each cycle (its tick the robot's ms, its gyro as noisy as a
    live IMU's: a measurement that repeats exactly is a frozen stream); returns the outputs."""
    outs = []
    for t in np.arange(t0, t1, 0.02):
        state = dataclasses.replace(lowstate(joint_pos=joint_pos), gamepad=Gamepad(frozenset(keys), 0, 0, 0, 0),
                                    tick_ms=int(round(t * 1000)), gyro_b=GYRO_NOISE.normal(0.0, 0.01, 3))
        ctrl.on_lowstate(state, t)
        outs.append(ctrl.cycle(t))
    return outs


def test_passive_damps_then_stands_up_smoothly_then_holds_the_default_pose(go2_policy_path):
    ctrl = controller(go2_policy_path)
    out = run(ctrl, 0.0, 0.1, joint_pos=LYING)[-1]
    assert out.state is PolicyState.PASSIVE and out.targets.is_damping and np.all(out.targets.kd == 1.0)
    assert ctrl.request("stand_up", 0.1).accepted
    outs = run(ctrl, 0.1, 1.2, joint_pos=LYING)
    stand = [o for o in outs if o.state is PolicyState.STAND_UP]
    assert len(stand) >= 45
    np.testing.assert_allclose(stand[0].targets.q, LYING, atol=1e-3)  # starts from where the legs are
    steps = np.abs(np.diff([o.targets.q for o in stand], axis=0)).max()
    assert steps < 0.1, "targets move smoothly (no jump)"
    ready = outs[-1]
    assert ready.state is PolicyState.READY
    np.testing.assert_allclose(ready.targets.q, SPEC.default_joint_pos)
    np.testing.assert_allclose(ready.targets.kp, ctrl.runner.contract.kp)


def test_walk_runs_the_policy_with_the_clipped_command(tmp_path):
    contract = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    # a policy whose action is tanh(command vx · 1) on every joint: shows the command reaches the network
    weight = np.zeros((contract.obs_size, 12))
    command_at = sum(t.size for t in contract.observation[: [t.name for t in contract.observation].index("command")])
    weight[command_at, :] = 1.0
    ctrl = controller(write_linear_policy(tmp_path / "p.onnx", contract, weight=weight), command_slew_rate=(0, 0, 0))
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    assert ctrl.request("walk", 1.2).accepted
    ctrl.on_cmd_vel(5.0, 0.0, 0.0, 1.2)  # beyond the range: clipped to 1.0 (and followed at once: no slew)
    out = run(ctrl, 1.2, 1.3)[-1]
    assert out.state is PolicyState.WALK and out.inference_s is not None
    np.testing.assert_allclose(out.command, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(out.targets.q, SPEC.default_joint_pos + 0.25 * np.tanh(1.0), rtol=1e-5)
    out = run(ctrl, 1.8, 1.9)[-1]  # cmd_vel timed out → zero command
    np.testing.assert_allclose(out.command, np.zeros(3))
    np.testing.assert_allclose(out.targets.q, SPEC.default_joint_pos, atol=1e-6)
    assert ctrl.request("stop_walk", 1.9).accepted
    assert run(ctrl, 1.9, 1.95)[-1].state is PolicyState.READY


def test_the_followed_command_slews_from_a_standstill_and_to_a_stop(go2_policy_path):
    ctrl = controller(go2_policy_path, command_slew_rate=(1.0, 1.0, 1.0))
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    assert ctrl.request("walk", 1.2).accepted
    ctrl.on_cmd_vel(1.0, 0.0, 0.5, 1.2)
    outs = run(ctrl, 1.2, 1.7)
    # 1 m/s² and 1 rad/s² at 50 Hz: 0.02 a cycle, from zero
    np.testing.assert_allclose(outs[0].command, [0.02, 0.0, 0.02])
    np.testing.assert_allclose(outs[-1].command, [0.5, 0.0, 0.5], atol=1e-9)
    for t in np.arange(1.7, 2.2, 0.1):
        ctrl.on_cmd_vel(1.0, 0.0, 0.5, t)
    assert run(ctrl, 1.7, 2.2)[-1].command[0] == pytest.approx(1.0)
    # the link goes quiet: the time-out's zero is reached in a second, not in one step under a body at 1 m/s
    outs = run(ctrl, 2.2, 3.8)
    stopping = [o.command[0] for o in outs if o.command[0] < 1.0]
    assert stopping[0] == pytest.approx(0.98) and np.all(np.diff(stopping) >= -0.02 - 1e-9)
    np.testing.assert_allclose(outs[-1].command, np.zeros(3), atol=1e-9)
    # a walk stopped at speed and started again starts from a standstill, not from the last walk's command
    ctrl.on_cmd_vel(1.0, 0.0, 0.0, 3.8)
    assert run(ctrl, 3.8, 3.89)[-1].command[0] == pytest.approx(0.1)
    assert ctrl.request("stop_walk", 3.9).accepted
    run(ctrl, 3.9, 4.0)
    assert ctrl.request("walk", 4.0).accepted
    ctrl.on_cmd_vel(1.0, 0.0, 0.0, 4.0)
    assert run(ctrl, 4.0, 4.01)[-1].command[0] == pytest.approx(0.02)


def test_the_gait_clock_follows_the_robot_tick(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    ctrl.on_lowstate(dataclasses.replace(lowstate(), tick_ms=5000), 1.2)
    ctrl.request("walk", 1.2)
    ctrl.cycle(1.2)
    assert ctrl._gait_time_s() == 0.0
    # wall time runs on (1 s), the robot's clock only 0.125 s: the gait phase follows the robot
    ctrl.on_lowstate(dataclasses.replace(lowstate(), tick_ms=5125), 2.2)
    ctrl.cycle(2.2)
    assert ctrl._gait_time_s() == pytest.approx(0.125)


def test_stop_walk_blends_back_to_the_default_pose(tmp_path):
    contract = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    ctrl = controller(write_linear_policy(tmp_path / "p.onnx", contract, bias=np.full(12, 2.0)))
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    ctrl.request("walk", 1.2)
    walking = run(ctrl, 1.2, 1.3)[-1].targets.q  # default + 0.25·tanh(2) ≈ default + 0.24 rad
    ctrl.request("stop_walk", 1.3)
    outs = run(ctrl, 1.3, 2.0)
    qs = np.array([walking] + [o.targets.q for o in outs])
    assert np.abs(np.diff(qs, axis=0)).max() < 0.05, "no jump from the walking targets to the default pose"
    np.testing.assert_allclose(outs[-1].targets.q, SPEC.default_joint_pos, atol=1e-9)


def test_gamepad_chords_drive_the_state_machine(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.06)
    run(ctrl, 0.06, 0.1, keys=STAND_UP_KEYS)
    assert ctrl.state is PolicyState.STAND_UP
    run(ctrl, 0.1, 1.2)
    run(ctrl, 1.2, 1.24, keys=WALK_KEYS)
    assert ctrl.state is PolicyState.WALK
    out = run(ctrl, 1.24, 1.3, keys=ESTOP_KEYS)[-1]
    assert out.state is PolicyState.DAMP and out.targets.is_damping
    assert any("gamepad damp" in what for _, what in ctrl.events)


def test_safety_damp_latches_and_reset_needs_safety_ok(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    ctrl.on_safety_state(False, "base roll 0.9 rad", 1.2)
    out = ctrl.cycle(1.21)
    assert out.state is PolicyState.DAMP and out.targets.is_damping
    assert ctrl.fsm.damp_cause == "safety monitor: base roll 0.9 rad"
    assert not ctrl.request("reset", 1.3).accepted  # the monitor still says DAMP
    assert not ctrl.request("stand_up", 1.3).accepted
    ctrl.on_safety_state(True, "", 1.4)
    assert ctrl.state is PolicyState.DAMP, "an OK from the monitor does not clear the latch by itself"
    assert ctrl.request("reset", 1.5).accepted and ctrl.state is PolicyState.PASSIVE


def test_reset_without_any_safety_monitor_follows_the_config(go2_policy_path):
    strict = controller(go2_policy_path)
    strict.request("damp", 0.0)
    assert not strict.request("reset", 0.1).accepted
    lax = controller(go2_policy_path, reset_requires_safety_ok=False)
    lax.request("damp", 0.0)
    assert lax.request("reset", 0.1).accepted


def test_stale_lowstate_damps_a_stiff_robot_and_blocks_stand_up(go2_policy_path):
    ctrl = controller(go2_policy_path)
    assert not ctrl.request("stand_up", 0.0).accepted  # no state at all yet
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 0.5)
    out = ctrl.cycle(0.5 + 0.1)  # 100 ms without rt/lowstate
    assert out.state is PolicyState.DAMP and out.targets.is_damping
    assert "rt/lowstate" in ctrl.fsm.damp_cause


def test_back_from_its_own_stall_the_loop_holds_its_targets_until_a_fresh_state_then_walks_on(go2_policy_path):
    """A 110 ms stall of the whole host: the control loop, the robot's state stream and everyone else paused.
    The state waiting from before is no reason to damp, and no input for the network either."""
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    assert ctrl.request("walk", 1.2).accepted
    held = run(ctrl, 1.2, 1.5)[-1].targets.q
    back_s = 1.48 + 0.110
    ctrl.on_own_stall(0.110, back_s)
    out = ctrl.cycle(back_s)  # no state taken since the stall
    assert out.state is PolicyState.WALK and out.inference_s is None
    np.testing.assert_array_equal(out.targets.q, held)
    assert "stalled for 110 ms" in ctrl.events[-1][1]
    outs = run(ctrl, back_s + 0.02, back_s + 0.1)  # the state flows again
    assert all(o.state is PolicyState.WALK and o.inference_s is not None for o in outs)
    out = ctrl.cycle(back_s + 0.1 + ctrl.config.state_timeout_s + 0.01)
    assert out.state is PolicyState.DAMP, "after its return, a state stream that stays away still damps"


def test_non_finite_policy_output_damps(tmp_path):
    contract = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    path = write_linear_policy(tmp_path / "nan.onnx", contract, bias=np.full(12, np.nan))
    ctrl = controller(path)
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    ctrl.request("walk", 1.2)
    out = run(ctrl, 1.2, 1.22)[-1]
    assert out.state is PolicyState.DAMP and out.targets.is_damping
    assert np.all(np.isfinite(out.targets.q))
    assert ctrl.fsm.damp_cause == "policy output is not finite"


def test_policy_needing_odometry_walks_only_with_fresh_estimates(tmp_path):
    ctrl = controller(write_test_policy(tmp_path / "v.onnx", with_base_lin_vel=True))
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    refused = ctrl.request("walk", 1.2)
    assert not refused.accepted and "estimator" in refused.message
    ctrl.on_base_lin_vel(np.array([0.1, 0.0, 0.0]), 1.2)
    assert ctrl.request("walk", 1.21).accepted
    assert run(ctrl, 1.22, 1.26)[-1].state is PolicyState.WALK
    out = run(ctrl, 1.4, 1.42)[-1]  # odometry 200 ms old
    assert out.state is PolicyState.DAMP and "estimator" in ctrl.fsm.damp_cause



def test_odometry_the_policy_cannot_use_is_not_taken_and_the_refusal_or_the_damp_says_why(tmp_path):
    ctrl = controller(write_test_policy(tmp_path / "v.onnx", with_base_lin_vel=True))
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    ctrl.on_base_lin_vel(np.array([np.nan, 0.0, 0.0]), 1.2)
    refused = ctrl.request("walk", 1.2)
    assert not refused.accepted and "not finite" in refused.message
    ctrl.on_base_lin_vel(np.array([500.0, 0.0, 0.0]), 1.2)  # mm/s, say
    refused = ctrl.request("walk", 1.2)
    assert not refused.accepted and "beyond 5.0 m/s" in refused.message
    ctrl.on_base_lin_vel(np.array([0.1, 0.0, 0.0]), 1.2)
    assert ctrl.request("walk", 1.21).accepted
    assert run(ctrl, 1.22, 1.26)[-1].state is PolicyState.WALK
    for t in np.arange(1.26, 1.42, 0.02):  # the estimator diverges: its velocities are no longer taken
        ctrl.on_base_lin_vel(np.array([np.inf, 0.0, 0.0]), t)
    out = run(ctrl, 1.4, 1.42)[-1]
    assert out.state is PolicyState.DAMP and "estimator" in ctrl.fsm.damp_cause and "not finite" in ctrl.fsm.damp_cause

def test_unknown_request_is_an_error(go2_policy_path):
    with pytest.raises(ValueError, match="unknown request"):
        controller(go2_policy_path).request("fly", 0.0)


def test_a_damp_request_between_policy_steps_is_pending_until_the_next_cycle(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.1)
    ctrl.request("stand_up", 0.1)
    run(ctrl, 0.1, 1.2)
    assert not ctrl.damping_pending(), "nothing to switch while standing"
    ctrl.on_safety_state(False, "e-stop", 1.205)  # arrives between two control periods
    assert ctrl.damping_pending(), "the node must switch its stream to damping now, not at the next step"
    out = ctrl.cycle(1.205)
    assert out.targets.is_damping and not ctrl.damping_pending()
