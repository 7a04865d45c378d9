#!/usr/bin/env bash
# The prepared GPU check: one call on a lent GPU machine (or a dry run on the CPU) that installs what that machine
# lacks, runs the cross-backend tests on its device, measures raw MJX physics against the host-roundtrip and the
# device-resident trainers, and the time to walk; everything under $OUT (default: a fresh folder under /tmp).
#
#   bash bench/gpu_check.sh                                   # every stage, the defaults below
#   STAGES="info cross" bash bench/gpu_check.sh               # some stages
#   SKIP_INSTALL=1 PY=.venv/bin/python COUNTS="64 128" HOST_COUNTS=64 WALK_COUNT=64 WALK_BUDGET_S=60 \
#     OUT=/tmp/gc bash bench/gpu_check.sh                     # the CPU dry run, in an environment that has the packages
#
# Stages (in this order, each only if named in STAGES), with what each writes under $OUT:
#   info      python, torch, JAX and their devices; nvidia-smi                      -> gpu_check.log
#   cross     tests/training/test_device_env.py and test_mjx_backend.py (-k CROSS_K), torch and JAX on DEVICE
#             (SURROGAIT_TEST_DEVICE): the device-resident environment against the host one, zero host transfers
#             per step, MJX against MuJoCo C (float32 with full-precision products, float64)
#                                                                                   -> gpu_check.log, cross_junit.xml
#   scaling   bench/gpu_scaling.py: per count of COUNTS raw MJX physics and the device-resident trainer, per count
#             of HOST_COUNTS the host-roundtrip trainer                              -> gpu_scaling.json/.md
#   walk      bench/gpu_scaling.py --walk-only: trains on DEVICE at WALK_COUNT robots (0: the fastest resident count
#             of the scaling stage) up to WALK_BUDGET_S s of training, evaluated every EVAL_EVERY_S s
#                                                                          -> gpu_walk.json/.md, gpu_walk_metrics.csv
# Every stage prints a timestamped header; a stage past its time limit (*_TIMEOUT_S, 0 = none) is stopped and the
# next one runs; the python stages write their JSON after every finished count or evaluation, so a stopped stage
# keeps what it finished.
#
# The GPU machine (device tool, nvidia-h200) has Python 3.12 with torch and JAX (CUDA) and no MuJoCo: MuJoCo and MJX
# travel as wheels in .whl/ (cp312, manylinux x86_64; bench/gpu_wheels.sh downloads them) and are installed with
# --target, never over the machine's own torch or JAX.
set -uo pipefail
cd "$(dirname "$0")/.."

