"""estimator_node refuses malformed parameters with a clear message and exit 2, before it reads any sample."""

import subprocess

import pytest

from surrogait_rehearsal.harness.processes import child_env, node_command

BESIDE_REHEARSALS = "each node exits at start-up, on a DDS domain of this file's own"
DOMAIN = 94


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"network_interface": "nosuch0"}, "network_interface 'nosuch0' does not exist"),
        ({"contact_force_on": 5.0, "contact_force_off": 10.0}, "force_off < force_on"),
        ({"kin_velocity_noise": 0.0}, "must be > 0"),
        ({"robot": "go1", "udp_lowstate_port": 0}, "udp_lowstate_port 0 must be in 1..65535"),
    ],
    ids=["wrong-interface", "contact-thresholds", "noise", "go1"],
)
def test_bad_parameters_exit_with_a_clear_error(tmp_path, params, expected):
    import yaml

    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump({"estimator_node": {"ros__parameters": params}}))
    out = subprocess.run([*node_command("estimator_node"), "--ros-args", "--params-file", str(f)],
                         capture_output=True, text=True, timeout=30, env=child_env(DOMAIN))
    assert out.returncode == 2
    assert expected in out.stderr
