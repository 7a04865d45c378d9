"""Each rehearsal process's CPU share, and each core's idle time, while a rehearsal runs.

    python bench/investigations/rehearsal_cpu_share.py -- \
        python -m pytest -q tests/rehearsal_sim/test_gazebo_bridge_walk.py

Runs the command after `--` and samples /proc every 0.5 s. It reports over the last `--window` seconds in which
every node it found was running: each process's CPU (% of one core) and each core's idle %. This is where the
Gazebo stand-in stack's 3-CPU floor comes from (harness.gazebo.MIN_CPUS_FULL_STANDIN_REHEARSAL): on 2 cores,
stand-in 43-58 %, bridge 48-62 %, estimator 23-31 %, monitor 30-37 %, policy 10-20 %, and 1-2 % idle per core.
Writes bench/results/rehearsal_cpu_share.{json,md} (`--name` for another name).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.harness.processes import cpu_seconds  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results
NODES = ("gz_standin", "gazebo_bridge", "go2_sim", "go1_sim", "estimator_node", "safety_monitor", "policy_node")


def node_processes() -> dict[int, str]:
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 2 and argv[2] == b"--ros-args" and (name := Path(argv[1].decode()).name) in NODES:
            found[int(pid)] = name
    return found


def core_times() -> dict[str, tuple[int, int]]:
    """(idle + iowait, total) jiffies per core."""
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            f = line.split()
            out[f[0]] = (int(f[4]) + int(f[5]), sum(int(x) for x in f[1:9]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=15.0, help="seconds to report over")
    parser.add_argument("--name", default="rehearsal_cpu_share",
                        help="results file name in bench/results (without .json/.md)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command that runs the rehearsal")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command that runs the rehearsal after --")
    samples = []  # (monotonic s, {pid: (name, cpu s)}, core times)
    run = subprocess.Popen(command)
    while run.poll() is None:
        procs = {pid: (name, cpu_seconds(pid)) for pid, name in node_processes().items()}
        samples.append((time.monotonic(), {p: v for p, v in procs.items() if v[1] is not None}, core_times()))
        time.sleep(0.5)
    most = max((len(s[1]) for s in samples), default=0)
    full = [s for s in samples if most and len(s[1]) == most]
    if len(full) < 2:
        sys.exit(f"rehearsal_cpu_share: no rehearsal nodes seen running together (command exit {run.returncode})")
    last = full[-1]
    first = next(s for s in full if s[0] >= last[0] - args.window)
    span = last[0] - first[0]
    shares = {f"{name} ({pid})": round(100 * (cpu - first[1][pid][1]) / span, 1)
              for pid, (name, cpu) in last[1].items() if pid in first[1]}
    idle = {core: round(100 * (last[2][core][0] - first[2][core][0]) / max(1, last[2][core][1] - first[2][core][1]), 1)
            for core in last[2]}
    result = {"machine": describe_machine(), "command": command, "exit_code": run.returncode,
              "window_s": round(span, 1), "cpu_percent_of_one_core": shares, "idle_percent": idle}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1))
    lines = ["# Rehearsal CPU shares", "", f"Machine: {result['machine']}. Command: `{' '.join(command)}` (exit "
             f"{run.returncode}); the last {span:.1f} s with all {most} nodes running.", "",
             "| process | CPU, % of one core |", "|---|---|"]
    lines += [f"| {name} | {share} |" for name, share in shares.items()]
    lines += [f"| total | {sum(shares.values()):.1f} |", ""]
    lines.append("Idle: " + ", ".join(f"{core} {value} %" for core, value in idle.items()))
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
