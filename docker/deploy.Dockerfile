# Deployment image for the robot's computer (or a PC wired to the robot): ROS 2 with the
# surrogait nodes built by colcon, launched with `ros2 launch`.
#   docker build -f docker/deploy.Dockerfile -t surrogait-deploy .
#   docker run --rm --net=host --privileged surrogait-deploy \
#       ros2 launch /surrogait/launch/go2_robot.launch.py policy_path:=/policies/go2_trot.onnx
# --net=host: unitree_sdk2 DDS must reach the robot's Ethernet interface (192.168.123.x).
# Not built on the development machines (no Docker engine there); see README.
FROM ros:kilted-ros-base

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pip python3-venv python3-numpy \
      ros-kilted-robot-state-publisher ros-kilted-tf2-ros \
 && rm -rf /var/lib/apt/lists/*

# Python packages that Debian/ROS do not ship: the Unitree SDK (with its CRC library),
# onnxruntime for inference and Pinocchio for the estimator's leg kinematics.
RUN pip install --no-cache-dir --break-system-packages \
      unitree-sdk2py-dimos==1.0.3 onnx==1.23.2 onnxruntime==1.32.0 pin==4.1.0 mujoco==4.0.0 PyYAML

WORKDIR /surrogait
COPY ros2_ws ros2_ws
COPY launch launch
RUN . /opt/ros/kilted/setup.sh && cd ros2_ws && colcon build --symlink-install

RUN echo 'source /opt/ros/kilted/setup.bash && source /surrogait/ros2_ws/install/setup.bash' >> /root/.bashrc
ENTRYPOINT ["/bin/bash", "-c", "source /opt/ros/kilted/setup.bash && source /surrogait/ros2_ws/install/setup.bash && exec \"$@\"", "--"]
CMD ["ros2", "launch", "/surrogait/launch/go2_robot.launch.py"]
