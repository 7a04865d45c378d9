# Deployment image: the safety monitor, the state estimator and the policy node, for the robot's onboard
# computer (arm64) or a PC wired to the robot (x86_64), started with `ros2 launch surrogait_bringup ...`.
#   docker build -f docker/deploy.Dockerfile -t surrogait-deploy .
#   docker buildx build --platform linux/arm64 -f docker/deploy.Dockerfile -t surrogait-deploy:arm64 --load .
#   docker run --rm -it --net=host --ipc=host --ulimit rtprio=99 --ulimit memlock=-1 --cap-add SYS_NICE \
#       surrogait-deploy network_interface:=enp3s0            (docker/README.md)
# Not built on the development machines (no Docker engine there): docker/README.md.

# ---- Cyclone DDS for unitree_sdk2py. Its Python binding, cyclonedds==11.0.1, has x86_64 wheels only; on arm64
# pip builds it from the sdist against the Cyclone DDS C library of the same version (ROS Jazzy's own Cyclone
# is 0.10.x, which the binding 11 does not build against). Both are built here, once per architecture; on
# amd64 `pip wheel` takes PyPI's wheel and the C build is only carried along.
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

# ---- The image. ros:jazzy-ros-base-noble is published for linux/amd64 and linux/arm64/v8 (Jazzy: the LTS to
# 2029, Ubuntu 24.04, Python 3.12). Its rclpy and messages are Ubuntu's, built against Ubuntu's numpy 1.26:
# a pip numpy 2 over them would break their C extensions, so numpy stays Ubuntu's here and Pinocchio comes
# from the ROS archive (pip's `pin` needs numpy 2). `make test-jazzy` tests the same code on Jazzy's Python
# 3.12 wheels with requirements.txt's numpy 2.4.6.
FROM ros:jazzy-ros-base-noble AS deploy
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv python3-pip python3-numpy python3-yaml \
      ros-jazzy-pinocchio \
 && rm -rf /var/lib/apt/lists/*
COPY --from=cyclonedds /opt/cyclonedds /opt/cyclonedds
COPY --from=cyclonedds /wheels /wheels
ENV CYCLONEDDS_HOME=/opt/cyclonedds LD_LIBRARY_PATH=/opt/cyclonedds/lib

# A venv over the system site-packages (apt's rclpy, numpy, pinocchio), as the ROS 2 docs advise for pip
# packages; colcon run by its python writes node scripts that use it.
RUN python3 -m venv --system-site-packages /opt/venv && touch /opt/venv/COLCON_IGNORE
ENV PATH=/opt/venv/bin:$PATH

# What the three nodes import beyond ROS, at requirements.txt's versions (tests/foundation/test_docker.py checks
# they agree): onnx + onnxruntime for the policy, MuJoCo for the robot model, mcap for the session recorder, the
# Go2's unitree_sdk2 over Cyclone DDS. The SDK goes in without its declared opencv-python, which none of its modules imports.
RUN pip install --no-cache-dir --no-deps --find-links /wheels cyclonedds==11.0.1 \
 && pip install --no-cache-dir onnx==1.23.2 onnxruntime==1.32.0 mujoco==4.0.0 mcap==1.6.0 mcap-ros2-support==0.6.0 \
 && pip install --no-cache-dir --no-deps unitree-sdk2py-dimos==1.0.3 \
 && python -c 'import cyclonedds, onnxruntime, mujoco, pinocchio, unitree_sdk2py.core.channel' \
 && rm -rf /wheels

# The deployable packages (the rehearsal and the trainer stay out): the core, the robot descriptions, the three
# nodes, the session recorder (each session's MCAP file) and surrogait_bringup (launch files, their
# configuration, the shipped policies). The Go1's link needs
# no SDK binary (it speaks the packets itself), so the image drives a Go1 as well as a Go2.
WORKDIR /surrogait
COPY ros2_ws/src/surrogait_description ros2_ws/src/surrogait_description
COPY ros2_ws/src/surrogait_core ros2_ws/src/surrogait_core
COPY ros2_ws/src/surrogait_policy ros2_ws/src/surrogait_policy
COPY ros2_ws/src/surrogait_estimator ros2_ws/src/surrogait_estimator
COPY ros2_ws/src/surrogait_safety ros2_ws/src/surrogait_safety
COPY ros2_ws/src/surrogait_recorder ros2_ws/src/surrogait_recorder
COPY ros2_ws/src/surrogait_bringup ros2_ws/src/surrogait_bringup
RUN source /opt/ros/jazzy/setup.bash && cd ros2_ws && python -m colcon build \
 && echo 'source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash' >> /root/.bashrc

# `docker run ... surrogait-deploy network_interface:=enp3s0 policy:=/policies/x.onnx`: the arguments go to the
# launch (a different launch file: --entrypoint or a full `ros2 launch ...` command).
ENTRYPOINT ["/bin/bash", "-c", "source /opt/ros/jazzy/setup.bash && source /surrogait/ros2_ws/install/setup.bash && if [ \"${1:-}\" = ros2 ] || [ \"${1:-}\" = bash ]; then exec \"$@\"; else exec ros2 launch surrogait_bringup go2_robot.launch.py \"$@\"; fi", "--"]
CMD ["ros2", "launch", "surrogait_bringup", "go2_robot.launch.py"]
