"""Rehearsal: a MuJoCo Go2 that speaks the robot's DDS protocol, and the demo."""
