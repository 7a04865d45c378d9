# Training image: the differentiable-simulation trainer (`surrogait-train`), headless.
#   docker build -f docker/train.Dockerfile -t surrogait-train .                       (CPU)
#   docker build -f docker/train.Dockerfile --build-arg CUDA=1 -t surrogait-train:cuda . (MJX on a GPU host)
#   docker run --rm -v "$PWD/runs:/surrogait/runs" surrogait-train train --run-dir runs/go2
#   docker run --rm --gpus all -v "$PWD/runs:/surrogait/runs" surrogait-train:cuda train --run-dir runs/go2 \
#     env.backend=mjx env.device=cuda env.num_envs=4096   (physics, environment and learner on the GPU)
# Not built on the development machines (no Docker engine there): docker/README.md.

# CUDA=1: MuJoCo's MJX backend on the GPU (`env.backend=mjx`, training/surrogait_train/mjx_physics.py puts its
# state on JAX's default device), through JAX's CUDA 12 wheels (jax[cuda12]: the CUDA libraries come as pip
# wheels, so the host needs only an NVIDIA driver and the container toolkit, `docker run --gpus all`), and torch's
# CUDA 12 build (cu128), so that the device-resident environment, the surrogate and the learner run on the same GPU
# (`env.device=cuda`, training/surrogait_train/devices.py). The default (0) is CPU only. Both from the official
# Python 3.11 image (every pin is made for it).
ARG CUDA=0

FROM python:3.11-slim-bookworm AS base-cuda0
RUN python -m venv /opt/venv

FROM python:3.11-slim-bookworm AS base-cuda1
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir "jax[cuda12]==0.10.2"

FROM base-cuda${CUDA} AS train
ARG CUDA
ARG DEBIAN_FRONTEND=noninteractive
# MuJoCo renders offscreen through OSMesa (videos in evaluation and the demo), no display needed.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libosmesa6 libgl1 \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/venv/bin:$PATH MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa PYTHONUNBUFFERED=1
WORKDIR /surrogait

# torch from the CPU index, or with CUDA=1 its CUDA 12 build (the CUDA version of jax[cuda12]): PyPI's x86_64 torch
# is a CUDA build of its own choosing (GBs of NVIDIA libraries a CPU image does not use). The pin in requirements.txt.
RUN if [ "$CUDA" = "1" ]; then pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cu128 torch==2.13.0; \
    else pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0; fi

# The rest of the pins, from the one list. The trainer never imports ROS 2 or the Unitree SDKs:
# those wheels (ros-*, unitree-*, cyclonedds) are for the robot's nodes (deploy.Dockerfile).
COPY requirements.txt ./
RUN grep -vE '^(ros-|unitree-|cyclonedds|colcon-)' requirements.txt > /tmp/requirements-train.txt \
 && pip install --no-cache-dir -r /tmp/requirements-train.txt

COPY ros2_ws/src/surrogait_description ros2_ws/src/surrogait_description
COPY ros2_ws/src/surrogait_core ros2_ws/src/surrogait_core
COPY training training
RUN pip install --no-cache-dir --no-deps \
      -e ros2_ws/src/surrogait_description -e ros2_ws/src/surrogait_core -e training

VOLUME /surrogait/runs
ENTRYPOINT ["surrogait-train"]
CMD ["--help"]
