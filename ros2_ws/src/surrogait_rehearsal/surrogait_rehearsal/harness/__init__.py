"""The rehearsal harness: what starts, drives and judges a rehearsal from outside the robot's nodes.

- `processes`: the node set (simulator, policy node, estimator, safety monitor) and one
  `ProcessGroup` that starts it as separate processes, with one child environment;
- `operator`: one ROS operator client (the policy node's services, cmd_vel, the safety verdict,
  ground truth, odometry, diagnostics, fault injection topics);
- `fault_suite` and `fault_injection`: the safety monitor's fault-injection suite and its tools.

Used by the demo, the benches and the tests; nothing here runs on the robot.
"""
