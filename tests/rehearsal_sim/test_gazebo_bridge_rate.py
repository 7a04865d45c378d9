"""What rclpy costs here for the Gazebo bridge's force commands: 12 std_msgs/Float64 per control cycle.

One process publishes 12 Float64 per cycle, every 2 ms, to a subscriber in another process (as the
bridge to ros_gz_bridge or the stand-in), once as message objects and once as their CDR bytes
(ros_cdr, what the bridge sends); the CPU time of the publishing thread is measured per cycle.
Measured on this 2-core machine (2026-12-01, two training jobs of other sessions running): 12
publishes cost ~150 µs as messages and ~115 µs as bytes of the publishing thread, plus the DDS
threads' share (a whole process: ~34 µs a message object against ~13 µs as bytes). A whole bridge
cycle (take the joint state, PD, 12 publishes; IMU, foot wrenches and a LowState on every other
cycle) measured ~0.6-1 ms under that load, so 500 Hz, the default control_rate_hz, costs the bridge
~40 % of a core (sim.gazebo.bridge_config, launch/README.md "Gazebo rehearsal").

The assertion leaves room for a loaded machine: the 12 publishes must fit in a quarter of the
default rate's period (the lower quartile: what a cycle costs when it is not preempted).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from surrogait_rehearsal.harness.processes import child_env
from surrogait_rehearsal.sim.gazebo import ros_cdr
from surrogait_rehearsal.sim.gazebo.bridge_config import DEFAULT_CONTROL_RATE_HZ
from surrogait_rehearsal.sim.gazebo.polled_topics import command_qos

OWN_TARGET = "make test-gazebo: the Gazebo path's rehearsals, a target of their own (scripts/run_tests.py)"

DOMAIN = 58  # unused elsewhere in tests/
CYCLES = 300
TOPIC = "/rate_test/joint{}/cmd_force"
SUBSCRIBER = f"""
import sys, threading, time, rclpy
from std_msgs.msg import Float64
from surrogait_rehearsal.sim.gazebo.polled_topics import PolledSubscription, command_qos
rclpy.init()
node = rclpy.create_node("rate_subscriber")
subs = [PolledSubscription(node, Float64, "{TOPIC}".format(i), command_qos(), raw=True) for i in range(12)]
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()  # until stdin closes
print("ready", flush=True)
end = time.monotonic() + 60.0
while not done.is_set() and time.monotonic() < end:
    for s in subs:
        s.take_latest()
    time.sleep(0.001)
print(sum(s.taken for s in subs), flush=True)
"""


def _publish_cycles(pubs, make) -> list[float]:
    """CPU time of this thread per cycle of 12 publishes, one cycle every 2 ms."""
    out = []
    for k in range(CYCLES):
        t0 = time.thread_time()
        for p in pubs:
            p.publish(make(float(k)))
        out.append(time.thread_time() - t0)
        time.sleep(0.002)
    return out


def test_twelve_force_commands_per_cycle_fit_the_default_rate():
    import rclpy
    from std_msgs.msg import Float64

    subscriber = subprocess.Popen([sys.executable, "-c", SUBSCRIBER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=child_env(DOMAIN))
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    try:
        assert subscriber.stdout.readline().strip() == "ready"
        node = rclpy.create_node("rate_publisher", context=context)
        pubs = [node.create_publisher(Float64, TOPIC.format(i), command_qos()) for i in range(12)]
        deadline = time.monotonic() + 15.0
        while min(p.get_subscription_count() for p in pubs) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert min(p.get_subscription_count() for p in pubs) == 1, "discovery did not finish"
        as_objects = _publish_cycles(pubs, lambda v: Float64(data=v))
        as_bytes = _publish_cycles(pubs, ros_cdr.encode_float64)
    finally:
        rclpy.try_shutdown(context=context)
    received = int(subscriber.communicate(input="", timeout=60)[0].split()[-1])

    objects_us, bytes_us = (1e6 * statistics.quantiles(t, n=4)[0] for t in (as_objects, as_bytes))
    print(f"12 Float64 to another process: {objects_us:.0f} µs as messages, {bytes_us:.0f} µs as CDR bytes "
          f"(thread CPU per cycle, lower quartile of {CYCLES})")
    assert received >= 0.5 * 12 * CYCLES, f"the subscriber took {received} of {2 * 12 * CYCLES} messages"
    budget_us = 0.25e6 / DEFAULT_CONTROL_RATE_HZ
    assert bytes_us < budget_us, f"12 force commands cost {bytes_us:.0f} µs, more than {budget_us:.0f} µs"
