"""`make test` splits the suite in two (scripts/run_tests.py): the tests that start processes or open a wire run
one at a time; the pure computations run beside them. A file on the wrong side either collides with a rehearsal
(its DDS domain, the Go1's fixed UDP ports, its real time) or lengthens the serial half for nothing."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("run_tests", ROOT / "scripts" / "run_tests.py")
run_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_tests)

STARTS_PROCESSES = (
    "tests/policy/test_rehearsal_walk.py",  # the rehearsal Session
    "tests/safety/test_safety_rehearsal.py",  # the fault suite as its own process
    "tests/safety/test_go1_fault_suite.py",
    "tests/demo/test_demo_quick.py",  # the demo as a subprocess
    "tests/policy/test_policy_node_ros.py",  # rclpy
    "tests/core/test_go1_wire.py",  # the Go1 SDK's UDP
    "tests/launch/test_launch_files.py",  # colcon and the installed nodes
)
PURE = (
    "tests/estimator/test_estimator_synthetic.py",  # a minute of synthetic standing, no node
    "tests/safety/test_safety_rules.py",
    "tests/policy/test_policy_fsm.py",
    "tests/rehearsal_sim/test_sim_motor_model.py",
    "tests/training/test_gait_reference.py",
)
BESIDE = (  # they start processes, but need no real time and hold nothing a rehearsal uses
    "tests/safety/test_safety_monitor_node_params.py",  # the node started with bad parameters
    "tests/policy/test_policy_node_bad_inputs.py",
    "tests/estimator/test_estimator_node_params.py",
    "tests/rehearsal_sim/test_sim_process_params.py",
    "tests/training/test_sweep.py",  # Ray workers killed and restarted
    "tests/recorder/test_udp_wire_tap.py",  # UDP on an ephemeral port
)


def test_the_tests_that_start_processes_or_open_a_wire_run_in_the_serial_half():
    processes, others = run_tests.halves()
    assert set(STARTS_PROCESSES) <= set(processes), set(STARTS_PROCESSES) - set(processes)


def test_the_pure_computations_in_the_node_folders_run_beside_them():
    processes, others = run_tests.halves()
    assert set(PURE) <= set(others), set(PURE) - set(others)
    every_file = list(ROOT.glob("tests/**/test_*.py"))
    own = run_tests.own_target_files()
    assert not set(processes) & set(others) and len(processes) + len(others) + len(own) == len(every_file)


GAZEBO = {"tests/launch/test_gazebo_launch.py", *(f"tests/rehearsal_sim/test_gazebo_bridge_{name}.py"
                                                  for name in ("cdr", "demo", "process", "rate", "walk"))}


@pytest.mark.parametrize(("target", "files"), [
    ("mjx", {"tests/training/test_mjx_backend.py", "tests/training/test_device_env.py"}),
    ("gazebo", GAZEBO),
])
def test_a_target_of_its_own_holds_its_files_in_neither_half_and_ci_runs_it(target, files):
    processes, others = run_tests.halves()
    assert set(run_tests.own_target_files(target)) == files and not files & (set(processes) | set(others))
    assert f"scripts/run_tests.py --target {target}" in (ROOT / "Makefile").read_text()
    assert f"make test-{target}" in (ROOT / ".ci" / "run").read_text()


def test_every_own_target_is_one_of_the_makefile_s():
    assert set(run_tests.own_target_files()) == set(run_tests.own_target_files("mjx")) | GAZEBO


def test_a_file_that_starts_processes_but_needs_no_real_time_says_so_and_runs_beside_them():
    processes, others = run_tests.halves()
    for name in BESIDE:
        assert run_tests.starts_processes(ROOT / name) and name in others, name


def test_the_files_beside_the_rehearsals_use_a_dds_domain_no_serial_file_uses_nor_each_other():
    """Beside the rehearsals and on two workers at once (run_tests.PURE_WORKERS): a domain each."""
    domains = {}
    for name in (*run_tests.halves()[0], *BESIDE):
        text = (ROOT / name).read_text()
        domains[name] = set(re.findall(r"(?:DOMAIN(?:_ID)?\s*=\s*|ROS_DOMAIN_ID=|--domain\", )\"?(\d+)", text))
    serial = set().union(*(domains[n] for n in run_tests.halves()[0]))
    for name in BESIDE:
        assert not domains[name] & serial, (name, domains[name] & serial)
        for other in BESIDE:
            assert other == name or not domains[name] & domains[other], (name, other, domains[name] & domains[other])