STAGES=${STAGES:-"info cross scaling walk"}
COUNTS=${COUNTS:-"32768 8192 2048"}   # the largest first: the goal's count is measured even if time runs out
HOST_COUNTS=${HOST_COUNTS:-"2048"}
ITERATIONS=${ITERATIONS:-2}
WARMUP=${WARMUP:-1}
RAW_SECONDS=${RAW_SECONDS:-4}
WALK_COUNT=${WALK_COUNT:-2048}      # 0: the fastest resident count of the scaling stage
WALK_BUDGET_S=${WALK_BUDGET_S:-120}
EVAL_EVERY_S=${EVAL_EVERY_S:-20}
WALK_EPISODES=${WALK_EPISODES:-32}
# the float32 side-by-sides (MJX vs MuJoCo C; device-resident vs host environment), the float64 step, the device and
# transfer tests: what runs on a GPU in ~2 min (each new robot count or dtype is a ~20 s compile there)
CROSS_K=${CROSS_K:-"float32 or one_control_step or picks or refused or steady_state or counter or shac"}
# Each stage's time limit (s; 0 = none): the defaults keep one call under 9.5 min on the H200 (about 6-7 min expected:
# ~2 min of tests, ~2.5 min of scaling, up to ~3 min of walking), so a stage that hangs costs only its own share.
CROSS_TIMEOUT_S=${CROSS_TIMEOUT_S:-170}
SCALING_TIMEOUT_S=${SCALING_TIMEOUT_S:-190}
WALK_TIMEOUT_S=${WALK_TIMEOUT_S:-200}
OUT=${OUT:-$(mktemp -d /tmp/gpu_check.XXXX)}
PY=${PY:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# Compiled steps are cached on the machine's disk (not under $OUT, which comes back): a later stage or process at the
# same robot count loads the compile of an earlier one.
export SURROGAIT_JAX_CACHE=${SURROGAIT_JAX_CACHE:-/tmp/surrogait_jax_cache}
LOG="$OUT/gpu_check.log"  # every stage's output; the device tool brings back at most 8 files
T0=$(date +%s)

want() { [[ " $STAGES " == *" $1 "* ]]; }
stamp() { echo "[gpu_check $(date +%H:%M:%S) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
limited() { local t=$1; shift; if [ "$t" -gt 0 ]; then timeout -k 15 "$t" "$@"; else "$@"; fi; }

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
DEVICE=${DEVICE:-$("$PY" -c "import torch; print('cuda' if torch.cuda.is_available() else 'cpu')")}
stamp "stages: $STAGES | DEVICE=$DEVICE COUNTS='$COUNTS' HOST_COUNTS='$HOST_COUNTS' WALK_COUNT=$WALK_COUNT WALK_BUDGET_S=$WALK_BUDGET_S | OUT=$OUT"

if want info; then
  stamp "info"
  { nvidia-smi 2>&1 | head -15 || true
    "$PY" - <<'EOF'
import os, sys, torch, jax, mujoco
print("python", sys.version.split()[0], "| torch", torch.__version__, "cuda", torch.cuda.is_available(),
      "| jax", jax.__version__, jax.devices(), "| mujoco", mujoco.__version__, "| cpus", os.cpu_count())
EOF
  } 2>&1 | tee -a "$LOG"
fi

if want cross; then
  stamp "cross-backend tests (MJX vs MuJoCo C; device-resident vs host environment on $DEVICE)"
  # device_env first: its float32 compiles are shared with test_mjx_backend's, before that file turns on float64
  SURROGAIT_TEST_DEVICE=$DEVICE limited "$CROSS_TIMEOUT_S" "$PY" -m pytest -q -rA -p no:cacheprovider \
    --junitxml="$OUT/cross_junit.xml" --durations=8 tests/training/test_device_env.py \
    tests/training/test_mjx_backend.py -k "$CROSS_K" 2>&1 | tee -a "$LOG"
fi

if want scaling; then
  stamp "scaling: raw physics and the device-resident trainer at $COUNTS; the host-roundtrip trainer at $HOST_COUNTS"
  limited "$SCALING_TIMEOUT_S" "$PY" bench/gpu_scaling.py --counts $COUNTS --host-counts $HOST_COUNTS \
    --iterations "$ITERATIONS" --warmup "$WARMUP" --raw-seconds "$RAW_SECONDS" --device "$DEVICE" \
    --out "$OUT" --name gpu_scaling ${TRAINER_ARGS:-} 2>&1 | tee -a "$LOG"
fi

if want walk; then
  stamp "time to walk (WALK_COUNT=$WALK_COUNT, budget $WALK_BUDGET_S s of training)"
  limited "$WALK_TIMEOUT_S" "$PY" bench/gpu_scaling.py --walk-only --walk-count "$WALK_COUNT" \
    --scaling "$OUT/gpu_scaling.json" --walk-budget-s "$WALK_BUDGET_S" --eval-every-s "$EVAL_EVERY_S" \
    --walk-episodes "$WALK_EPISODES" --device "$DEVICE" --out "$OUT" --name gpu_walk ${WALK_ARGS:-} 2>&1 | tee -a "$LOG"
fi
stamp "done; results in $OUT"
ls -la "$OUT" | tee -a "$LOG"
