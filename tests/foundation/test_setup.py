"""`make test` and `make demo` set up first; with nothing changed that costs only seconds."""

import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_second_setup_run_is_a_quick_no_op():
    subprocess.run(["bash", "scripts/setup.sh"], cwd=REPO, check=True, capture_output=True)
    start = time.monotonic()
    result = subprocess.run(["bash", "scripts/setup.sh"], cwd=REPO, check=True, capture_output=True, text=True)
    assert time.monotonic() - start < 20.0
    assert "installing" not in result.stdout


def test_ci_runs_the_readme_test_command_and_ruff_and_refuses_an_empty_suite():
    ci = (REPO / ".ci/run").read_text()
    assert "make test" in ci
    assert "make lint" in ci  # ruff check
    assert "make test" in (REPO / "README.md").read_text()
    assert '"$rc" -eq 5' in ci
    assert "make test-jazzy" in ci, "the second tested target (Jazzy, Python 3.12) runs in CI"
    jazzy = (REPO / "scripts/test_jazzy.sh").read_text()
    assert "-eq 5" in jazzy and "sha256sum" in jazzy, "refuses an empty run; reuses its venv while unchanged"
