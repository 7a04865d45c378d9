"""The fault suite's scenario table and judging helpers (no processes started)."""

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety import default_thresholds
from surrogait_rehearsal.harness.fault_suite.evaluation import SILENCE_CAUSES
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
