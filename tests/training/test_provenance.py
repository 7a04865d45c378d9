"""Every exported policy file says where it came from: the learner, each stage's seed, iterations, samples and
wall-clock, and the commit it was trained at; a run started from another file or checkpoint inherits its stages."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

from surrogait_bringup.policies import policies_dir
from surrogait_core.policy.provenance import describe, read_provenance
from surrogait_train.config import load_config
from surrogait_train.export import export_onnx
from surrogait_train.trainer import Trainer

PRETRAINED = policies_dir()


def test_an_exported_run_records_its_learner_stage_and_commit(tmp_path, tiny_overrides):
    trainer = Trainer(load_config(None, [*tiny_overrides, "seed=7"]), tmp_path / "a")
    trainer.train(max_iterations=2, progress=False)
    path = export_onnx(trainer.actor, trainer.env.contract, tmp_path / "a.onnx", trainer.provenance())
    provenance = read_provenance(path)
    assert provenance["learner"] == "differentiable"
    (stage,) = provenance["stages"]
    assert stage["seed"] == 7 and stage["iterations"] == 2 and stage["samples"] == 2 * 6 * 8
    assert stage["wall_s"] > 0 and stage["init_from"] is None
    assert provenance["commit"] and provenance["commit"] != ""
    assert "learner differentiable, 1 stage, seed 7, 96 samples" in describe(provenance)


def test_a_second_stage_lists_the_first_then_itself(tmp_path, tiny_overrides):
    first = Trainer(load_config(None, tiny_overrides), tmp_path / "a")
    first.train(max_iterations=2, progress=False)
    path = export_onnx(first.actor, first.env.contract, tmp_path / "a.onnx", first.provenance())
    second = Trainer(load_config(None, [*tiny_overrides, "seed=3"]), tmp_path / "b")
    second.init_from(path)
    second.train(max_iterations=1, progress=False)
    stages = second.provenance()["stages"]
    assert [s["seed"] for s in stages] == [0, 3] and stages[1]["init_from"] == "a.onnx"
    resumed = Trainer(load_config(None, [*tiny_overrides, "seed=3"]), tmp_path / "b")
    resumed.load_checkpoint(tmp_path / "b" / "checkpoint.pt")  # a resumed run keeps its history
    assert [s["seed"] for s in resumed.provenance()["stages"]] == [0, 3]


def test_a_file_made_before_provenance_reads_as_unknown_and_so_do_runs_started_from_it(tmp_path, tiny_overrides):
    old = tmp_path / "old.onnx"
    trainer = Trainer(load_config(None, tiny_overrides), tmp_path / "a")
    export_onnx(trainer.actor, trainer.env.contract, old)  # no provenance given: as every file before it
    assert read_provenance(old) is None and "unknown" in describe(None)
    tuned = Trainer(load_config(None, tiny_overrides), tmp_path / "b")
    tuned.init_from(old)
    assert tuned.provenance()["learner"] == "unknown"



def _bench_module(name: str):
    path = Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_benchmark_run_exports_its_provenance_too(tmp_path, tiny_overrides):
    """The efficiency benchmarks' policies are candidates to ship: each says which learner made it."""
    bench = _bench_module("sample_efficiency")
    run = bench.DiffSimRun(5, [], dataclasses.asdict(load_config(None, tiny_overrides)), tmp_path / "run")
    try:
        run.train_until(1)
        provenance = read_provenance(run.export(tmp_path / "b.onnx"))
    finally:
        run.close()
    assert provenance["learner"] == "differentiable"
    assert [s["seed"] for s in provenance["stages"]] == [5] and provenance["stages"][0]["samples"] >= 1
