"""Where a policy file came from: the learner that made it, its stages, seeds, samples, training wall-clock and the
commit it was trained at.

Stored in the ONNX file's metadata under its own key, beside the contract: provenance never changes what a
policy means, so it is not part of the contract, and a file without it (every file before it existed) loads as
before and reads as "unknown". A policy made by several stages (a trot, then a randomised fine-tune of it)
lists every stage, oldest first; the file's `learner` is the one learner all its stages share, or "mixed".
"""

from __future__ import annotations

import json
from pathlib import Path

PROVENANCE_KEY = "surrogait_provenance"
LEARNERS = ("differentiable", "ppo")


def learner_of(stages: list[dict]) -> str:
    """The learner every stage shares ("differentiable", "ppo"), "mixed", or "unknown" (a stage without one)."""
    learners = {stage.get("learner", "unknown") for stage in stages}
    if not learners or "unknown" in learners:
        return "unknown"
    return learners.pop() if len(learners) == 1 else "mixed"


def make_provenance(stages: list[dict], commit: str) -> dict:
    return {"learner": learner_of(stages), "stages": stages, "commit": commit}


def write_provenance(onnx_path: Path | str, provenance: dict) -> None:
    """Embed `provenance` (a JSON object) in an existing ONNX file's metadata, replacing any before."""
    import onnx

    if provenance.get("learner") not in (*LEARNERS, "mixed", "unknown"):
        raise ValueError(f"provenance learner {provenance.get('learner')!r}: expected one of {LEARNERS} or mixed")
    model = onnx.load(str(onnx_path))
    kept = [p for p in model.metadata_props if p.key != PROVENANCE_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    entry = model.metadata_props.add()
    entry.key, entry.value = PROVENANCE_KEY, json.dumps(provenance, sort_keys=True)
    tmp = Path(f"{onnx_path}.tmp")
    onnx.save(model, str(tmp))
    tmp.replace(onnx_path)


def read_provenance(onnx_path: Path | str) -> dict | None:
    """The file's provenance, or None for a file exported before provenance was recorded."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    for prop in model.metadata_props:
        if prop.key == PROVENANCE_KEY:
            return json.loads(prop.value)
    return None


def without_provenance(data: bytes) -> bytes:
    """An ONNX file's bytes without its provenance entry: what a policy does, whatever its history says.

    Writing provenance into a file that had none and stripping it again gives back the original bytes, so
    measurements recorded by content hash before a file got its provenance still name it (scripts/results_page.py,
    bench/provenance.py). Bytes that are not an ONNX model, or carry no provenance, come back unchanged."""
    import onnx

    try:
        model = onnx.load_from_string(data)
    except Exception:  # not an ONNX model: nothing to strip
        return data
    if not any(p.key == PROVENANCE_KEY for p in model.metadata_props):
        return data
    kept = [p for p in model.metadata_props if p.key != PROVENANCE_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    return model.SerializeToString()


def describe(provenance: dict | None) -> str:
    """One line for reports: learner, stages, seeds, samples, wall-clock, commit."""
    if not provenance:
        return "provenance unknown (exported before provenance was recorded)"
    stages = provenance.get("stages", [])
    seeds = sorted({s["seed"] for s in stages if "seed" in s})
    samples = sum(s.get("samples", 0) for s in stages)
    minutes = sum(s.get("wall_s", 0.0) for s in stages) / 60
    return (f"learner {provenance.get('learner', 'unknown')}, {len(stages)} stage{'s' * (len(stages) != 1)}, "
            f"seed{'s' * (len(seeds) != 1)} {', '.join(map(str, seeds)) or '?'}, {samples:,} samples, "
            f"{minutes:.1f} min of training, commit {provenance.get('commit', '?')}")
