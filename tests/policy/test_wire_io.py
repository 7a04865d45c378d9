"""The policy's own rt/lowcmd writer and rt/lowstate reader speak the SDK's protocol over real DDS.

The node writes LowCmds from a byte image and decodes LowStates from their bytes (both to save
CPU); an unmodified unitree_sdk2py subscriber and publisher are the other ends here.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DOMAIN = 28


@pytest.mark.rehearsal
def test_lowcmds_reach_an_sdk_subscriber_and_the_newest_lowstate_is_read():
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    out = subprocess.run([sys.executable, str(Path(__file__).parent / "wire_roundtrip.py"), str(DOMAIN)],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])

    cmd = result["command"]
    assert cmd is not None, "no LowCmd reached the SDK subscriber"
    assert cmd["crc_ok"], "the SDK's CRC check accepts the LowCmd"
    np.testing.assert_allclose(cmd["q"], np.arange(12) * 0.1, rtol=1e-6)
    np.testing.assert_allclose(cmd["kp"], np.arange(12) * 2.0, rtol=1e-6)
    assert cmd["mode"] == [1] * 12

    state = result["state"]
    assert state is not None, "no LowState was read"
    assert state["tick_ms"] == 1002, "of two samples written before a take, the newer one is read"
    assert state["foot_force"] == [10, 20, 30, 1002]
    np.testing.assert_allclose(state["joint_pos"], np.arange(12) * 0.01, rtol=1e-6)
    assert 0.0 <= state["age_s"] < 5.0, "the sample carries the publisher's source time"
    assert not result["taken_again"], "a sample is handed over once"
