"""ROS 2 names shared by the nodes, the rehearsal simulator and the tests (one place each).

All types are standard ROS 2 messages (docs/architecture.md, Principles: a ROS-free core, thin nodes).
"""

# Policy node
CMD_VEL = "cmd_vel"  # geometry_msgs/Twist, body frame
JOINT_STATES = "joint_states"  # sensor_msgs/JointState, SDK joint names
IMU = "imu/data"  # sensor_msgs/Imu
DIAGNOSTICS = "/diagnostics"  # diagnostic_msgs/DiagnosticArray
POLICY_STATE = "policy/state"  # std_msgs/String: PASSIVE | STAND_UP | READY | WALK | DAMP (transient local)
SRV_STAND_UP = "policy/stand_up"  # std_srvs/Trigger
SRV_WALK = "policy/walk"  # std_srvs/Trigger
SRV_STOP_WALK = "policy/stop_walk"  # std_srvs/Trigger: WALK -> READY
SRV_DAMP = "policy/damp"  # std_srvs/Trigger
SRV_POLICY_RESET = "policy/reset"  # std_srvs/Trigger: DAMP -> PASSIVE, only while the safety monitor reports OK
SRV_GAIT_PREFIX = "policy/gait/"  # + a gait name: std_srvs/Trigger, a multi-gait policy's gait (READY or WALK)
SRV_PRE_FLIGHT = "policy/pre_flight"  # std_srvs/Trigger: the pre-flight checks alone; the message is their table
SRV_DRY_RUN_REPORT = "policy/dry_run_report"  # std_srvs/Trigger: commanded vs measured joint motion (dry run)
POLICY_GAIT_STANCE = "policy/gait_stance"  # std_msgs/UInt8MultiArray: the gait schedule's stance feet while walking
POLICY_GAIT = "policy/gait"  # std_msgs/String: the gait the policy walks with (transient local)

# State estimator
ODOM = "odom"  # nav_msgs/Odometry, odom -> base_link (REP 105), twist in base_link
SRV_CALIBRATE_FEET_UNLOADED = "estimator/calibrate_feet_unloaded"  # std_srvs/Trigger: raw foot-force offsets
SRV_CALIBRATE_FEET_STANDING = "estimator/calibrate_feet_standing"  # std_srvs/Trigger: gains, robot standing
CONTACTS = "estimator/contacts"  # std_msgs/UInt8MultiArray: 1 = stance, SDK leg order FR, FL, RR, RL

# Safety monitor
SAFETY_STATE = "safety/state"  # std_msgs/String, JSON {"state": "OK"|"DAMP", "cause", "time"} (transient local)
ESTOP_TOPIC = "safety/estop"  # std_msgs/Bool: True latches damping
SRV_ESTOP = "safety/estop"  # std_srvs/Trigger
SRV_SAFETY_RESET = "safety/reset"  # std_srvs/Trigger: only when the robot is in a safe state

# Rehearsal simulator (scoring and fault injection only; no robot has these)
SIM_GROUND_TRUTH = "sim/ground_truth"  # nav_msgs/Odometry: world pose, body-frame twist
SIM_PUSH = "sim/push"  # geometry_msgs/Twist: added to the base velocity (world frame) once
SIM_GAMEPAD = "sim/gamepad"  # sensor_msgs/Joy: axes [lx, ly, rx, ry], buttons by go2_wire.KEY_BITS index
SIM_LOWSTATE_ENABLED = "sim/lowstate_enabled"  # std_srvs/SetBool: False stops rt/lowstate (fault injection)

# Gazebo rehearsal: the Gazebo bridge logs this once Gazebo's joint states flow and its motor loop and
# rt/lowstate run (and again after a lapse); go2_gazebo.launch.py starts the robot's nodes on its first.
GAZEBO_BRIDGE_UP_LINE = "Gazebo state is fresh"
