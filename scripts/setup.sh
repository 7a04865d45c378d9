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

# uv installs the same pinned set as pip in a quarter of the time (requirements.txt: 7 s against 31 s on this
# project's CI machines), from the indexes, links and constraints pip is configured with here. Where uv cannot be
# had or fails, pip installs as before.
install_with_uv() {
  .venv/bin/python -m pip install -q --no-compile uv 2>/dev/null && [ -x .venv/bin/uv ] || return 1
  local uv_args=(--python .venv/bin/python -q --index-strategy unsafe-best-match) line key value url
  while IFS= read -r line; do  # pip config list: section.key='value', the environment's as :env:.key
    key=${line#*.}; key=${key%%=*}; value=${line#*=\'}; value=${value%\'}
    case "$key" in
      index-url) uv_args+=(--index-url "$value") ;;
      extra-index-url) for url in $value; do uv_args+=(--extra-index-url "$url"); done ;;
      find-links) for url in $value; do uv_args+=(--find-links "$url"); done ;;
      constraint) uv_args+=(-c "$value") ;;
      cert) export SSL_CERT_FILE="$value" ;;
    esac
  done < <(.venv/bin/python -m pip config list 2>/dev/null)
  .venv/bin/uv pip install "${uv_args[@]}" -r requirements.txt \
    && .venv/bin/uv pip install "${uv_args[@]}" --no-deps --no-build-isolation "${editable[@]}"
}

install_with_pip() {
  echo "setup: installing with pip (uv could not be installed, or failed)"
  .venv/bin/python -m pip install -q --upgrade pip  # the venv's pip 23 resolves the pins half as fast
  .venv/bin/python -m pip install -q --no-compile -r requirements.txt
  .venv/bin/python -m pip install -q --no-compile --no-deps --no-build-isolation "${editable[@]}"
}

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
  echo "setup: installing Python dependencies into .venv (first run: 10-60 s)"
  # Nothing is byte-compiled here (pip's compiling of every installed file was 25 s of a fresh setup): the
  # Makefile lets Python keep the bytecode it compiles (this project's CI machines set PYTHONDONTWRITEBYTECODE,
  # and then every node of every rehearsal compiled rclpy, onnxruntime and mujoco again at start-up), so each
  # module is compiled once, the first time anything imports it, and only what runs is compiled. The project's
  # own packages build with the setuptools that requirements.txt installs, not in a fresh isolated build
  # environment each.
  editable=()
  for p in "${PACKAGES[@]}"; do editable+=(-e "$p"); done
  install_with_uv || install_with_pip
  echo "$hash" > .venv/.setup-hash
fi
