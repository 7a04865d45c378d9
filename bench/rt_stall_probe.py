"""Does this machine stop even its highest-priority real-time threads? Why the Gazebo stand-in stack needs 3 CPUs.

    sudo python bench/rt_stall_probe.py [--seconds 10] [--saturate]

One SCHED_FIFO 99 thread pinned to each CPU sleeps 1 ms at a time and records every wake-up more than 5 ms
late. Nothing of lower real-time priority can delay it; what can is the kernel handing a CPU that real-time
threads saturate to its normal tasks (RT throttling, `kernel.sched_rt_runtime_us`, or since Linux 6.12 the
fair server: 50 ms a second per CPU), a hypervisor, or an interrupt storm. Run it beside a rehearsal to see
whether that rehearsal saturates a core (a 2-core machine running the five-process Gazebo stand-in stack:
40-54 ms stalls about once a second per core, the same length as the silences the safety monitor reported).
`--saturate` makes the case by itself: one SCHED_FIFO 50 busy loop per CPU plus one normal busy process
(measured here: 40-54 ms stalls once a second; with the loops busy 80-90 % of the time instead, none).
Writes bench/results/rt_stall_probe[_saturated].{json,md}. Needs root or CAP_SYS_NICE.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).parent / "results"
LATE_S = 0.005


def _probe(cpu: int, seconds: float, out: dict) -> None:
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
    late, wakes, end = [], 0, time.monotonic() + seconds
    while (start := time.monotonic()) < end:
        time.sleep(0.001)
        lateness = time.monotonic() - start - 0.001
        wakes += 1
        if lateness > LATE_S:
            late.append(round(lateness * 1e3, 1))
    out[cpu] = {"wakes": wakes, "late_wakes": len(late), "worst_ms": sorted(late, reverse=True)[:10]}


def _busy(cpu: int | None, fifo: bool, seconds: float) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    if fifo:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--saturate", action="store_true", help="busy real-time loops on every CPU meanwhile")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except PermissionError:
        sys.exit("rt_stall_probe: SCHED_FIFO is not permitted: run as root or grant CAP_SYS_NICE")
    loads = []
    if args.saturate:
        loads = [mp.Process(target=_busy, args=(cpu, True, args.seconds)) for cpu in cpus]
        loads.append(mp.Process(target=_busy, args=(None, False, args.seconds)))
        for p in loads:
            p.start()
    out: dict[int, dict] = {}
    probes = [threading.Thread(target=_probe, args=(cpu, args.seconds, out)) for cpu in cpus]
    for t in probes:
        t.start()
    for t in probes + loads:
        t.join()
    result = {"machine": describe_machine(), "seconds": args.seconds, "saturated": args.saturate,
              "late_threshold_ms": LATE_S * 1e3, "cpus": {str(c): out[c] for c in cpus}}
    name = "rt_stall_probe_saturated" if args.saturate else "rt_stall_probe"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1))
    lines = [f"# Real-time stalls ({'saturated by busy SCHED_FIFO loops' if args.saturate else 'as the machine is'})",
             "", f"Machine: {result['machine']}. {args.seconds:g} s; a SCHED_FIFO 99 probe per CPU, 1 ms sleeps.", "",
             "| CPU | wake-ups | > 5 ms late | worst (ms) |", "|---|---|---|---|"]
    for c in cpus:
        worst = ", ".join(map(str, out[c]["worst_ms"][:5])) or "-"
        lines.append(f"| {c} | {out[c]['wakes']} | {out[c]['late_wakes']} | {worst} |")
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
