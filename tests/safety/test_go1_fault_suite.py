"""The Go1's fault subset in rehearsal: the safety monitor as the gateway of the UDP link.

go1_sim (the Go1's end of the unitree_legged_sdk UDP link), safety_monitor (the gateway: the only
socket to the robot), estimator_node (LowState forwarded by the gateway) and policy_node (the shipped Go1
policy, the SDK's UDP class) run as separate processes on 127.0.0.1 ports of ROS domain 43, each with its
package's parameters file; bench/safety.py stands the robot up, walks
it, injects the fault and judges it from the simulator's tap: a copy of every LowCmd the
simulated robot accepted and every LowState it sent. The whole subset is `bench/safety.py --robot go1`.
"""

from pathlib import Path

import pytest
from fault_suite_run import check_started_with_package_files, run_fault_suite

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = 43
SCENARIOS = ("kill9_policy", "command_beyond_limit", "estop_gamepad")


@pytest.fixture(scope="module")
def suite_results(tmp_path_factory):
    policy = ROOT / "ros2_ws" / "src" / "surrogait_bringup" / "policies" / "go1_trot.onnx"
    if not policy.is_file():
        pytest.fail(f"the shipped Go1 policy {policy} is missing")
    args = ["--robot", "go1", "--domain", str(DOMAIN), "--phase", "walk", "--walk-s", "1", "--no-baseline",
            "--scenarios", *SCENARIOS]
    return run_fault_suite(tmp_path_factory.mktemp("go1_safety_suite"), args, timeout_s=180)


@pytest.mark.rehearsal
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_fault_leads_to_damping_at_the_robot(suite_results, scenario):
    results, log = suite_results
    r = results[scenario]
    assert "error" not in r, f"{scenario}: {r.get('error')}\n{log[-3000:]}"
    # within 60 ms, or within it of the stack's running again where the host paused it (the monitor logged its own
    # stall, or nothing at all reached the wire): evaluation.py says how, and both are reported
    assert r["latency_ok"] or r["latency_ok_after_host_pause"], \
        f"{scenario}: damping reached the robot {r['latency_s']} s after the fault: {r}"
    assert r["limit_violations"] == 0, r["violation_examples"]
    assert r["lying_still"], f"{scenario}: not lying still at the end: {r}"
    assert r["logged"] and r["cause_ok"], f"{scenario}: caught as {r.get('first_logged_cause')}: {r}"


@pytest.mark.rehearsal
def test_a_command_beyond_the_limit_never_reaches_the_robot(suite_results):
    results, _ = suite_results
    r = results["command_beyond_limit"]
    # On the Go2's shared wire the rogue's first command reaches the motors; through the gateway none does.
    assert r["rogue_commands"] == 0, r
    assert r["who_damped"] == "monitor", r
    assert r["latency_s"] <= 0.01, f"the gateway replaces the command as it passes: {r['latency_s']} s"


@pytest.mark.rehearsal
def test_a_dead_policy_node_is_damped_by_the_monitor(suite_results):
    results, _ = suite_results
    r = results["kill9_policy"]
    assert r["first_cause"] == "policy_silent" and r["who_damped"] == "monitor", r
    assert r["stiff_commands_after_first_damping"] == 0, r


@pytest.mark.rehearsal
def test_the_suite_ran_the_nodes_with_their_packages_parameters_files(suite_results):
    results, _ = suite_results
    for r in results.values():
        check_started_with_package_files(Path(r["workdir"]), ("go1_sim", "estimator_node", "safety_monitor",
                                                              "policy_node"))
