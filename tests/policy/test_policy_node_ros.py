"""The policy node's ROS shell, as a real process over real DDS: services, policy state, the
safety monitor's verdict, diagnostics, clean shutdown. No simulator: without rt/lowstate the
node must stay passive (damping) and refuse to stand up."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from policy_files import write_test_policy
from ros_operator import Operator

from surrogait_core import interfaces
from surrogait_policy.policy_node import SRV_RESET

DOMAIN = 27


@pytest.mark.rehearsal
def test_services_safety_state_and_diagnostics(tmp_path):
    policy = write_test_policy(tmp_path / "go2.onnx")
    params = tmp_path / "policy.yaml"
    params.write_text(f"policy_node:\n  ros__parameters:\n    policy_path: {policy}\n    dds_domain: {DOMAIN}\n"
                      "    diagnostics_period_s: 0.2\n")
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    node = subprocess.Popen([str(Path(sys.executable).parent / "policy_node"), "--ros-args", "--params-file",
                             str(params)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    op = Operator(DOMAIN)
    try:
        op.spin_until(lambda: op.states[-1:] == ["PASSIVE"])
        refused = op.call(interfaces.SRV_STAND_UP)
        assert not refused.success and "rt/lowstate" in refused.message
        assert not op.call(interfaces.SRV_WALK).success

        op.publish_safety("DAMP", "test fault")
        op.spin_until(lambda: op.states[-1:] == ["DAMP"])
        refused = op.call(SRV_RESET)
        assert not refused.success and "safety monitor" in refused.message
        op.publish_safety("OK")
        deadline = time.monotonic() + 10.0  # until the node has seen the OK (delivery is asynchronous)
        while not (accepted := op.call(SRV_RESET)).success and time.monotonic() < deadline:
            time.sleep(0.1)
        assert accepted.success, accepted.message
        op.spin_until(lambda: op.states[-1:] == ["PASSIVE"])

        assert op.call(interfaces.SRV_DAMP).success
        op.spin_until(lambda: op.states[-1:] == ["DAMP"])
        op.diagnostics.clear()  # judge a message published after this DAMP, not one queued since start-up
        op.spin_until(lambda: any(s.message.startswith("DAMP") for d in op.diagnostics for s in d.status))
        values = {kv.key: kv.value for kv in op.diagnostics[-1].status[0].values}
        assert {"state", "overruns", "period_p99_ms", "period_dev_p99_ms"} <= set(values)
        # the loop's period is the LowCmd stream's (500 Hz); the policy steps every tenth cycle (50 Hz)
        assert abs(float(values["period_p50_ms"]) - 2.0) < 0.5
        assert float(values["command_rate_hz"]) == 500.0 and float(values["policy_rate_hz"]) == 50.0
    finally:
        op.close()
        node.send_signal(signal.SIGINT)
        try:
            out, _ = node.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            node.kill()
            out, _ = node.communicate()
    assert node.returncode == 0, out
