"""The fault suite's scenario table and judging helpers (no processes started)."""

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety import default_thresholds
from surrogait_rehearsal.harness.fault_suite.evaluation import SILENCE_CAUSES, late_for_a_paused_host
from surrogait_rehearsal.harness.fault_suite.injections import SCENARIOS

ISSUE_FAULTS = {"kill9_policy", "sigstop_policy", "lowstate_stopped", "nan_policy_output", "command_beyond_limit",
                "push_tilt", "estop_topic", "estop_service", "estop_gamepad"}


def test_every_fault_of_the_issue_has_a_scenario_with_its_expected_cause():
    assert ISSUE_FAULTS <= set(SCENARIOS)
    for sc in SCENARIOS.values():
        assert sc.expected_causes, sc.name
        assert callable(sc.inject)
    assert SCENARIOS["nan_policy_output"].nan_policy


def test_silence_thresholds_are_the_monitors():
    th = default_thresholds(load_robot_spec("go2"))
    assert SILENCE_CAUSES == {"lowstate_stale": th.stale_state_s, "policy_silent": th.policy_silent_s(0.002)}


def test_a_late_damping_is_on_time_only_when_judged_from_a_paused_hosts_return():
    """CI once saw a kill -9 damped 134 ms after the fault and an e-stop 204 ms after: a paused host or a slow
    stack? A silence is on time one threshold after the monitor is back from its own logged stall; another
    fault within the target less the stretch in which nothing at all reached the wire."""
    t0, silence = 10.0, 0.040
    assert late_for_a_paused_host(0.134, t0 + 0.134, silence, t0, t0 + 0.095, 0.134)
    assert not late_for_a_paused_host(0.134, t0 + 0.134, silence, t0, None, 0.134), "no stall logged: too slow"
    assert not late_for_a_paused_host(0.134, t0 + 0.134, silence, t0, t0 + 0.020, 0.134), "the monitor was back"
    assert late_for_a_paused_host(0.204, t0 + 0.204, None, t0, None, 0.150), "the wire went quiet for 150 ms"
    assert not late_for_a_paused_host(0.204, t0 + 0.204, None, t0, None, 0.010), "commands flowed: a slow reaction"
    assert not late_for_a_paused_host(0.043, t0 + 0.043, silence, t0, None, 0.043), "on time: nothing to explain"
