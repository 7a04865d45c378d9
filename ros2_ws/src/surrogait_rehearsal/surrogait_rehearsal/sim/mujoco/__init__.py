"""The MuJoCo Go2 and Go1 that speak their robots' wires: `go2_sim` (unitree_sdk2 DDS) and `go1_sim`
(unitree_legged_sdk UDP), one process (`node`) over a ROS-free core (`core`)."""
