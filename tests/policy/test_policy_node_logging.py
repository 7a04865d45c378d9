"""The policy node logs its controller's events at two severities (DAMP events as warnings, the rest as
info) through rclpy's real logger, on ROS 2 Kilted and on Jazzy, whose rclpy refuses a second severity
from one call site (a node that logged an INFO event, then a DAMP, died of it). No ROS context needed."""

import types

from rclpy.logging import get_logger

from surrogait_policy.policy_node import PolicyNode


def test_info_and_damp_events_are_logged_without_error(capfd):
    events = [(0.0, "service stand_up: refused, no fresh rt/lowstate"), (1.0, "DAMP: safety monitor: test fault"),
              (2.0, "service reset: PASSIVE"), (3.0, "DAMP: service request")]
    shell = types.SimpleNamespace(controller=types.SimpleNamespace(events=events[:1]), _events_logged=0,
                                  get_logger=lambda: get_logger("policy_node_logging_test"))
    for logged in range(1, len(events) + 1):  # as the control thread signals them: one at a time
        shell.controller.events = events[:logged]
        PolicyNode._log_events(shell)
    assert shell._events_logged == len(events)
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "policy_node_logging_test" in line]
    assert [line.split("]")[0] for line in lines] == ["[INFO", "[WARN", "[INFO", "[WARN"], err
    assert all(what in line for (_, what), line in zip(events, lines, strict=True)), lines
