"""One policy, several gaits: the contract lists them, the policy sees the gait's parameters, and the
policy node switches gait in READY or WALK with the gait clock's phase running on."""

import dataclasses
import json

import numpy as np
import pytest
from policy_files import lowstate, write_linear_policy

from surrogait_core.policy.command_input import gait_chords
from surrogait_core.policy.contract import GaitSpec, MalformedContractError, PolicyContract
from surrogait_core.policy.gait import gait_features, leg_phases
from surrogait_core.policy.locomotion_contract import make_locomotion_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_controller import ControllerConfig, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire.go2_wire import Gamepad

SPEC = load_robot_spec("go2")
TROT = GaitSpec("trot", 0.5, 0.5, (0.0, 0.5, 0.5, 0.0))
PACE = GaitSpec("pace", 0.5, 0.5, (0.0, 0.5, 0.0, 0.5))
BOUND = GaitSpec("bound", 0.4, 0.45, (0.0, 0.0, 0.5, 0.5))


def multi_gait_contract() -> PolicyContract:
    return make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9, gaits=[TROT, PACE, BOUND])


@pytest.fixture
def multi_gait_policy(tmp_path):
    return write_linear_policy(tmp_path / "gaits.onnx", multi_gait_contract())


def test_the_contract_lists_the_gaits_and_round_trips_through_the_policy_file(multi_gait_policy):
    contract = OnnxPolicy(multi_gait_policy, robot="go2").contract
    assert contract.gait_names == ("trot", "pace", "bound") and contract.gait == TROT
    assert contract.term("gait_params").size == 6 and contract.term("gait_params").source == "gait"
    assert contract.gait_named("bound") == BOUND
    with pytest.raises(KeyError, match="trained for the gaits trot, pace, bound, not 'gallop'"):
        contract.gait_named("gallop")


def test_a_single_gait_policy_is_unchanged():
    contract = make_locomotion_contract(SPEC, soft_joint_range_fraction=0.9)
    assert contract.gaits == () and contract.gait_names == ("trot",)
    assert "gait_params" not in {t.name for t in contract.observation}
    raw = json.loads(contract.to_json())
    del raw["gaits"]  # a file exported before multi-gait policies existed
    assert PolicyContract.from_dict(raw) == contract


@pytest.mark.parametrize("change, message", [
    ({"gaits": ()}, "lists none"),
    ({"gait": PACE}, "must be the first"),
    ({"gaits": (TROT, TROT)}, "listed twice"),
    ({"gaits": (TROT, dataclasses.replace(PACE, duty_factor=1.0))}, "'pace' needs"),
])
def test_an_inconsistent_gait_list_is_refused(change, message):
    with pytest.raises(MalformedContractError, match=message):
        dataclasses.replace(multi_gait_contract(), **change).validate()


def test_the_runner_feeds_the_chosen_gaits_parameters_and_clock(multi_gait_policy):
    runner = PolicyRunner(OnnxPolicy(multi_gait_policy, robot="go2"))
    terms = runner.raw_terms(lowstate(), np.zeros(3), gait_time_s=0.1)
    np.testing.assert_allclose(terms["gait_params"], gait_features(TROT))
    runner.set_gait("bound")
    terms = runner.raw_terms(lowstate(), np.zeros(3), gait_time_s=0.1)
    np.testing.assert_allclose(terms["gait_params"], [0.4, 0.45, 0.0, 0.0, 0.5, 0.5])
    angle = 2 * np.pi * leg_phases(BOUND, 0.1)
    np.testing.assert_allclose(terms["gait_clock"], np.concatenate([np.sin(angle), np.cos(angle)]))
    with pytest.raises(KeyError):
        runner.set_gait("gallop")


def controller(path):
    return PolicyController(PolicyRunner(OnnxPolicy(path, robot="go2")), ControllerConfig(stand_up_duration_s=0.2))


GYRO_NOISE = np.random.default_rng(0)


def cycle(ctrl, t, keys=()):
    """One control cycle on a fresh state: the robot's tick, a gyro as noisy as a live IMU's."""
    state = dataclasses.replace(lowstate(), tick_ms=int(round(t * 1000)), gamepad=Gamepad(frozenset(keys), 0, 0, 0, 0),
                                gyro_b=GYRO_NOISE.normal(0.0, 0.01, 3))
    ctrl.on_lowstate(state, t)
    return ctrl.cycle(t)


def stand(ctrl):
    cycle(ctrl, 0.0)
    assert ctrl.request("stand_up", 0.0).accepted
    for t in np.arange(0.02, 0.5, 0.02):
        cycle(ctrl, t)
    assert ctrl.state is PolicyState.READY


def test_gaits_change_in_ready_or_walk_only(multi_gait_policy):
    ctrl = controller(multi_gait_policy)
    cycle(ctrl, 0.0)
    refused = ctrl.request("gait:pace", 0.0)
    assert not refused.accepted and "PASSIVE" in refused.message and ctrl.gait == "trot"
    stand(ctrl)
    assert ctrl.request("gait:pace", 0.5).accepted and ctrl.gait == "pace"
    unknown = ctrl.request("gait:gallop", 0.5)
    assert not unknown.accepted and "trot, pace, bound" in unknown.message and ctrl.gait == "pace"


def test_a_switch_while_walking_keeps_the_clock_phase(multi_gait_policy):
    ctrl = controller(multi_gait_policy)
    stand(ctrl)
    assert ctrl.request("walk", 0.5).accepted
    for t in np.arange(0.52, 0.9, 0.02):
        cycle(ctrl, t)
    before = ctrl._gait_phase()  # trot, at the last state's tick (0.88 s): 0.36 s walked / 0.5 s period
    assert before == pytest.approx(0.36 / 0.5)
    assert ctrl.request("gait:bound", 0.9).accepted
    assert ctrl._gait_phase() == pytest.approx(before), "no jump at the switch"
    cycle(ctrl, 1.0)
    # from the switch on the phase advances at the bound's rate (0.4 s period)
    assert ctrl._gait_phase() == pytest.approx(before + 0.12 / 0.4, abs=1e-6)
    assert ctrl.state is PolicyState.WALK


def test_the_gamepad_chords_select_gaits_in_the_contracts_order(multi_gait_policy):
    assert [name for name, _ in gait_chords(("trot", "pace", "bound"))] == ["gait:trot", "gait:pace", "gait:bound"]
    ctrl = controller(multi_gait_policy)
    stand(ctrl)
    cycle(ctrl, 0.6, keys=("R1", "down"))
    assert ctrl.gait == "bound"
    cycle(ctrl, 0.62, keys=("R1", "right"))  # (another chord from held R1: a new press)
    assert ctrl.gait == "pace"
