"""One line that says which machine a benchmark ran on, for every results file in bench/results."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_facts() -> dict:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "system": platform.system(),
    }


def describe_machine() -> str:
    """CPU model, core count, OS, Python and the load average when the benchmark started."""
    m = machine_facts()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{m['cpu']}, {m['cores']} cores, {m['system']} {m['kernel']}, "
        f"Python {m['python']}; load average {load:.1f} at start"
    )
