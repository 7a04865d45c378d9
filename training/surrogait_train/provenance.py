"""A training run's provenance record (surrogait_core.policy.provenance stores it in the exported file).

A stage is one training run: its learner, seed, iterations, samples (robots x steps), training wall-clock, robot
count, the config overrides that differ from the shipped defaults are in the run folder's config.yaml. A run
started from another (`--init-from` a checkpoint or a policy file) inherits that one's stages.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import torch

from surrogait_core.policy.provenance import read_provenance


def git_commit() -> str:
    """The commit of the source tree this package runs from ("+dirty" with uncommitted changes), or "unknown"."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def stages_of(path: Path | str) -> list[dict]:
    """The stages that made a run's starting point: a checkpoint's or a policy file's (unknown if not recorded)."""
    path = Path(path)
    if path.suffix == ".onnx":
        provenance = read_provenance(path)
        if provenance is None:
            return [{"learner": "unknown", "file": path.name}]
        return list(provenance.get("stages", []))
    ckpt = torch.load(path, weights_only=False, map_location="cpu")
    return list(ckpt.get("provenance_stages", [{"learner": "unknown", "file": path.name}]))
