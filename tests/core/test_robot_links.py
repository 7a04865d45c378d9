"""Each robot's link is data, in one place: the protocol its wire speaks, and whether the monitor is its gateway."""

import pytest

from surrogait_core.robot_links import DDS, ROBOT_LINKS, UDP, robot_link
from surrogait_core.robot_spec import ROBOTS, UnknownRobotError


def test_every_robot_with_a_description_has_a_link_and_the_links_say_how_they_carry_the_robot_state():
    assert set(ROBOT_LINKS) == set(ROBOTS)
    assert robot_link("go2").protocol == DDS and robot_link("go2").lowstate == "rt/lowstate"
    # a point-to-point UDP link has room for one peer of the robot: the safety monitor holds it (docs/go1.md)
    assert robot_link("go1").protocol == UDP and robot_link("go1").monitor_is_gateway
    assert not robot_link("go2").monitor_is_gateway


def test_an_unknown_robot_is_refused_naming_the_known_ones():
    with pytest.raises(UnknownRobotError, match="go2, go1"):
        robot_link("b1")


def test_the_rehearsal_and_the_fault_suite_know_every_robot():
    from surrogait_rehearsal.harness.fault_suite.injections import ROBOT_SCENARIOS, SCENARIOS
    from surrogait_rehearsal.harness.nodes import DEPLOYMENT_NODES, REHEARSAL_ROBOTS

    assert set(REHEARSAL_ROBOTS) == set(ROBOTS) == set(ROBOT_SCENARIOS)
    for name, robot in REHEARSAL_ROBOTS.items():
        assert {robot.sim_node, *DEPLOYMENT_NODES} <= set(robot.ready_lines), name
        assert {robot.sim_node, *DEPLOYMENT_NODES} <= set(robot.link(30)), name
        assert set(ROBOT_SCENARIOS[name]) <= set(SCENARIOS)
