"""docs/results.md is generated from bench/results/*.json and must say what each figure was measured on.

A figure whose policy file has been replaced since is marked STALE; what the record and the git history
cannot establish is marked unknown, never guessed. The committed page is what the script writes now.
"""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


page = _load("results_page", ROOT / "scripts" / "results_page.py")
prov_helper = _load("provenance", ROOT / "bench" / "provenance.py")

POLICY = "training/surrogait_train/pretrained/go2_trot.onnx"


def test_the_committed_results_page_is_what_the_script_writes_now():
    committed = (ROOT / page.PAGE).read_text()
    assert page.render(ROOT) == committed, (
        "docs/results.md is not current: run `python scripts/results_page.py` and commit it "
        "(a results file or a policy file changed since it was written)")


# ------------------------------------------------------------------------------ a repository of its own
def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "test@example.com")
    git(tmp_path, "config", "user.name", "test")
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / POLICY).parent.mkdir(parents=True)
    return tmp_path


def commit(repo: Path, files: dict[str, bytes | dict], message: str) -> str:
    for rel, content in files.items():
        data = json.dumps(content, indent=1).encode() if isinstance(content, dict) else content
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
        git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def robustness_result(policy: str, vx_rmse: float, **extra) -> dict:
    cell = {"falls": 0, "episodes": 32, "vx_rmse": vx_rmse, "yaw_rate_rmse": 0.1, "meets_targets": True}
    results = {"p": {"path": policy, "cells": {"nominal": cell}}}
    return {"benchmark": "robustness", "machine": "test", "results": results, **extra}


def status_of(repo: Path, results_file: str, policy: str = POLICY):
    p = page.Provenance(repo)
    try:
        fp = p.of_file(repo / "bench" / "results" / results_file)
        return fp, p.policy(fp, policy)
    finally:
        p.git.close()


def test_a_figure_measured_on_the_policy_file_as_it_is_now_is_current(repo):
    c1 = commit(repo, {POLICY: b"policy v1", "bench/results/r.json": robustness_result(POLICY, 0.1)}, "measure")
    fp, status = status_of(repo, "r.json")
    assert fp.commit == c1 and fp.commit_text.startswith("≤ ")
    assert status.status == "current"


def test_a_figure_measured_on_a_policy_replaced_since_is_stale_and_names_the_replacing_commit(repo):
    commit(repo, {POLICY: b"policy v1", "bench/results/r.json": robustness_result(POLICY, 0.1)}, "measure")
    c2 = commit(repo, {POLICY: b"policy v2"}, "replace the policy")
    c3 = commit(repo, {POLICY: b"policy v3"}, "replace it again")
    _, status = status_of(repo, "r.json")
    assert status.status == "STALE"
    assert f"replaced in {c2[:7]}, {c3[:7]}" in status.text


def test_a_policy_moved_away_and_back_unchanged_is_not_counted_as_replaced(repo):
    commit(repo, {POLICY: b"policy v1", "bench/results/r.json": robustness_result(POLICY, 0.1)}, "measure")
    git(repo, "rm", "-q", POLICY)
    git(repo, "commit", "-q", "-m", "move it out")
    commit(repo, {POLICY: b"policy v1"}, "move it back")
    _, status = status_of(repo, "r.json")
    assert status.status == "current"


def test_a_commit_that_only_rewrites_text_does_not_move_the_measurement_commit(repo):
    c1 = commit(repo, {POLICY: b"policy v1", "bench/results/r.json": robustness_result("/abs/" + POLICY, 0.1)},
                "measure")
    commit(repo, {POLICY: b"policy v2"}, "replace the policy")
    commit(repo, {"bench/results/r.json": robustness_result(POLICY, 0.1)}, "relative paths only")
    fp, status = status_of(repo, "r.json")
    assert fp.commit == c1
    assert status.status == "STALE", "the numbers were measured on v1, whatever commit rewrote the paths"


def test_a_remeasurement_after_the_replacement_is_current_again(repo):
    commit(repo, {POLICY: b"policy v1", "bench/results/r.json": robustness_result(POLICY, 0.1)}, "measure")
    commit(repo, {POLICY: b"policy v2"}, "replace the policy")
    c3 = commit(repo, {"bench/results/r.json": robustness_result(POLICY, 0.2)}, "re-measure")
    fp, status = status_of(repo, "r.json")
    assert fp.commit == c3 and status.status == "current"


def test_a_recorded_hash_and_commit_are_used_as_recorded(repo):
    commit(repo, {POLICY: b"policy v2"}, "the policy")
    recorded = {"commit": "f" * 40, "commit_dirty": True, "policy_sha256": {POLICY: page.sha256(b"policy v1")}}
    commit(repo, {"bench/results/r.json": robustness_result(POLICY, 0.1, **recorded)}, "measure")
    fp, status = status_of(repo, "r.json")
    assert fp.commit_text == "fffffff + uncommitted changes (recorded)"
    assert status.status == "STALE" and "(recorded)" in status.text


def test_an_absolute_path_in_a_checkout_whose_location_has_one_of_our_folder_names_maps_onto_the_file(repo):
    (repo / "docs").mkdir()
    (repo / "docs" / "x.md").write_text("a top-level folder named docs")
    commit(repo, {"docs/x.md": b"docs", POLICY: b"policy v1",
                  "bench/results/r.json": robustness_result("/work/wt/docs/" + POLICY, 0.1)}, "measure")
    _, status = status_of(repo, "r.json", "/work/wt/docs/" + POLICY)
    assert status.path == POLICY and status.status == "current"


def test_a_policy_outside_the_repository_cannot_be_checked(repo):
    commit(repo, {"bench/results/r.json": robustness_result("runs/x/policy.onnx", 0.1)}, "measure")
    _, status = status_of(repo, "r.json", "runs/x/policy.onnx")
    assert status.status == "unknown" and "x/policy.onnx" in status.text


def test_a_results_file_not_committed_as_it_is_has_no_commit(repo):
    commit(repo, {POLICY: b"policy v1", "bench/results/r.json": robustness_result(POLICY, 0.1)}, "measure")
    (repo / "bench" / "results" / "r.json").write_text(json.dumps(robustness_result(POLICY, 0.3)))
    fp, status = status_of(repo, "r.json")
    assert fp.commit is None and "not committed" in fp.commit_text
    assert status.status == "unknown"


def test_the_page_lists_a_stale_figure_up_front(repo):
    commit(repo, {POLICY: b"policy v1", "bench/results/robustness.json": robustness_result(POLICY, 0.1)}, "measure")
    commit(repo, {POLICY: b"policy v2"}, "replace the policy")
    text = page.render(repo)
    stale = text.split("## Stale figures", 1)[1].split("\n## ", 1)[0]
    assert "robustness" in stale and "go2_trot.onnx" in stale
    assert "1 current" not in text and "**1 stale**" in text


# --------------------------------------------------------------------------------- the benches' helper
def test_the_benches_record_the_commit_and_each_policy_files_hash(repo):
    head = commit(repo, {POLICY: b"policy v1"}, "the policy")
    record = prov_helper.provenance([repo / POLICY], root=repo)
    assert record == {"commit": head, "commit_dirty": False, "policy_sha256": {POLICY: page.sha256(b"policy v1")}}
    (repo / "bench" / "results" / "other.json").write_text("{}")
    git(repo, "add", "bench/results/other.json")
    assert prov_helper.provenance([], root=repo)["commit_dirty"] is False, "results files are not code"
    (repo / POLICY).write_bytes(b"policy v1, edited")
    assert prov_helper.provenance([], root=repo)["commit_dirty"] is True
