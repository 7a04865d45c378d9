"""The fault log is strict JSON lines, flushed per event, with non-finite numbers as strings."""

import json

import numpy as np
import pytest

from surrogait_core.safety import FaultLog, SafetyEvent, read_fault_log


def test_lines_are_strict_json_and_flushed(tmp_path):
    path = tmp_path / "sub" / "log.jsonl"
    log = FaultLog(path)
    log.write("start", values={"thresholds": {"a": 1.0}}, action="OK")
    log.write_event(SafetyEvent(1.0, "fault", "command_not_finite", "NaN in q",
                                {"q": [np.float64("nan"), 1.0], "x": np.inf, "fields": {"q"}}, "latch DAMP"))
    # Flushed: readable before close.
    lines = read_fault_log(path)
    assert [ln["event"] for ln in lines] == ["start", "fault"]
    assert lines[1]["values"] == {"q": ["nan", 1.0], "x": "inf", "fields": ["q"]}
    assert set(lines[1]) == {"time", "iso", "event", "cause", "detail", "values", "action"}
    for raw in path.read_text().splitlines():
        json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    log.close()


def test_unwritable_path_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match="fault_log_path"):
        FaultLog(blocker / "log.jsonl")
