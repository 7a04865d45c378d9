"""A policy file's provenance never changes what it is: writing it into a file and stripping it again gives the
original bytes, so a figure measured on the file before it got its provenance still names it by content hash."""

from surrogait_bringup.policies import shipped_policy
from surrogait_core.policy.provenance import describe, read_provenance, without_provenance, write_provenance


def test_provenance_added_and_stripped_gives_back_the_original_bytes(tmp_path):
    # The shipped file carries its own provenance: the file as it was before that is the test's starting point.
    shipped = shipped_policy("go1_trot.onnx")
    assert read_provenance(shipped) is not None, "every shipped policy names how it was made"
    copy = tmp_path / "policy.onnx"
    copy.write_bytes(without_provenance(shipped.read_bytes()))
    assert read_provenance(copy) is None
    original = copy.read_bytes()
    provenance = {"learner": "differentiable", "stages": [{"learner": "differentiable", "seed": 1, "samples": 10}],
                  "commit": "abc"}
    write_provenance(copy, provenance)
    assert copy.read_bytes() != original and read_provenance(copy) == provenance
    assert without_provenance(copy.read_bytes()) == original
    assert without_provenance(original) == original and without_provenance(b"not onnx") == b"not onnx"
    assert "learner differentiable, 1 stage, seed 1, 10 samples" in describe(provenance)
