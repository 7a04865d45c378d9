"""Rehearsal: a MuJoCo Go2 speaking the robot's DDS protocol, the harness that runs the nodes against it, the demo."""
