"""The fault log: one JSON object per line, one line per safety event, flushed at once.

Lines: {"time": unix s, "iso": UTC, "event", "cause", "detail", "values", "action"}.
Non-finite numbers (the very thing a NaN fault logs) are written as strings ("nan",
"inf") so every line is strict JSON.
"""

from __future__ import annotations

import datetime
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from surrogait_core.safety.monitor import SafetyEvent


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple | set | frozenset | np.ndarray):
        return [_jsonable(v) for v in (sorted(x) if isinstance(x, set | frozenset) else x)]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


class FaultLog:
    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as e:
            raise OSError(f"cannot open the fault log {self.path}: {e}; set the node's 'fault_log_path' "
                          "parameter to a writable file") from e

    def write(self, event: str, cause: str = "", detail: str = "", values: dict | None = None, action: str = "",
              wall_time: float | None = None) -> dict:
        t = time.time() if wall_time is None else wall_time
        line = {
            "time": round(t, 6),
            "iso": datetime.datetime.fromtimestamp(t, datetime.UTC).isoformat(timespec="milliseconds"),
            "event": event,
            "cause": cause,
            "detail": detail,
            "values": _jsonable(values or {}),
            "action": action,
        }
        self._file.write(json.dumps(line, allow_nan=False) + "\n")
        self._file.flush()
        return line

    def write_event(self, ev: SafetyEvent, wall_time: float | None = None) -> dict:
        return self.write(ev.event, ev.cause, ev.detail, ev.values, ev.action, wall_time)

    def close(self) -> None:
        self._file.close()


def read_fault_log(path: str | Path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
