# Gazebo rehearsal image: ROS 2 Jazzy + Gazebo Harmonic + ros_gz + this project, running
# launch/go2_gazebo.launch.py (gz sim headless, ros_gz_bridge, the Gazebo <-> Go2-wire bridge
# node, and the three deployment nodes exactly as on the robot).
#   docker build -f docker/gazebo.Dockerfile -t surrogait-gazebo .
#   docker run --rm -it --net=host --ipc=host surrogait-gazebo
# Not built on the development machines (no Docker engine, no Gazebo there): docker/README.md.

# The same multi-arch ROS base as deploy.Dockerfile. Jazzy's ros-jazzy-ros-gz brings Gazebo
# Harmonic (its vendor packages, `gz` included), the pairing the ros_gz project supports.
FROM ros:jazzy-ros-base-noble

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv python3-pip ros-jazzy-ros-gz \
 && rm -rf /var/lib/apt/lists/*

# As in deploy.Dockerfile: a venv over the system site-packages, colcon run by its python.
RUN python3 -m venv --system-site-packages /opt/venv && touch /opt/venv/COLCON_IGNORE
ENV PATH=/opt/venv/bin:$PATH
RUN pip install --no-cache-dir \
      numpy==2.4.6 PyYAML==6.0.4 onnx==1.23.2 onnxruntime==1.32.0 mujoco==4.0.0 pin==4.1.0 \
      cyclonedds==11.0.1 unitree-sdk2py-dimos==1.0.3

# Every ROS package (the bridge node is in surrogait_rehearsal), the launch files and their
# configuration, and the shipped policies where the launch file looks for them.
WORKDIR /surrogait
COPY ros2_ws/src ros2_ws/src
COPY launch launch
COPY training/surrogait_train/pretrained training/surrogait_train/pretrained
RUN source /opt/ros/jazzy/setup.bash && cd ros2_ws && python -m colcon build \
 && echo 'source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash' >> /root/.bashrc

# gz sim finds model://go2 here (the launch file sets the same path).
ENV GZ_SIM_RESOURCE_PATH=/surrogait/ros2_ws/src/surrogait_description/sdf/models
ENTRYPOINT ["/bin/bash", "-c", "source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash && exec \"$@\"", "--"]
CMD ["ros2", "launch", "launch/go2_gazebo.launch.py"]
