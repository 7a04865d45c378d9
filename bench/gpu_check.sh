#!/usr/bin/env bash
# The prepared GPU check: one call on a lent GPU machine (or a dry run on the CPU) that installs what that machine
# lacks, runs the cross-backend test on its device and measures the MJX backend's scaling, writing everything under
# $OUT (default: a fresh folder under /tmp).
#
#   bash bench/gpu_check.sh                      # every stage
#   STAGES="info cross raw" bash bench/gpu_check.sh
#   SKIP_INSTALL=1 OUT=/tmp/gc bash bench/gpu_check.sh   # the CPU dry run, in an environment that has the packages
#   CROSS_K="float32 or one_control_step" ...     # a subset of the cross-backend test (pytest -k)
#
# Stages (in this order, each only if named in STAGES):
#   info      python, torch, JAX and their devices; nvidia-smi
#   cross     tests/training/test_mjx_backend.py on JAX's default device (the GPU there): MJX against MuJoCo C
#   raw       bare MJX physics steps/s of standing robots at COUNTS, with each count's compile time
#   trainer   bench/gpu_scaling.py at COUNTS: the trainer's physics steps/s against raw (host and device paths)
#   walk      time to walk at WALK_COUNT robots, WALK_BUDGET_S seconds of training
#
# The GPU machine (device tool, nvidia-h200) has Python 3.12 with torch and JAX (CUDA) and no MuJoCo: MuJoCo and MJX
# travel as wheels in .whl/ (cp312, manylinux x86_64; bench/gpu_wheels.sh downloads them) and are installed with
# --target, never over the machine's own torch or JAX.
set -uo pipefail
cd "$(dirname "$0")/.."

STAGES=${STAGES:-"info cross raw trainer walk"}
COUNTS=${COUNTS:-"1024 2048 4096 8192 16384 32768"}
WALK_COUNT=${WALK_COUNT:-0}  # 0: the count with the highest trainer rate
WALK_BUDGET_S=${WALK_BUDGET_S:-120}
OUT=${OUT:-$(mktemp -d /tmp/gpu_check.XXXX)}
PY=${PY:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# Compiled steps are cached on the machine's disk (not under $OUT, which comes back): a later stage at the same
# robot count reuses the compile of an earlier one.
export SURROGAIT_JAX_CACHE=${SURROGAIT_JAX_CACHE:-/tmp/surrogait_jax_cache}
LOG="$OUT/gpu_check.log"  # every stage's output; the device tool brings back at most 8 files

want() { [[ " $STAGES " == *" $1 "* ]]; }
stamp() { echo "[gpu_check $(date +%H:%M:%S)] $*" | tee -a "$LOG"; }

if [ -z "${SKIP_INSTALL:-}" ]; then
  stamp "installing the carried wheels into /tmp/site"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "gpu_check: installing .whl/*.whl failed"; exit 1; }
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
# The project's packages from the source tree (no pip install on that machine).
export PYTHONPATH="$PWD/ros2_ws/src/surrogait_core:$PWD/ros2_ws/src/surrogait_description:$PWD/training${PYTHONPATH:+:$PYTHONPATH}"
# MuJoCo renders nothing here; "egl" would make `import mujoco` load EGL, which the GPU machine lacks
export MUJOCO_GL=${MUJOCO_GL:-disable}

if want info; then
  stamp "info"
  { nvidia-smi 2>&1 | head -15 || true
    "$PY" - <<'EOF'
import sys, torch, jax, mujoco
print("python", sys.version.split()[0], "| torch", torch.__version__, "cuda", torch.cuda.is_available(),
      "| jax", jax.__version__, jax.devices(), "| mujoco", mujoco.__version__)
EOF
  } 2>&1 | tee -a "$LOG"
fi

if want cross; then
  stamp "cross-backend test"
  "$PY" -m pytest -q -p no:cacheprovider tests/training/test_mjx_backend.py ${CROSS_K:+-k "$CROSS_K"} 2>&1 | tee -a "$LOG"
fi

if want raw; then
  stamp "raw physics scaling"
  "$PY" bench/gpu_scaling.py --raw-only --counts $COUNTS --out "$OUT" --name gpu_scaling_raw 2>&1 | tee -a "$LOG"
fi

if want trainer; then
  stamp "trainer scaling"
  "$PY" bench/gpu_scaling.py --counts $COUNTS --out "$OUT" --name gpu_scaling ${TRAINER_ARGS:-} 2>&1 | tee -a "$LOG"
fi

if want walk; then
  stamp "time to walk"
  "$PY" bench/gpu_scaling.py --walk-only --walk-count "$WALK_COUNT" --scaling "$OUT/gpu_scaling.json" \
    --time-to-walk "$WALK_BUDGET_S" --out "$OUT" --name gpu_walk ${WALK_ARGS:-} 2>&1 | tee -a "$LOG"
fi
stamp "done; results in $OUT"
