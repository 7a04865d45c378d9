"""The policy node's decisions on its inputs, without rclpy: what it refuses, what it damps on, what it adapts to."""

import dataclasses

import numpy as np
import pytest
from policy_files import lowstate

from surrogait_core.inputs.preflight import PreflightCapture, PreflightLimits, PreflightReport, run_preflight
from surrogait_core.inputs.sample_clock import CLOCK_FROZEN
from surrogait_core.policy.input_guard import LOWSTATE_CRC, InputGuardConfig
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_controller import ControllerConfig, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.policy.policy_runner import PolicyRunner

LYING = np.array([0.0, 1.36, -2.65] * 4)
RNG = np.random.default_rng(7)


def controller(path, **config) -> PolicyController:
    return PolicyController(PolicyRunner(OnnxPolicy(path, robot="go2")),
                            ControllerConfig(stand_up_duration_s=0.2, **config))


def live(t, joint_pos=None, **changes):
    """A live robot's state at `t`: its tick, a noisy gyro."""
    return dataclasses.replace(lowstate(joint_pos=joint_pos), tick_ms=int(round(t * 1000)),
                               gyro_b=RNG.normal(0.0, 0.01, 3), **changes)


def run(ctrl, t0, t1, received=10, crc_ok=True, make=live, **kw):
    """Cycles at 50 Hz, each taking the newest of `received` samples of a 500 Hz stream (10 a cycle)."""
    outs = []
    for t in np.arange(t0, t1, 0.02):
        ctrl.on_lowstate(make(t, **kw), t, received, crc_ok)
        outs.append(ctrl.cycle(t))
    return outs


def walking(ctrl, t=0.0):
    run(ctrl, t, t + 0.1, joint_pos=LYING)
    assert ctrl.request("stand_up", t + 0.1).accepted
    run(ctrl, t + 0.1, t + 0.5)
    assert ctrl.request("walk", t + 0.5).accepted
    run(ctrl, t + 0.5, t + 1.5)
    assert ctrl.state is PolicyState.WALK
    return t + 1.5


def test_samples_failing_their_crc_are_not_used_and_stand_up_says_why(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.5, crc_ok=False, joint_pos=LYING)
    result = ctrl.request("stand_up", 0.5)
    assert not result.accepted
    assert "fail their CRC" in result.message and "allow_lowstate_without_crc" in result.message
    assert ctrl.latest_state is None, "no failing sample was taken as the robot's state"
    assert LOWSTATE_CRC in ctrl.input_report(0.5)[0]


def test_allowed_for_a_simulator_without_crc_the_robot_stands(go2_policy_path):
    ctrl = controller(go2_policy_path, inputs=InputGuardConfig(allow_without_crc=True))
    run(ctrl, 0.0, 0.5, crc_ok=False, joint_pos=LYING)
    assert ctrl.request("stand_up", 0.5).accepted


def test_a_stream_below_what_the_contract_needs_refuses_and_damps(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 1.5, received=1, joint_pos=LYING)  # one sample per control period: 50 Hz
    refused = ctrl.request("stand_up", 1.5)
    assert not refused.accepted and "lowstate_rate_low" not in refused.message and "50 Hz" in refused.message
    ctrl = controller(go2_policy_path)
    t = walking(ctrl)
    outs = run(ctrl, t, t + 2.5, received=1)  # judged over whole one-second windows: within 2 s
    assert outs[-1].state is PolicyState.DAMP and "lowstate_rate_low" in ctrl.fsm.damp_cause


def test_a_200_hz_stream_is_enough(go2_policy_path):
    ctrl = controller(go2_policy_path)
    t = walking(ctrl)
    outs = run(ctrl, t, t + 2.5, received=4)  # 4 samples per 20 ms: 200 Hz
    assert outs[-1].state is PolicyState.WALK


