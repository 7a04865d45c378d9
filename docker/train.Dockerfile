# Training image: the differentiable-simulation trainer, headless (MuJoCo offscreen via OSMesa).
#   docker build -f docker/train.Dockerfile -t surrogait-train .
#   docker run --rm -v "$PWD/runs:/surrogait/runs" surrogait-train \
#       surrogait-train train --config go2_trot.yaml
# Not built on the development machines (no Docker engine there); see README.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends libosmesa6 libgl1 ffmpeg make \
 && rm -rf /var/lib/apt/lists/*

ENV MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa PYTHONUNBUFFERED=1
WORKDIR /surrogait

# Dependencies first (cached layer). torch==2.13.0 from the default index is the CUDA build on
# x86_64, which is what a GPU training host wants; it also runs on the CPU.
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

COPY ros2_ws/src/surrogait_description ros2_ws/src/surrogait_description
COPY ros2_ws/src/surrogait_core ros2_ws/src/surrogait_core
COPY training training
RUN pip install --no-cache-dir --no-deps \
      -e ros2_ws/src/surrogait_description -e ros2_ws/src/surrogait_core -e training

VOLUME /surrogait/runs
CMD ["surrogait-train", "--help"]
