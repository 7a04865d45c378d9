"""Rehearsal: the policy node switches gait on its Trigger services while the simulated Go2 walks.

Real processes over real DDS (go2_sim, policy_node, safety_monitor), as the other rehearsal tests.
The policy is the shipped trot network behind a multi-gait contract of two trots — its own, and one
with a 0.45 s period — whose gait inputs it ignores (a graph that slices them off): the test is of the
switch (services, READY/WALK gating, the clock's phase running on, the published gait), not of a
trained multi-gait policy (bench/results/skills.* judges those).
"""

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from surrogait_core import interfaces
from surrogait_core.policy.contract import ObsTerm, read_contract, write_contract
from surrogait_rehearsal.harness.nodes import shipped_policy_path
from surrogait_rehearsal.harness.operator import Segment, SessionError
from surrogait_rehearsal.harness.session import Session, SessionConfig
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
    quick = interfaces.SRV_GAIT_PREFIX + "trot_quick"
    config = SessionConfig(tmp_path, domain=DOMAIN, policy=policy, nodes=("safety_monitor", "policy_node"),
                           sim_log=False, operator_name="gait_switch_test")
    with Session(config) as session:
        try:
            session.start()
            operator = session.operator
            operator.wait_for("the policy node", lambda: operator.policy_state == "PASSIVE", 60.0,
                              abort_on=session.why_dead)
            refused = operator.call(quick)
            session.stand_up()
            in_ready = operator.call(quick)
            session.walk(0.5)
            session.run_segments([Segment("walk 0.5 m/s", 2.0, (0.5, 0.0, 0.0))])
            while_walking = operator.call(interfaces.SRV_GAIT_PREFIX + "trot")
            session.run_segments([Segment("walk 0.5 m/s, trot", 2.0, (0.5, 0.0, 0.0))])
            session.finish()
        except SessionError as e:
            pytest.fail(f"the rehearsal session failed: {e}\n{session.process_logs()}")
        gaits = [g for _, g in session.operator.gaits]
    fault_log = session.files.fault_log
    assert not refused[0] and "PASSIVE" in refused[1], refused
    assert in_ready[0] and while_walking[0], (in_ready, while_walking)
    assert gaits == ["trot", "trot_quick", "trot"], f"the published gait: {gaits}"
    recorded = load_session(session.files.session)
    assert [g for _, g in recorded["gaits"]] == gaits, "the report gets the gait changes"
    assert not fall_metrics(recorded)["fell"]
    assert not [e for e in read_fault_log(fault_log) if e["event"] == "fault"]
