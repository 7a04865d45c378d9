#!/usr/bin/env bash
# The second tested target: ROS 2 Jazzy on Python 3.12, the deployment side only (`make test-jazzy`).
# A Python 3.12 venv with the ros-jazzy-* wheels and the deployment pins (requirements-jazzy.txt; rebuilt only
# when those files change), ros2_ws built into it with colcon, then the policy, estimator, safety, wire and
# launch tests, the session recorder's and the rehearsal walks (real processes) run from that install space: the nodes are the
# scripts colcon installed (<prefix>/lib/<package>/), imported through the PYTHONPATH its setup.bash sets.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT=.jazzy
VENV=$ROOT/venv
WS=$ROOT/ws
PY=${JAZZY_PYTHON:-}
if [ -z "$PY" ]; then
  if command -v pyenv >/dev/null && [ -x "$(pyenv root)/versions/3.12.1/bin/python" ]; then
    PY="$(pyenv root)/versions/3.12.1/bin/python"
  else
    PY=$(command -v python3.12 || true)
  fi
fi
[ -n "$PY" ] || { echo "test-jazzy: no Python 3.12 (pyenv 3.12.1 or python3.12 on PATH; or set JAZZY_PYTHON)"; exit 1; }

hash=$( (echo "$PY"; cat requirements-jazzy.txt requirements-deploy.txt requirements-no-deps.txt) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$VENV/.setup-hash" 2>/dev/null)" != "$hash" ]; then
  echo "test-jazzy: creating $VENV with $("$PY" --version) (first run takes a few minutes)"
  rm -rf "$VENV" "$WS"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -r requirements-jazzy.txt
  "$VENV/bin/python" -m pip install -q --no-deps -r requirements-no-deps.txt
  echo "$hash" > "$VENV/.setup-hash"
fi

# colcon from the venv builds with the venv's interpreter: the installed scripts run Python 3.12.
"$VENV/bin/python" -m colcon --log-base "$WS/log" build --symlink-install --base-paths ros2_ws/src \
  --build-base "$WS/build" --install-base "$WS/install" --event-handlers console_direct- >/dev/null \
  || { echo "test-jazzy: colcon build failed; see $WS/log/latest_build"; exit 1; }

set +u  # colcon's setup scripts read unset variables
# shellcheck disable=SC1091
source "$WS/install/setup.bash"
set -u
PATH="$(printf '%s:' "$PWD/$WS"/install/*/lib/*)$PATH"
export PATH SURROGAIT_COLCON_WORKSPACE="$PWD/$WS"
export MUJOCO_GL=${MUJOCO_GL:-osmesa} PYOPENGL_PLATFORM=${PYOPENGL_PLATFORM:-osmesa}
"$VENV/bin/python" - <<'PY'
import sys, rclpy, surrogait_policy
assert sys.version_info[:2] == (3, 12), sys.version
print(f"test-jazzy: Python {sys.version.split()[0]}, rclpy from {rclpy.__file__.split('/site-packages/')[0]}, "
      f"surrogait_policy from {surrogait_policy.__file__}")
PY
set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/core tests/policy tests/estimator tests/safety tests/recorder tests/launch "$@"
rc=$?
[ "$rc" -eq 5 ] && { echo "test-jazzy: no tests collected"; exit 1; }
exit "$rc"
