# Gazebo rehearsal image: ROS 2 Jazzy + Gazebo Harmonic + ros_gz + this project, running
# launch/go2_gazebo.launch.py (gz sim headless, ros_gz_bridge, the Gazebo <-> Go2-wire bridge
# node, and the three deployment nodes exactly as on the robot).
#   docker build -f docker/gazebo.Dockerfile -t surrogait-gazebo .
#   docker run --rm -it --net=host --ipc=host surrogait-gazebo
# Not built on the development machines (no Docker engine, no Gazebo there): docker/README.md.

# ---- Cyclone DDS for unitree_sdk2py, as in deploy.Dockerfile: the C library and the Python binding of one
# version (11.0.1), built where PyPI has no wheel (arm64).
FROM ros:jazzy-ros-base-noble AS cyclonedds
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive
ARG CYCLONEDDS_REF=11.0.1
RUN apt-get update \
 && apt-get install -y --no-install-recommends git cmake g++ make python3-dev python3-venv python3-pip \
 && rm -rf /var/lib/apt/lists/*
RUN git clone --depth 1 --branch "$CYCLONEDDS_REF" https://github.com/eclipse-cyclonedds/cyclonedds /tmp/cyclonedds \
 && cmake -S /tmp/cyclonedds -B /tmp/cyclonedds/build -DCMAKE_INSTALL_PREFIX=/opt/cyclonedds \
      -DBUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF -DBUILD_IDLC=ON -DENABLE_SSL=OFF \
 && cmake --build /tmp/cyclonedds/build --target install -j"$(nproc)" \
 && rm -rf /tmp/cyclonedds
RUN python3 -m venv /opt/wheelbuild \
 && CYCLONEDDS_HOME=/opt/cyclonedds /opt/wheelbuild/bin/pip wheel --no-cache-dir --no-deps -w /wheels cyclonedds==11.0.1

# ---- The same multi-arch ROS base as deploy.Dockerfile. Jazzy's ros-jazzy-ros-gz brings Gazebo Harmonic (its
# vendor packages, `gz` included), the pairing the ros_gz project supports. numpy and Pinocchio are Ubuntu's and
# the ROS archive's, matching apt's rclpy (deploy.Dockerfile says why).
FROM ros:jazzy-ros-base-noble AS gazebo
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv python3-pip python3-numpy python3-yaml \
      python3-matplotlib ros-jazzy-pinocchio ros-jazzy-ros-gz \
 && rm -rf /var/lib/apt/lists/*
COPY --from=cyclonedds /opt/cyclonedds /opt/cyclonedds
COPY --from=cyclonedds /wheels /wheels
ENV CYCLONEDDS_HOME=/opt/cyclonedds LD_LIBRARY_PATH=/opt/cyclonedds/lib

# As in deploy.Dockerfile: a venv over the system site-packages, colcon run by its python.
RUN python3 -m venv --system-site-packages /opt/venv && touch /opt/venv/COLCON_IGNORE
ENV PATH=/opt/venv/bin:$PATH
RUN pip install --no-cache-dir --no-deps --find-links /wheels cyclonedds==11.0.1 \
 && pip install --no-cache-dir onnx==1.23.2 onnxruntime==1.32.0 mujoco==4.0.0 mcap==1.6.0 mcap-ros2-support==0.6.0 imageio==2.38.1 \
 && pip install --no-cache-dir --no-deps unitree-sdk2py-dimos==1.0.3 \
 && rm -rf /wheels

# Every ROS package: the bridge node is in surrogait_rehearsal, the launch file, its configuration and the
# shipped policies in surrogait_bringup.
WORKDIR /surrogait
COPY ros2_ws/src ros2_ws/src
RUN source /opt/ros/jazzy/setup.bash && cd ros2_ws && python -m colcon build \
 && echo 'source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash' >> /root/.bashrc

ENTRYPOINT ["/bin/bash", "-c", "source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash && exec \"$@\"", "--"]
CMD ["ros2", "launch", "surrogait_bringup", "go2_gazebo.launch.py"]
