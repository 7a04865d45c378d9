"""ROS subscriptions read by a loop of one's own: the newest message on demand, no executor callback.

The Gazebo bridge takes its inputs at up to 500 Hz and its stand-in polls 12 force topics at every
physics step. Through rclpy's SingleThreadedExecutor a callback costs ~250 µs here (wait-set
rebuild, task bookkeeping), so 12 topics at 500 Hz would need 1.5 cores; taking a message directly
costs a few µs when there is none, and, taken as raw CDR bytes (ros_cdr decodes them), a fraction of
rclpy's message conversion when there is one. `wait` blocks until a message is ready, with the wait
set rclpy's own `wait_for_message` uses. This is the choice the project made for the robot's DDS wire
(surrogait_core.wire.dds_raw_reader): poll from the loop that needs the data.

The subscriptions must live on a node that no executor spins, or the executor would take (and
drop) the messages first. `take_message` and the wait set are rclpy's internal handle API, the one its
executors and `wait_for_message` use.
"""

from __future__ import annotations

from typing import Any

QOS_DEPTH = 1  # only the newest message matters to a loop that polls


def sensor_qos():
    """Best effort, newest only: matches both best-effort and reliable publishers (ros_gz_bridge's are reliable)."""
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=QOS_DEPTH, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)


def command_qos():
    """Reliable, newest only: what ros_gz_bridge's reliable subscriptions (ROS to Gazebo) accept."""
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=QOS_DEPTH, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


def _never_called(_msg) -> None:  # the node is not spun, so no executor calls it
    raise AssertionError("a polled subscription's node must not be spun by an executor")


class PolledSubscription:
    """One subscription on `node` whose messages `take_latest` reads (all pending ones, returning the newest)."""

    def __init__(self, node, msg_type: type, topic: str, qos=None, raw: bool = False) -> None:
        """`raw`: take the serialized CDR bytes instead of a message (ros_cdr decodes them for a fraction
        of the cost of rclpy's message conversion)."""
        self.topic, self.msg_type = topic, msg_type
        self._sub = node.create_subscription(msg_type, topic, _never_called, qos if qos is not None else sensor_qos(),
                                             raw=raw)
        self._context = node.context
        self._wait_set = None
        self.taken = 0  # messages taken so far (including ones superseded within a poll)

    def wait(self, timeout_s: float) -> bool:
        """Block until a message is ready to take, or `timeout_s` passes; whether one is ready. (rclpy's own
        wait_for_message does the same with a wait set on the subscription.)"""
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

        if self._wait_set is None:
            self._wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, self._context.handle)
        ws = self._wait_set
        ws.clear_entities()
        with self._sub.handle:
            ws.add_subscription(self._sub.handle)
        ws.wait(max(0, int(timeout_s * 1e9)))
        return bool(ws.get_ready_entities("subscription"))

    def take_latest(self) -> Any | None:
        """The newest message (bytes if `raw`) since the last call, or None."""
        sub, latest = self._sub, None
        with sub.handle:
            while True:
                got = sub.handle.take_message(sub.msg_type, sub.raw)
                if got is None:
                    return latest
                latest = got[0]
                self.taken += 1
