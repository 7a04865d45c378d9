"""The rehearsal harness: what starts, drives and judges a rehearsal from outside the robot's nodes.

- `session`: one rehearsal `Session` — the node set with its packages' parameters files, brought up to READY
  and WALK, driven through scripted segments, stopped, with its recordings in one folder. The demo, the fault
  suite, the rehearsal tests and the benches are its clients;
- `nodes`: the node set (which process plays which part, its parameters file) and each robot's link as data;
- `processes`: `ProcessGroup`, which starts and stops the processes (one child environment, a log each);
- `operator`: one ROS operator client (the policy node's services, cmd_vel, the safety verdict, ground truth,
  odometry, diagnostics, fault-injection topics);
- `gazebo`: the Gazebo side of the Gazebo rehearsal (gz sim and ros_gz_bridge, where installed);
- `fault_suite` and `fault_injection`: the safety monitor's fault-injection suite and its tools;
- `host_steal`: the hypervisor's steal time while a rehearsal runs.

Nothing here runs on the robot.
"""
