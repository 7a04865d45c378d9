"""Does this machine stop even its highest-priority real-time threads? Why the Gazebo stand-in stack needs 3 CPUs.

    sudo python bench/investigations/rt_stall_probe.py [--seconds 10] [--saturate]

One SCHED_FIFO 99 thread pinned to each CPU sleeps 1 ms at a time and records every wake-up more than 5 ms
late. Nothing of lower real-time priority can delay it; what can is the kernel handing a CPU that real-time
threads saturate to its normal tasks (RT throttling, `kernel.sched_rt_runtime_us`, or since Linux 6.12 the
fair server: 50 ms a second per CPU), a hypervisor, or an interrupt storm. Run it beside a rehearsal to see
whether that rehearsal saturates a core (a 2-core machine running the five-process Gazebo stand-in stack:
40-54 ms stalls about once a second per core, the same length as the silences the safety monitor reported).
`--saturate` makes the case by itself: one SCHED_FIFO 50 busy loop per CPU plus one normal busy process
(measured here: 40-54 ms stalls once a second; with the loops busy 80-90 % of the time instead, none).
It also lists the stalls that hit every CPU at once (a hypervisor's pause does; the starvation guard does only
when real-time work saturates every CPU together) and the steal time /proc/stat counts meanwhile.
Writes bench/results/rt_stall_probe[_saturated].{json,md} (or --name). Needs root or CAP_SYS_NICE.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results
LATE_S = 0.005
MACHINE_WIDE_MIN_S = 0.02  # a stall this long on every CPU at once is the whole machine's (see `machine_wide`)


def steal_s() -> float:
    """CPU time the hypervisor gave to others while this machine's CPUs wanted it (/proc/stat, all CPUs)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else float("nan")


def machine_wide(stalls: dict[int, list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """The stalls of every CPU at once: (start, overlap in ms) where each CPU's probe was stopped at that time
    for at least MACHINE_WIDE_MIN_S. A hypervisor's pause stops every CPU together; the RT-starvation guard
    stops each CPU on its own clock, so it shows here only when real-time work saturated every CPU at once
    (then the stalls are its length, 40-50 ms, on a machine that is busy by the CPU shares)."""
    cpus = list(stalls)
    found = []
    for start, length in stalls[cpus[0]]:
        lo, hi = start, start + length
        for other in cpus[1:]:
            overlap = [(max(lo, s), min(hi, s + n)) for s, n in stalls[other] if s < hi and s + n > lo]
            if not overlap:
                break
            lo, hi = max(overlap, key=lambda o: o[1] - o[0])
        else:
            if hi - lo >= MACHINE_WIDE_MIN_S:
                found.append((round(lo, 3), round((hi - lo) * 1e3, 1)))
    return found


def _probe(cpu: int, seconds: float, out: dict) -> None:
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
    late, stalls, wakes, end = [], [], 0, time.monotonic() + seconds
    while (start := time.monotonic()) < end:
        time.sleep(0.001)
        lateness = time.monotonic() - start - 0.001
        wakes += 1
        if lateness > LATE_S:
            late.append(round(lateness * 1e3, 1))
            stalls.append((start + 0.001, lateness))
    out[cpu] = {"wakes": wakes, "late_wakes": len(late), "worst_ms": sorted(late, reverse=True)[:10],
                "stalls": stalls}


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
    parser.add_argument("--name", help="results file name (default rt_stall_probe[_saturated])")
    parser.add_argument("--during", default="", help="what ran beside the probe, for the report")
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
    steal0 = steal_s()
    probes = [threading.Thread(target=_probe, args=(cpu, args.seconds, out)) for cpu in cpus]
    for t in probes:
        t.start()
    for t in probes + loads:
        t.join()
    steal = steal_s() - steal0
    together = machine_wide({c: out[c].pop("stalls") for c in cpus})
    result = {"machine": describe_machine(), "seconds": args.seconds, "saturated": args.saturate,
              "late_threshold_ms": LATE_S * 1e3, "cpus": {str(c): out[c] for c in cpus},
              "during": args.during, "steal_s": round(steal, 2),
              "machine_wide_stalls": [{"t": t, "ms": ms} for t, ms in together]}
    name = args.name or ("rt_stall_probe_saturated" if args.saturate else "rt_stall_probe")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1))
    condition = "saturated by busy SCHED_FIFO loops" if args.saturate else (args.during or "as the machine is")
    lines = [f"# Real-time stalls ({condition})",
             "", f"Machine: {result['machine']}. {args.seconds:g} s; a SCHED_FIFO 99 probe per CPU, 1 ms sleeps.", "",
             "| CPU | wake-ups | > 5 ms late | worst (ms) |", "|---|---|---|---|"]
    for c in cpus:
        worst = ", ".join(map(str, out[c]["worst_ms"][:5])) or "-"
        lines.append(f"| {c} | {out[c]['wakes']} | {out[c]['late_wakes']} | {worst} |")
    lines += ["", f"Hypervisor steal over the run: {steal:.2f} s of CPU time. Stalls on every CPU at once "
              f"(≥ {MACHINE_WIDE_MIN_S * 1e3:.0f} ms): " + (", ".join(f"{ms:g} ms" for _, ms in together) or "none")
              + "."]
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
