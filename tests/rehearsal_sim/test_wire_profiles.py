"""Every Unitree-protocol wire with the real processes: the stack walks on it, or refuses it and says why.

The MuJoCo Go2 writes rt/lowstate as another simulator or a faulty robot would (`wire_profile`); the estimator,
the safety monitor and the policy node (shipped policy) run unchanged, the operator stands the robot up (the
pre-flight first) and walks it (surrogait_rehearsal.harness.wire_rehearsal). The default `go2` wire is the walk test's
(tests/policy/test_rehearsal_walk.py). bench/wire_profiles.py runs every profile alone.
"""

import json
import re

import numpy as np
import pytest

from surrogait_core import interfaces
from surrogait_rehearsal.harness.operator import Segment
from surrogait_rehearsal.harness.wire_rehearsal import rehearse_profile
from surrogait_rehearsal.sim.wire_profile import RAW_COUNTS_PER_N

DOMAIN = 33
UNITREE_MUJOCO = "tickless,no_foot_force,lowstate_200hz,no_crc"  # its Python simulator's rt/lowstate


def statuses(outcome):
    return {name.split(":")[0]: (level, message, values) for name, (level, message, values) in outcome.statuses.items()}


@pytest.mark.rehearsal
def test_on_unitree_mujocos_wire_the_stack_walks_and_names_what_it_adapted_to(tmp_path):
    """tick 0, no foot force, 200 Hz, no CRC (allowed, as for a simulator): the gait clock runs on the host clock,
    contacts come from leg kinematics and the gait schedule, and the robot walks without a single safety fault."""
    outcome = rehearse_profile(tmp_path, domain=DOMAIN, profile=UNITREE_MUJOCO, allow_without_crc=True, log=print)
    assert outcome.walked, (outcome.error, outcome.refusals)
    assert not outcome.faults, outcome.faults
    assert not outcome.stood_still_in_walk and not outcome.fell, outcome.segments
    assert outcome.vx_rmse < 0.2
    named = {e["cause"] for e in outcome.input_events if e["event"] == "input"}
    assert {"lowstate_clock_frozen", "lowstate_crc", "foot_force_stuck"} <= named, outcome.input_events
    nodes = statuses(outcome)
    policy_level, policy_message, policy_values = nodes["policy_node"]
    assert policy_level == 1 and "lowstate_clock_frozen" in policy_message and policy_values["clock_source"] == "host"
    assert int(policy_values["lowstate_rate_hz"]) < 260, "the policy node saw the 200 Hz stream"
    _, estimator_message, estimator_values = nodes["estimator_node"]
    assert "leg kinematics" in estimator_message and estimator_values["clock_source"] == "host"
    assert int(estimator_values["rejected_time_not_advancing"]) < 100, "at most the 0.1 s before the fallback"


@pytest.mark.rehearsal
def test_raw_foot_force_is_refused_until_calibrated_on_the_robot_then_used(tmp_path):
    outcome = rehearse_profile(tmp_path, domain=DOMAIN, profile="raw_foot_force", log=print)
    assert outcome.refusals and "foot_sensors" in outcome.refusals[0] and "calibrate_feet_unloaded" in \
        outcome.refusals[0], outcome.refusals
    assert outcome.walked and not outcome.faults and not outcome.stood_still_in_walk, (outcome.error, outcome.faults)
    saved = json.loads(next((tmp_path / "foot_force_calibration").glob("go2-*.json")).read_text())
    gains = np.array(saved["newtons_per_count"])
    # Lying, the feet carry a few newtons that end up in the offset; the standing step's gain absorbs most of it.
    np.testing.assert_allclose(gains, 1.0 / RAW_COUNTS_PER_N, rtol=0.3)
    level, message, values = statuses(outcome)["estimator_node"]
    assert level == 0 and values["foot_force"] == "raw", (message, values["foot_force"])


@pytest.mark.rehearsal
def test_a_wire_without_crc_is_refused_by_default_and_no_motor_ever_stiffens(tmp_path):
    outcome = rehearse_profile(tmp_path, domain=DOMAIN, profile="no_crc", log=print)
    assert outcome.verdict == "refuses" and not outcome.entered_walk
    assert "fail their CRC" in outcome.refusals[-1] and "allow_lowstate_without_crc" in outcome.refusals[-1]
    assert not outcome.faults
    estimator_log = (tmp_path / "logs" / "estimator_node.log").read_text()
    assert re.search(r"'crc': [1-9]", estimator_log), "the estimator refused the samples too"
    with np.load(tmp_path / "sim_log.npz") as log:
        assert not np.any(log["cmd_kp"] > 0.0), "the policy node never commanded a stiff motor"  # (NaN: no LowCmd yet)


@pytest.mark.rehearsal
def test_the_suspended_dry_run_moves_the_legs_gently_and_reports_commanded_against_measured(tmp_path):
    """The robot hung in a harness, gains at a fifth: the pre-flight (alone, then before the stand-up) skips the
    folded envelope, the legs follow the policy's targets in the air, and no safety rule fires."""
    walk = [Segment("walk 0.5 m/s in the air", 3.0, (0.5, 0.0, 0.0))]
    outcome = rehearse_profile(
        tmp_path, domain=DOMAIN, profile="go2", segments=walk,
        extra={"go2_sim": {"initial_pose": "suspended"}, "policy_node": {"dry_run_gain_fraction": 0.2}},
        ask=(interfaces.SRV_PRE_FLIGHT, interfaces.SRV_DRY_RUN_REPORT), log=print)
    assert outcome.walked and not outcome.faults, (outcome.error, outcome.faults)
    ok, report = outcome.answers[interfaces.SRV_DRY_RUN_REPORT]
    assert ok and "every joint moved with its target" in report, report
    preflight_ok, table = outcome.answers[interfaces.SRV_PRE_FLIGHT]
    assert "encoders" in table and "suspended dry run" in table
    with np.load(tmp_path / "sim_log.npz") as log:
        kp = log["cmd_kp"]
        assert np.nanmax(kp) == pytest.approx(0.2 * 40.0, rel=1e-3), "kp a fifth of the policy's"
        assert log["base_pos_w"][:, 2].min() > 0.5, "the robot stayed in the harness"
