"""Rehearsal: the policy node switches gait on its Trigger services while the simulated Go2 walks.

Real processes over real DDS (go2_sim, policy_node, safety_monitor), as the other rehearsal tests.
The policy is the shipped trot network behind a multi-gait contract of two trots — its own, and one
with a 0.45 s period — whose gait inputs it ignores (a graph that slices them off): the test is of the
switch (services, READY/WALK gating, the clock's phase running on, the published gait), not of a
trained multi-gait policy (bench/results/skills.* judges those).
"""

import dataclasses
import time

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from surrogait_core import interfaces
from surrogait_core.policy.contract import ObsTerm, read_contract, write_contract
from surrogait_rehearsal.harness.operator import Operator, Segment, SessionError
from surrogait_rehearsal.harness.processes import (
    REHEARSAL_NICENESS,
    ProcessGroup,
    launch_rehearsal,
    link_params,
    shipped_policy_path,
)
from surrogait_rehearsal.report import fall_metrics, load_session, read_fault_log

DOMAIN = 26


def two_trot_policy(path):
    """The shipped trot policy as a multi-gait policy whose gaits are two trots (the inputs are ignored)."""
    src = shipped_policy_path()
    contract = read_contract(src)
    model = onnx.load(str(src))
    graph = model.graph
    obs = graph.input[0]
    inner = obs.name + "_trot"
    for node in graph.node:
        node.input[:] = [inner if i == obs.name else i for i in node.input]
    graph.initializer.extend([numpy_helper.from_array(np.array([0], np.int64), "keep_from"),
                              numpy_helper.from_array(np.array([contract.obs_size], np.int64), "keep_to"),
                              numpy_helper.from_array(np.array([1], np.int64), "keep_axis")])
    graph.node.insert(0, helper.make_node("Slice", [obs.name, "keep_from", "keep_to", "keep_axis"], [inner]))
    obs.type.tensor_type.shape.dim[1].dim_value = contract.obs_size + 6
    onnx.save(model, str(path))
    quick = dataclasses.replace(contract.gait, name="trot_quick", period_s=0.45)
    write_contract(path, dataclasses.replace(
        contract, observation=(*contract.observation, ObsTerm("gait_params", 6, scale=2.0, source="gait")),
        gaits=(contract.gait, quick)))
    return path


@pytest.mark.rehearsal
def test_gaits_switch_on_their_services_while_walking(tmp_path):
    policy = two_trot_policy(tmp_path / "two_trots.onnx")
    link = link_params("go2", DOMAIN)
    fault_log = tmp_path / "fault_log.jsonl"
    overrides = {"go2_sim": {**link["go2_sim"], "video_path": ""},
                 "safety_monitor": {**link["safety_monitor"], "policy_path": str(policy),
                                    "fault_log_path": str(fault_log)},
                 "policy_node": {**link["policy_node"], "policy_path": str(policy)}}
    quick = interfaces.SRV_GAIT_PREFIX + "trot_quick"
    operator = None
    with ProcessGroup(tmp_path / "logs", DOMAIN, config_dir=tmp_path, niceness=REHEARSAL_NICENESS) as group:
        try:
            operator = Operator(DOMAIN, log=print, name="gait_switch_test")
            try:
                launch_rehearsal(group, operator, overrides, log=print)
                operator.wait_for("the policy node", lambda: operator.policy_state == "PASSIVE", 60.0,
                                  abort_on=group.why_dead)
                refused = operator.call(quick)
                deadline = time.monotonic() + 20.0
                while not operator.call("stand_up")[0]:  # (refused until the node has a fresh LowState)
                    assert time.monotonic() < deadline, "the policy node never accepted stand_up"
                    time.sleep(0.3)
                operator.wait_for_state("READY", 15.0)
                in_ready = operator.call(quick)
                operator.call("walk", must_succeed=True)
                operator.run_segments([Segment("walk 0.5 m/s", 3.0, (0.5, 0.0, 0.0))], abort_on=group.why_dead)
                while_walking = operator.call(interfaces.SRV_GAIT_PREFIX + "trot")
                operator.run_segments([Segment("walk 0.5 m/s, trot", 3.0, (0.5, 0.0, 0.0))],
                                      abort_on=group.why_dead)
                operator.call("stop_walk", must_succeed=True)
                operator.wait_for_state("READY", 5.0)
                # Damp before the processes stop: a simulator that exits under stiff motors is a stale
                # robot state to the monitor, which (rightly) faults.
                operator.call("damp", must_succeed=True)
                operator.wait_for_state("DAMP", 5.0)
                time.sleep(0.3)
            except SessionError as e:
                logs = "\n".join(f"--- {c.name}\n{c.tail()}" for c in group.children)
                pytest.fail(f"the rehearsal session failed: {e}\n{logs}")
            operator.save(tmp_path / "session.npz")
            gaits = [g for _, g in operator.gaits]
        finally:
            if operator is not None:
                operator.close()
    assert not refused[0] and "PASSIVE" in refused[1], refused
    assert in_ready[0] and while_walking[0], (in_ready, while_walking)
    assert gaits == ["trot", "trot_quick", "trot"], f"the published gait: {gaits}"
    recorded = load_session(tmp_path / "session.npz")
    assert [g for _, g in recorded["gaits"]] == gaits, "the report gets the gait changes"
    assert not fall_metrics(recorded)["fell"]
    assert not [e for e in read_fault_log(fault_log) if e["event"] == "fault"]
