"""go2_sim refuses malformed parameters with a clear message and exit 2, before it opens its wire."""

import subprocess

import pytest

from surrogait_rehearsal.harness.processes import ProcessGroup, child_env, node_command

BESIDE_REHEARSALS = "each simulator exits at start-up, on a DDS domain of this file's own"
DOMAIN = 96


@pytest.mark.parametrize(("params", "message"), [
    ({"network_interface": "nosuch0"}, "network_interface 'nosuch0' does not exist"),
    ({"dds_domain": "eleven"}, "dds_domain"),
    ({"lowstate_rate_hz": 50.0}, "lowstate_rate_hz"),
    ({"motor_model": "bridge"}, "motor_model 'bridge': expected one of driver, on_command"),
])
def test_bad_parameters_give_a_clear_error_and_a_nonzero_exit(tmp_path, params, message):
    group = ProcessGroup(tmp_path, DOMAIN)
    try:
        sim = group.start_node("go2_sim", {"dds_domain": DOMAIN, "realtime_priority": 0, **params})
        assert sim.process.wait(timeout=30) == 2
    finally:
        group.kill_all()
    assert "go2_sim: error:" in sim.log and message in sim.log


def test_a_params_file_that_is_not_yaml_is_refused(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("go2_sim: {ros__parameters: [dds_domain: 11\n")
    out = subprocess.run([*node_command("go2_sim"), "--ros-args", "--params-file", str(bad)], capture_output=True,
                         text=True, timeout=30, env=child_env(DOMAIN))
    assert out.returncode == 2
    assert "go2_sim: error:" in out.stderr and "broken.yaml" in out.stderr
