"""On the robot: the safety monitor, the state estimator and the policy node on a real Go2.

    ros2 launch surrogait_bringup go2_robot.launch.py network_interface:=enp3s0 policy:=/path/x.onnx

Each node takes its package's parameters file (share/<package>/config/, tuned in rehearsal), then
config/go2_robot/link.yaml (unitree_sdk2 DDS domain 0 on the interface wired to the robot), then, for
the policy node, config/go2_robot/policy_node.yaml (release the built-in sport controller, real-time
control thread), then the launch arguments. Our ROS traffic runs on ROS_DOMAIN_ID `ros_domain_id`
(default 1), off the robot's own DDS domain 0. `ros2 launch surrogait_bringup go2_robot.launch.py -s`
lists the arguments; surrogait_bringup.stack says what each one does.
"""

from surrogait_bringup.launch_description import generate


def generate_launch_description():
    return generate("robot", robot="go2")
