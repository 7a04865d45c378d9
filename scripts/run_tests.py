"""`make test`: the suite as two pytest runs side by side, the tests that start processes and the pure computations.

    python scripts/run_tests.py [pytest options]          # both halves at once; exit 0 only if both pass
    python scripts/run_tests.py [pytest options] PATH...  # the tests named, in one run
    python scripts/run_tests.py --target NAME [pytest options]  # the files of `make test-NAME`, in one run

The tests that start real processes or open DDS, ROS or UDP (a rehearsal needs the machine's real time, fixed DDS
domains and UDP ports) run one at a time in one pytest run, in file order, as ever; the pure computations
(training, the core's unit tests, the nodes' logic on synthetic samples, the docs) run in a second pytest at the
same time, at the lowest CPU priority: nice 19 in a session of their own at 19 (where Linux shares the CPU between
sessions first, a niceness alone ranks a process only within its session, and the "nice 19" half took a third of
the CPU from the rehearsals' normal-priority processes: docs/rehearsal-log.md 2026-12-07 (6)). The rehearsal's
processes, real-time or not, then preempt them. They run on `PURE_WORKERS` pytest-xdist workers, a file to a
worker: one pytest is one core, and the rehearsals, paced by real time, leave much of the machine idle. Which
half a test file belongs to is decided here from what its module uses (a process, a node, a wire), not from its
folder, so a new test needs no marker: the rehearsals are the long pole, and the pure tests beside them in the
node folders (the estimator's minute of synthetic standing, the safety rules) would only lengthen it. A file that
starts processes yet needs no real time and holds nothing a rehearsal uses says so (`BESIDE_REHEARSALS = "why"`)
and runs beside them too. The process
half is printed as it runs; the other half's output follows once it is done.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from surrogait_core.runtime.realtime import set_session_niceness

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
# What a module uses that opens a wire (DDS, ROS, UDP on the robots' fixed ports) or starts the nodes: such a file
# starts processes wherever it is.
WIRE_HINTS = re.compile(r"\bimport rclpy|\brclpy\.|socket\.socket\(|\bDomainParticipant\(|\bProcessGroup\(|"
                        r"\bSession\(|\bOperator\(|robot_interface|unitree_legged_sdk")
# In the folders of the nodes, the simulator and the demo, what else starts or drives them (an import of a wire
# library, a helper, a subprocess, a launch file); a file there that names none of it, nor any of the above,
# tests their logic on synthetic samples.
NODE_TEST_DIRS = {"rehearsal_sim", "policy", "estimator", "safety", "demo", "launch"}
NODE_HINTS = re.compile(r"\brclpy\b|\bsocket\b|\bChannelFactory|\bunitree_sdk2py\b|\bcyclonedds\b|\brehearse\w*|"
                        r"\bfault_suite_run\b|\bsubprocess\b|\bPopen\b|\bUDP\b|\bspin\w*\(|launch|\brun_demo\b")


# A file that starts processes but needs neither real time nor anything a rehearsal holds (its DDS domain is
# its own, its ports ephemeral) says so, with the reason, and runs beside the rehearsals: a node refusing bad
# parameters, Ray's workers killed and retried.
BESIDE_REHEARSALS = re.compile(r"^BESIDE_REHEARSALS = \S", re.MULTILINE)


# A file whose tests have a target of their own says so (`OWN_TARGET = "make test-NAME: why"`) and is in neither
# half; `--target NAME` runs that target's files, and .ci/run runs every such target. `make test-mjx`: the MJX
# backend and the device-resident environment, whose XLA compiles take minutes on a machine without JAX's compile
# cache (a fresh clone's CI: `make test` 665 s with them, 8 min is its budget). `make test-gazebo`: the Gazebo
# path's rehearsals with the MuJoCo stand-in (the bridge's processes, its walk, its launch files), 75 s of
# real-time sessions that took the serial half to 488 s on a slow day; the Gazebo path is an optional simulator.
OWN_TARGET = re.compile(r"""^OWN_TARGET = \(?\s*["']make test-([\w-]+):""", re.MULTILINE)


PURE_WORKERS = 2  # pytest-xdist workers for the pure computations (each file's tests stay on one worker)


def own_target(path: Path) -> str | None:
    """The name of the target a test file belongs to (`make test-NAME`), None for `make test`'s halves."""
    match = OWN_TARGET.search(path.read_text(errors="replace"))
    return match.group(1) if match else None


def own_target_files(target: str | None = None) -> list[str]:
    """The test files of `make test-TARGET` (of every own target where None), as paths relative to the
    repository."""
    return [str(p.relative_to(ROOT)) for p in sorted(TESTS.rglob("test_*.py"))
            if (name := own_target(p)) is not None and target in (None, name)]


def starts_processes(path: Path) -> bool:
    text = path.read_text(errors="replace")
    return WIRE_HINTS.search(text) is not None or (path.parent.name in NODE_TEST_DIRS
                                                  and NODE_HINTS.search(text) is not None)


def runs_serially(path: Path) -> bool:
    """Must this file run in the serial half, one at a time with the rehearsals?"""
    return starts_processes(path) and BESIDE_REHEARSALS.search(path.read_text(errors="replace")) is None


def halves() -> tuple[list[str], list[str]]:
    """(the test files that run serially, the others), as paths relative to the repository."""
    files = [p for p in sorted(TESTS.rglob("test_*.py")) if own_target(p) is None]
    processes = [str(p.relative_to(ROOT)) for p in files if runs_serially(p)]
    others = [str(p.relative_to(ROOT)) for p in files if not runs_serially(p)]
    return processes, others


def main(argv: list[str]) -> int:
    pytest = [sys.executable, "-m", "pytest"]
    if "--target" in argv:
        at = argv.index("--target")
        target, rest = argv[at + 1], argv[:at] + argv[at + 2:]
        files = own_target_files(target)
        if not files:
            print(f"run_tests: no test file names `make test-{target}` as its own target", file=sys.stderr)
            return 2
        return subprocess.call([*pytest, *rest, *files], cwd=ROOT)
    if any(not a.startswith("-") and (ROOT / a.split("::")[0]).exists() for a in argv):
        return subprocess.call([*pytest, *argv], cwd=ROOT)  # the tests named: one run
    processes, others = halves()
    with tempfile.TemporaryFile("w+") as buffered:
        workers = ["-n", str(PURE_WORKERS), "--dist", "loadfile"]
        computations = subprocess.Popen([*pytest, *workers, *argv, *others], cwd=ROOT, stdout=buffered,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                        preexec_fn=lambda: set_session_niceness(19))
        try:
            process_code = subprocess.call([*pytest, *argv, *processes], cwd=ROOT)
            computation_code = computations.wait()
        finally:
            if computations.poll() is None:
                computations.kill()
        buffered.seek(0)
        print(f"\n--- the pure computations ({len(others)} files), run meanwhile ---", flush=True)
        print(buffered.read(), end="", flush=True)
    print(f"--- tests that start processes: {'passed' if process_code == 0 else f'exit {process_code}'}; "
          f"pure computations: {'passed' if computation_code == 0 else f'exit {computation_code}'}", flush=True)
    return process_code or computation_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
