"""What a measurement was made on: the commit of the code and the content hash of each policy file.

A benchmark adds `provenance(policies)` to its results JSON, so `scripts/results_page.py` can tell a
figure measured on the policy shipped now from one measured on a policy since replaced:

    from provenance import provenance
    report.update(provenance([policy_path]))
    # {"commit": "<40 hex>", "commit_dirty": False,
    #  "policy_sha256": {"training/surrogait_train/pretrained/go2_trot.onnx": "<64 hex>"}}

`commit_dirty` says the checkout had uncommitted changes to tracked files when the bench ran, so the
commit alone does not pin the code; bench/results/ does not count (benches run one after another write
there). Paths inside the repository are written relative to its root.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def file_sha256(path: Path) -> str:
    """The policy file's content hash, its provenance entry left out (it never changes what the policy does;
    surrogait_core.policy.provenance.without_provenance): the identity scripts/results_page.py compares."""
    from surrogait_core.policy.provenance import without_provenance

    return hashlib.sha256(without_provenance(Path(path).read_bytes())).hexdigest()


def repo_relative(path: Path, root: Path = ROOT) -> str:
    p = Path(path).resolve()
    return str(p.relative_to(root)) if p.is_relative_to(root) else str(path)


def git_commit(root: Path = ROOT) -> tuple[str | None, bool | None]:
    """(HEAD's full hash, whether tracked files differ from it); (None, None) outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                 ":(exclude)bench/results"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return head.stdout.strip(), bool(status.stdout.strip())


def provenance(policies: Iterable[Path] = (), root: Path = ROOT) -> dict:
    """`commit`, `commit_dirty` and `policy_sha256` (path -> sha256 of the file as it is now)."""
    commit, dirty = git_commit(root)
    return {"commit": commit, "commit_dirty": dirty,
            "policy_sha256": {repo_relative(Path(p), root): file_sha256(Path(p)) for p in policies}}
