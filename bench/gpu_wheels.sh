#!/usr/bin/env bash
# Download the wheels the GPU machine lacks into .whl/ (git-ignored through .git/info/exclude): MuJoCo and MJX for
# its Python 3.12 on x86_64. bench/gpu_check.sh installs them there with --target, next to its own torch and JAX.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl .git/info
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 -d .whl \
  mujoco==4.0.0 mujoco-core==4.0.0 mujoco-studio==4.0.0 mujoco-mjx==3.17.0 glfw pyopengl trimesh websockets
du -sh .whl
