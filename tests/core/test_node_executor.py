"""Which executor runs a node's callbacks, and that spin_until delivers them and stops when told.

rclpy's EventsExecutor costs about a third of the SingleThreadedExecutor's CPU per message (rehearsal log
2026-12-07) but refuses guard conditions, which the policy node uses: such a node keeps the old executor.
"""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
import rclpy.experimental
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Int32
from std_srvs.srv import Trigger

from surrogait_core.runtime.ros_node import node_executor, spin_until

DOMAIN = 92  # unused elsewhere in tests/
HAS_EVENTS_EXECUTOR = hasattr(rclpy.experimental, "EventsExecutor")


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=DOMAIN)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def test_a_node_without_guard_conditions_runs_on_the_events_executor_where_rclpy_has_one(context):
    node = Node("executor_plain", context=context)
    expected = "EventsExecutor" if HAS_EVENTS_EXECUTOR else "SingleThreadedExecutor"
    assert type(node_executor(node)).__name__ == expected
    node.destroy_node()


def test_a_node_with_a_guard_condition_keeps_the_single_threaded_executor(context):
    node = Node("executor_guarded", context=context)
    node.create_guard_condition(lambda: None)
    assert type(node_executor(node)).__name__ == "SingleThreadedExecutor"
    node.destroy_node()


def test_spin_until_delivers_messages_timers_and_services_and_returns_once_stopped(context):
    node = Node("executor_spun", context=context)
    talker = Node("executor_talker", context=context)
    received, ticks = [], []
    node.create_subscription(Int32, "executor_probe", lambda m: received.append(m.data), 10)
    node.create_timer(0.01, lambda: ticks.append(time.monotonic()))

    def answer(_request, response):
        response.success, response.message = True, "answered"
        return response

    node.create_service(Trigger, "executor_probe_service", answer)
    publisher = talker.create_publisher(Int32, "executor_probe", 10)
    stop = threading.Event()
    spinner = threading.Thread(target=spin_until, args=(node, stop), daemon=True)
    spinner.start()
    deadline = time.monotonic() + 10.0
    sent = 0
    while len(received) < 20 and time.monotonic() < deadline:
        publisher.publish(Int32(data=sent))
        sent += 1
        time.sleep(0.01)
    assert len(received) >= 20, f"{len(received)} of {sent} messages delivered"
    assert received == sorted(received)
    assert len(ticks) >= 10
    client = talker.create_client(Trigger, "executor_probe_service")
    assert client.wait_for_service(timeout_sec=5.0)
    future = client.call_async(Trigger.Request())
    rclpy.spin_until_future_complete(talker, future, executor=SingleThreadedExecutor(context=context), timeout_sec=5.0)
    assert future.done() and future.result().message == "answered"
    stop.set()
    spinner.join(timeout=3.0)
    assert not spinner.is_alive(), "spin_until did not return after stop was set"
    talker.destroy_node()
    node.destroy_node()
