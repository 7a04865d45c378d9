#!/usr/bin/env bash
# Create or refresh the project virtualenv (.venv, Python 3.11) and the Debian packages it needs.
# Idempotent: with nothing changed it only checks, in a second or two.
set -euo pipefail
cd "$(dirname "$0")/.."

# libosmesa6: offscreen rendering; libsdformat-dev, g++, pkg-config: the real SDF parser that
# tests/foundation/test_sdf_libsdformat.py checks the Gazebo files with.
DEBS=(libosmesa6 libsdformat-dev g++ pkg-config)
missing=()
for deb in "${DEBS[@]}"; do
  dpkg -s "$deb" >/dev/null 2>&1 || missing+=("$deb")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi

# Everything pip installs is keyed by this hash; a change to any of these files reinstalls.
PACKAGES=(ros2_ws/src/*/ training/)
hash=$(cat requirements.txt ros2_ws/src/*/setup.py ros2_ws/src/*/package.xml training/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat .venv/.setup-hash 2>/dev/null)" != "$hash" ]; then
  echo "setup: installing Python dependencies into .venv (first run takes about a minute)"
  # pip byte-compiles what it installs (half of a fresh setup's time, and worth it: where PYTHONDONTWRITEBYTECODE
  # is set, as on this project's CI machines, nothing compiled later is kept, and every node of every rehearsal
  # compiled rclpy, onnxruntime and mujoco again at start-up: 90 s more of `make test` on a fresh clone). The
  # project's own packages build with the setuptools that requirements.txt installs, not in a fresh isolated
  # build environment each, and are compiled here too.
  .venv/bin/python -m pip install -q --upgrade pip  # the venv's pip 23 resolves the pins half as fast
  .venv/bin/python -m pip install -q -r requirements.txt
  editable=()
  for p in "${PACKAGES[@]}"; do editable+=(-e "$p"); done
  .venv/bin/python -m pip install -q --no-deps --no-build-isolation "${editable[@]}"
  modules=()  # the packages' importable folders only (a launch folder's listing is compared with its install)
  for p in "${PACKAGES[@]}"; do
    for d in "$p"surrogait_*/; do if [ -f "$d/__init__.py" ]; then modules+=("$d"); fi; done
  done
  .venv/bin/python -m compileall -q -j 0 "${modules[@]}" >/dev/null
  echo "$hash" > .venv/.setup-hash
fi
