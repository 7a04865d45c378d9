# Training image: the differentiable-simulation trainer (`surrogait-train`), headless.
#   docker build -f docker/train.Dockerfile -t surrogait-train .                       (CPU)
#   docker build -f docker/train.Dockerfile --build-arg CUDA=1 -t surrogait-train:cuda . (GPU host)
#   docker run --rm -v "$PWD/runs:/surrogait/runs" surrogait-train train --run-dir runs/go2
#   docker run --rm --gpus all -v "$PWD/runs:/surrogait/runs" surrogait-train:cuda train --run-dir runs/go2 \
#     env.backend=mjx env.device=cuda env.num_envs=4096   (physics, environment and learner on the GPU:
#     training/surrogait_train/devices.py)
# Not built on the development machines (no Docker engine there): docker/README.md.

# CUDA=1 builds on NVIDIA's CUDA runtime image and installs CUDA builds of torch and JAX; the default (0) is
# a slim CPU-only image with the CPU torch. BuildKit builds only the stage the choice needs.
ARG CUDA=0

# --- CPU base: the official Python 3.11 (the version every pin in requirements.txt is made for).
FROM python:3.11-slim-bookworm AS base-cuda0
RUN python -m venv /opt/venv

# --- GPU base: Ubuntu 22.04 ships Python 3.11 (24.04 does not). torch brings its own CUDA
# libraries as wheels; the host needs an NVIDIA driver that supports them and the NVIDIA
# container toolkit (`docker run --gpus all`).
FROM nvidia/cuda:12.8.1-runtime-ubuntu22.04 AS base-cuda1
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.11 python3.11-venv \
 && rm -rf /var/lib/apt/lists/* \
 && python3.11 -m venv /opt/venv

FROM base-cuda${CUDA} AS train
ARG CUDA
ARG DEBIAN_FRONTEND=noninteractive
# MuJoCo renders offscreen through OSMesa (videos in evaluation and the demo), no display needed.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libosmesa6 libgl1 \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/venv/bin:$PATH MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa PYTHONUNBUFFERED=1
WORKDIR /surrogait

# torch first, from the CPU index unless CUDA=1: PyPI's x86_64 torch is the CUDA build (GBs of
# NVIDIA libraries a CPU image does not need). Same version either way: the pin in requirements.txt.
# CUDA=1: torch and JAX both for CUDA 12 (the base image's 12.8; each brings its CUDA libraries as wheels, the
# host needs an NVIDIA driver >= 570): torch's cu128 build, and JAX's CUDA 12 plugin at requirements.txt's JAX pin
# (tests/foundation/test_docker.py checks it; the jax/jaxlib pins installed next leave the plugin in place), so MJX
# and torch share the GPU.
RUN if [ "$CUDA" = "1" ]; then \
      pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cu128 torch==2.13.0 \
      && pip install --no-cache-dir "jax[cuda12]==0.10.2"; \
    else pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0; fi

# The rest of the pins, from the one list. The trainer never imports ROS 2 or the Unitree SDKs:
# those wheels (ros-*, unitree-*, cyclonedds) are for the robot's nodes (deploy.Dockerfile).
COPY requirements.txt ./
RUN grep -vE '^(ros-|unitree-|cyclonedds)' requirements.txt > /tmp/requirements-train.txt \
 && pip install --no-cache-dir -r /tmp/requirements-train.txt

COPY ros2_ws/src/surrogait_description ros2_ws/src/surrogait_description
COPY ros2_ws/src/surrogait_core ros2_ws/src/surrogait_core
COPY training training
RUN pip install --no-cache-dir --no-deps \
      -e ros2_ws/src/surrogait_description -e ros2_ws/src/surrogait_core -e training

VOLUME /surrogait/runs
ENTRYPOINT ["surrogait-train"]
CMD ["--help"]
