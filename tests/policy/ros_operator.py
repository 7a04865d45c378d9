"""A ROS operator for the policy-node tests: its state and diagnostics, its services, a safety verdict."""

import json
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from surrogait_core import interfaces

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


class Operator:
    """A ROS node in its own context on `domain`: subscriptions to what the policy node reports, its services."""

    def __init__(self, domain: int):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node("test_operator", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.states, self.diagnostics = [], []
        self.node.create_subscription(String, interfaces.POLICY_STATE, lambda m: self.states.append(m.data), LATCHED)
        self.node.create_subscription(DiagnosticArray, interfaces.DIAGNOSTICS, self.diagnostics.append, 10)
        self.safety = self.node.create_publisher(String, interfaces.SAFETY_STATE, LATCHED)

    def spin_until(self, predicate, timeout_s=30.0):
        deadline = time.monotonic() + timeout_s
        while not predicate():
            assert time.monotonic() < deadline, f"timed out; policy states seen: {self.states}"
            self.executor.spin_once(timeout_sec=0.05)

    def call(self, service):
        client = self.node.create_client(Trigger, service)
        assert client.wait_for_service(timeout_sec=30.0), f"{service} not offered"
        future = client.call_async(Trigger.Request())
        self.spin_until(future.done)
        return future.result()

    def publish_safety(self, state, cause=""):
        self.safety.publish(String(data=json.dumps({"state": state, "cause": cause, "time": time.time()})))

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
