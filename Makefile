# The two commands: `make demo` (the main job) and `make test` (the tests).
# Both set up .venv first if needed (scripts/setup.sh is idempotent).
PY := .venv/bin/python
# The nodes are console scripts in .venv/bin; the demo and the tests start them by name.
export PATH := $(CURDIR)/.venv/bin:$(PATH)
export MUJOCO_GL ?= osmesa
export PYOPENGL_PLATFORM ?= osmesa
# Python keeps the bytecode it compiles (scripts/setup.sh compiles nothing ahead): where the machine sets
# PYTHONDONTWRITEBYTECODE, every rehearsal node would compile its imports again at every start.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test test-mjx test-jazzy lint bench

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) scripts/demo.py $(DEMO_ARGS)

# The tests that start processes and the pure computations side by side (scripts/run_tests.py); PYTEST_ARGS
# naming test paths runs just those, in one pytest.
test: setup
	$(PY) scripts/run_tests.py -q $(PYTEST_ARGS)

# The MJX backend and the device-resident environment (the GPU path, on this CPU): in a target of their own, since
# their XLA compiles take minutes where JAX's compile cache (~/.cache/surrogait/jax) is cold (scripts/run_tests.py).
test-mjx: setup
	$(PY) scripts/run_tests.py --target mjx -q $(PYTEST_ARGS)

# The Gazebo path's rehearsals with the MuJoCo stand-in (its bridge's processes, its walk, its launch files): a
# target of their own, so `make test` stays inside its 8 minutes (scripts/run_tests.py).
test-gazebo: setup
	$(PY) scripts/run_tests.py --target gazebo -q $(PYTEST_ARGS)

# The second tested target: ROS 2 Jazzy on Python 3.12, the deployment side (scripts/test_jazzy.sh).
test-jazzy:
	@bash scripts/test_jazzy.sh $(PYTEST_ARGS)

lint: setup
	.venv/bin/ruff check .