def test_a_bad_imu_refuses_stand_up_and_damps_a_walking_robot(go2_policy_path):
    ctrl = controller(go2_policy_path)
    run(ctrl, 0.0, 0.3, joint_pos=LYING, quat_wxyz=np.zeros(4))
    refused = ctrl.request("stand_up", 0.3)
    assert not refused.accepted and "quaternion" in refused.message
    ctrl = controller(go2_policy_path)
    t = walking(ctrl)
    outs = run(ctrl, t, t + 1.5, accel_b=np.zeros(3))  # the accelerometer dies
    assert outs[-1].state is PolicyState.DAMP and "imu_gravity_norm" in ctrl.fsm.damp_cause


def test_a_frozen_tick_moves_the_gait_clock_to_this_computers_clock_and_the_robot_walks_on(go2_policy_path):
    ctrl = controller(go2_policy_path)
    t = walking(ctrl)
    phase0 = ctrl._gait_phase()
    outs = run(ctrl, t, t + 1.0, make=lambda s, **kw: live(t, **kw))  # every sample now carries the same tick
    assert all(o.state is PolicyState.WALK for o in outs)
    assert CLOCK_FROZEN in ctrl.input_report(t + 1.0)[0]
    assert ctrl._gait_phase() - phase0 == pytest.approx(1.0 / ctrl.runner.gait.period_s, abs=0.1), \
        "the gait clock kept running"
    assert any("stopped advancing" in what for _, what in ctrl.events)


def test_a_stream_that_repeats_one_sample_while_walking_is_a_frozen_observation(go2_policy_path):
    ctrl = controller(go2_policy_path)
    t = walking(ctrl)
    frozen = live(t)
    outs = run(ctrl, t, t + 0.5, make=lambda s: dataclasses.replace(frozen, tick_ms=int(round(s * 1000))))
    assert outs[-1].state is PolicyState.DAMP
    assert "observation_frozen" in ctrl.fsm.damp_cause and "10 steps" in ctrl.fsm.damp_cause


def report(passed: bool) -> PreflightReport:
    return run_preflight(PreflightCapture(0, 1.0, None, None, 0, 0, None, None, None, None, None, None, None, None,
                                          None), PreflightLimits()) if not passed else PreflightReport(())


def test_stand_up_needs_a_passed_preflight_once_each(go2_policy_path):
    ctrl = controller(go2_policy_path, preflight_required=True, reset_requires_safety_ok=False)
    run(ctrl, 0.0, 0.2, joint_pos=LYING)
    first = ctrl.request("stand_up", 0.19, source="gamepad")
    assert not first.accepted and "no pre-flight yet" in first.message and ctrl.preflight_wanted
    ctrl.on_preflight(report(False), 0.19)
    failed = ctrl.request("stand_up", 0.19)
    assert not failed.accepted and "pre-flight failed: lowstate" in failed.message and not ctrl.preflight_wanted
    ctrl.on_preflight(report(True), 0.19)
    assert ctrl.request("stand_up", 0.19).accepted
    run(ctrl, 0.2, 0.6)
    ctrl.request("damp", 0.59)
    ctrl.request("reset", 0.59)
    assert ctrl.state is PolicyState.PASSIVE
    run(ctrl, 0.6, 0.7, joint_pos=LYING)
    assert not ctrl.request("stand_up", 0.69).accepted, "a pre-flight clears one stand-up"


def test_the_dry_run_scales_every_stiff_gain_and_compares_commanded_with_measured(go2_policy_path):
    ctrl = controller(go2_policy_path, dry_run_gain_fraction=0.2)
    t = walking(ctrl)
    out = run(ctrl, t, t + 0.2)[-1]
    np.testing.assert_allclose(out.targets.kp, 0.2 * np.asarray(ctrl.runner.contract.kp))
    np.testing.assert_allclose(out.targets.kd, 0.2 * np.asarray(ctrl.runner.contract.kd))
    assert ctrl.dry_run.steps > 10 and "commanded vs measured" in ctrl.dry_run.report()
    with pytest.raises(ValueError, match="dry_run_gain_fraction"):
        ControllerConfig(dry_run_gain_fraction=1.0)
