"""The rehearsal's operator survives a callback that raises, says so, and keeps watching the rehearsal.

Once, in CI, the operator's ROS thread ended on an exception nobody saw, and every later wait for the simulator's
ground truth timed out at 60 s (rehearsal log 2026-12-07).
"""

from __future__ import annotations

import time

import rclpy
from nav_msgs.msg import Odometry
from std_msgs.msg import String

from surrogait_core import interfaces
from surrogait_rehearsal.harness.operator import Operator

DOMAIN = 91  # unused elsewhere in tests/


def test_a_callback_that_raises_is_logged_and_the_operator_keeps_receiving(capfd):
    op = Operator(DOMAIN, name="operator_callback_probe")
    failing = {"left": 1}
    record = op._on_policy_state

    def fails_once(msg):
        if failing["left"]:
            failing["left"] -= 1
            raise RuntimeError("a bad policy state message")
        record(msg)

    # Subscriptions hold their callback: patch the one the executor calls.
    for sub in op.node.subscriptions:
        if sub.topic_name.endswith(interfaces.POLICY_STATE.lstrip("/")):
            sub.callback = fails_once
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    talker = rclpy.create_node("operator_callback_talker", context=context)
    try:
        states = talker.create_publisher(String, interfaces.POLICY_STATE, op.latched)
        truth = talker.create_publisher(Odometry, interfaces.SIM_GROUND_TRUTH, 10)
        deadline = time.monotonic() + 20.0
        while (len(op.ground_truth) < 20 or op.policy_state != "READY") and time.monotonic() < deadline:
            states.publish(String(data="READY"))
            truth.publish(Odometry())
            time.sleep(0.02)
        assert op.spin_errors and "a bad policy state message" in op.spin_errors[0], op.spin_errors
        assert op.policy_state == "READY" and len(op.ground_truth) >= 20, "the operator stopped receiving"
        assert not op.spin_failure
        assert "a ROS callback failed" in capfd.readouterr().err
    finally:
        talker.destroy_node()
        rclpy.try_shutdown(context=context)
        op.close()
