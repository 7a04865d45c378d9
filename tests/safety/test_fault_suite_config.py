"""The fault suite rehearses the configuration the robot runs: its nodes read the same parameters files as the demo's.

Each node of a rehearsal starts with its package's parameters file (the one the robot's launch file gives it), and
a session sets over it only what puts the node on the rehearsal's wire and says where it records
(`harness.nodes.SESSION_PARAMS`). These tests build the parameters files the fault suite and the demo would start
their nodes with (no process is started); tests/safety/test_safety_rehearsal.py checks the files the suite's
running nodes were actually given.
"""

from pathlib import Path

import pytest
import yaml
from fault_suite_run import beyond_the_session, package_params

from surrogait_rehearsal import demo
from surrogait_rehearsal.harness.fault_suite.run import scenario_config
from surrogait_rehearsal.harness.nodes import SESSION_PARAMS, shipped_policy_path, write_params
from surrogait_rehearsal.harness.session import Session, SessionConfig


def parameters_files(config: SessionConfig, folder: Path) -> dict[str, dict]:
    """Each node's parameters as the session would write its file: {node: {name: value}}."""
    session = Session(config)
    written = {}
    for name, params in session.node_params().items():
        path = write_params(name, params, folder / f"{name}.yaml", package_params=config.params_files)
        written[name] = yaml.safe_load(path.read_text())[name]["ros__parameters"]
    return written


@pytest.mark.parametrize("robot", ["go2", "go1"])
def test_the_fault_suite_gives_every_node_its_packages_file_and_only_the_sessions_link_policy_and_paths(
        tmp_path, robot):
    config = scenario_config(tmp_path / "suite", domain=45, policy_path=shipped_policy_path(robot), robot=robot)
    assert config.params_files, "the suite's nodes read their packages' parameters files"
    suite = parameters_files(config, tmp_path / "suite_config")
    assert set(suite) == {f"{robot}_sim", "estimator_node", "safety_monitor", "policy_node", "session_recorder"}, \
        "the robot's whole stack, recorded"
    for name, params in suite.items():
        assert beyond_the_session(name, params) == {}, name
        assert set(package_params(name)) <= set(params), f"{name}: every parameter of its package's file is given"


@pytest.mark.parametrize("robot", ["go2", "go1"])
def test_the_fault_suite_and_the_demo_run_the_same_node_configuration(tmp_path, robot):
    policy = shipped_policy_path(robot)
    suite = parameters_files(scenario_config(tmp_path / "suite", domain=45, policy_path=policy, robot=robot),
                             tmp_path / "suite_config")
    args = demo.parse_args(["--robot", robot, "--domain", "46"])
    shown = parameters_files(demo.session_config(args, tmp_path / "demo", policy), tmp_path / "demo_config")
    assert set(shown) == set(suite)
    for name in suite:
        differing = {k for k in suite[name].keys() | shown[name].keys()
                     if suite[name].get(k) != shown[name].get(k)}
        # Only the link (the demo's domain and ports), the record paths, and the demo's own choices for the
        # simulator, which by default are the package's motor model and the simulator's flat ground.
        choices = {k: shown[name][k] for k in differing - SESSION_PARAMS}
        assert choices.items() <= {("motor_model", "driver"), ("terrain", "flat")}, (name, choices)


def test_a_session_sets_nothing_over_a_packages_file_but_the_link_policy_and_record_paths(tmp_path):
    for robot, simulator in (("go2", "mujoco"), ("go1", "mujoco"), ("go2", "gazebo-standin")):
        config = SessionConfig(tmp_path / f"{robot}_{simulator}", robot=robot, simulator=simulator, video=True,
                               timing_log=True)
        for name, params in Session(config).node_params().items():
            assert set(params) <= SESSION_PARAMS, (robot, simulator, name, set(params) - SESSION_PARAMS)
