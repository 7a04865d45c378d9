# Deployment image: the safety monitor, the state estimator and the policy node, for the robot's
# onboard computer (arm64) or a PC wired to the robot (x86_64), started with `ros2 launch`.
#   docker build -f docker/deploy.Dockerfile -t surrogait-deploy .
#   docker buildx build --platform linux/arm64 -f docker/deploy.Dockerfile -t surrogait-deploy:arm64 .
#   docker run --rm -it --net=host --ipc=host --ulimit rtprio=99 --ulimit memlock=-1 --cap-add SYS_NICE \
#       surrogait-deploy                      (runs launch/go2_robot.launch.py; docker/README.md)
# Not built on the development machines (no Docker engine there): docker/README.md.

# ros:jazzy-ros-base-noble: the official ROS image is published for linux/amd64 and linux/arm64/v8,
# so one Dockerfile serves the PC and the robot's arm64 computer. Jazzy is the LTS release (to
# 2029) that Gazebo Harmonic pairs with (gazebo.Dockerfile), Ubuntu 24.04 underneath.
FROM ros:jazzy-ros-base-noble

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv python3-pip \
 && rm -rf /var/lib/apt/lists/*

# A venv over the system site-packages (where apt's rclpy and colcon live), as the ROS 2 docs
# advise for pip packages: colcon run by the venv's python writes node scripts that use it.
RUN python3 -m venv --system-site-packages /opt/venv && touch /opt/venv/COLCON_IGNORE
ENV PATH=/opt/venv/bin:$PATH

# What the three nodes import beyond ROS, at requirements.txt's versions (the test checks they
# agree): the Go2's unitree_sdk2 over CycloneDDS (its CRC library ships for amd64 and aarch64),
# onnx + onnxruntime for the policy, MuJoCo for the robot model, Pinocchio for leg kinematics.
RUN pip install --no-cache-dir \
      numpy==2.4.6 PyYAML==6.0.4 onnx==1.23.2 onnxruntime==1.32.0 mujoco==4.0.0 pin==4.1.0 \
      cyclonedds==11.0.1 unitree-sdk2py-dimos==1.0.3

# The Go1's unitree_legged_sdk has a wheel for CPython 3.11 on x86_64 only; this image's Python
# is Ubuntu 24.04's 3.12, on either architecture. So without WITH_GO1_SDK=1 the image drives the
# Go2 only. With it, the SDK's Python binding is built from the vendor's sources (the vendor ships
# its static library for amd64 and arm64), with a current pybind11 in place of the bundled 2020 one,
# which predates Python 3.12.
ARG WITH_GO1_SDK=0
ARG GO1_SDK_REF=v3.8.0
ARG PYBIND11_REF=v2.13.6
RUN if [ "$WITH_GO1_SDK" = "1" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends git cmake g++ make libboost-dev python3-dev \
      && git clone --depth 1 --branch "$GO1_SDK_REF" https://github.com/unitreerobotics/unitree_legged_sdk /tmp/go1_sdk \
      && rm -rf /tmp/go1_sdk/python_wrapper/third-party/pybind11 \
      && git clone --depth 1 --branch "$PYBIND11_REF" https://github.com/pybind/pybind11 \
           /tmp/go1_sdk/python_wrapper/third-party/pybind11 \
      && cmake -S /tmp/go1_sdk -B /tmp/go1_sdk/build -DPYTHON_BUILD=TRUE -DPYBIND11_TEST=OFF \
           -DPYTHON_EXECUTABLE=/opt/venv/bin/python \
      && cmake --build /tmp/go1_sdk/build --target robot_interface -j"$(nproc)" \
      && site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') \
      && ext=$(python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') \
      && mkdir -p "$site/unitree_legged_sdk" \
      && cp /tmp/go1_sdk/lib/python/*/robot_interface"$ext" "$site/unitree_legged_sdk/" \
      && python -c 'from unitree_legged_sdk import robot_interface' \
      && rm -rf /tmp/go1_sdk /var/lib/apt/lists/*; \
    fi

# The deployable packages only (the rehearsal and the trainer stay out), the launch files, and
# the shipped policies where the launch files look for them.
WORKDIR /surrogait
COPY ros2_ws/src/surrogait_description ros2_ws/src/surrogait_description
COPY ros2_ws/src/surrogait_core ros2_ws/src/surrogait_core
COPY ros2_ws/src/surrogait_policy ros2_ws/src/surrogait_policy
COPY ros2_ws/src/surrogait_estimator ros2_ws/src/surrogait_estimator
COPY ros2_ws/src/surrogait_safety ros2_ws/src/surrogait_safety
COPY launch launch
COPY training/surrogait_train/pretrained training/surrogait_train/pretrained
RUN source /opt/ros/jazzy/setup.bash && cd ros2_ws && python -m colcon build \
 && echo 'source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash' >> /root/.bashrc

ENTRYPOINT ["/bin/bash", "-c", "source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash && exec \"$@\"", "--"]
CMD ["ros2", "launch", "/surrogait/launch/go2_robot.launch.py"]
