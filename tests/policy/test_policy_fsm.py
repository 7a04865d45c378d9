import numpy as np

from surrogait_core.policy.policy_fsm import PolicyFsm, PolicyState, StandUpTrajectory


def test_full_cycle_passive_to_walk_and_back():
    fsm = PolicyFsm(stand_up_duration_s=2.0)
    assert fsm.state is PolicyState.PASSIVE
    assert fsm.stand_up(now_s=10.0).accepted
    assert fsm.update(11.0) is PolicyState.STAND_UP
    assert fsm.stand_up_fraction(11.0) == 0.5
    assert fsm.update(12.0) is PolicyState.READY
    assert fsm.walk().accepted and fsm.state is PolicyState.WALK
    assert fsm.stop_walk().accepted and fsm.state is PolicyState.READY


def test_out_of_order_requests_are_refused_with_a_reason():
    fsm = PolicyFsm()
    result = fsm.walk()
    assert not result.accepted and "PASSIVE" in result.message and fsm.state is PolicyState.PASSIVE
    assert not fsm.stop_walk().accepted
    assert not fsm.reset(safety_ok=True).accepted
    fsm.stand_up(0.0)
    assert not fsm.walk().accepted, "walking must wait until the stand-up is finished"
    assert not fsm.stand_up(0.5).accepted


def test_damp_is_latched_and_keeps_the_first_cause():
    fsm = PolicyFsm()
    fsm.stand_up(0.0)
    fsm.update(5.0)
    fsm.walk()
    fsm.damp("safety monitor: roll")
    fsm.damp("operator")
    assert fsm.state is PolicyState.DAMP and fsm.damp_cause == "safety monitor: roll"
    for request in (lambda: fsm.stand_up(6.0), fsm.walk, fsm.stop_walk):
        assert not request().accepted
    assert fsm.update(100.0) is PolicyState.DAMP


def test_reset_only_when_safety_is_ok_and_only_to_passive():
    fsm = PolicyFsm()
    fsm.damp("test")
    refused = fsm.reset(safety_ok=False)
    assert not refused.accepted and "safety" in refused.message and fsm.state is PolicyState.DAMP
    assert fsm.reset(safety_ok=True).accepted
    assert fsm.state is PolicyState.PASSIVE and fsm.damp_cause is None


def test_stand_up_trajectory_is_smooth_and_ends_at_the_goal():
    start, goal = np.zeros(12), np.linspace(-1.0, 1.0, 12)
    traj = StandUpTrajectory(start, goal)
    np.testing.assert_allclose(traj.at(0.0), start)
    np.testing.assert_allclose(traj.at(1.0), goal)
    np.testing.assert_allclose(traj.at(7.0), goal)
    s = np.linspace(0.0, 1.0, 201)
    path = np.array([traj.at(x) for x in s])
    steps = np.diff(path, axis=0)
    # monotone towards the goal, zero speed at both ends, no step larger than the mid-course one
    assert np.all(steps * np.sign(goal - start) >= -1e-12)
    assert np.abs(steps[0]).max() < 1e-4 and np.abs(steps[-1]).max() < 1e-4
    assert np.abs(steps).max() <= np.abs(steps[100]).max() + 1e-12
