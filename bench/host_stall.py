"""Whole-host stalls while walking: does the rehearsal ride through them, or does someone damp?

    python bench/host_stall.py [--runs 3] [--stall-ms 110 200] [--stalls 3] [--name host_stall]

A hypervisor can pause every vCPU of a VM at once; a CI run on this 2-core machine once damped after such
a pause of 108 ms ("policy_stalled": the monitor saw the policy node's first command after it, a repeat of
the held targets, before the fresh one). This runs the walk rehearsal (the walk test's session: stand up,
0.5 m/s and 1.0 m/s for 5 s each, stop) `--runs` times per stall length, and from WALK on stops every
rehearsal process group (SIGSTOP) for that long `--stalls` times, 1 s apart, as such a pause does. It
reports whether each session completed, the safety monitor's faults, the monitor's and the policy node's
own-stall notices, falls and the walking velocity error. Writes bench/results/NAME.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.harness.nodes import shipped_policy_path  # noqa: E402
from surrogait_rehearsal.harness.processes import ProcessGroup  # noqa: E402
from surrogait_rehearsal.harness.session import SessionConfig, SessionFiles, rehearse  # noqa: E402
from surrogait_rehearsal.report import fall_metrics, load_session, read_fault_log, tracking_metrics  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DOMAIN = 58
STALL_EVERY_S = 1.0


def stall_every_process(stall_s: float, stalls: int) -> Callable:
    """From WALK on: `stalls` times, every child's process group stopped for `stall_s`, all at once."""

    def stall(group: ProcessGroup, _operator, done: threading.Event) -> None:
        for _ in range(stalls):
            if done.wait(STALL_EVERY_S):
                return
            group.pause(stall_s)

    return stall


def one_run(stall_ms: float, stalls: int, workdir: Path) -> dict:
    outcome = rehearse(SessionConfig(workdir, domain=DOMAIN, operator_name="host_stall"),
                       while_walking=stall_every_process(stall_ms / 1e3, stalls), log=lambda _: None)
    events = read_fault_log(SessionFiles(workdir).fault_log)
    recorded = load_session(workdir / "session.npz")
    policy_log = (workdir / "logs" / "policy_node.log").read_text(errors="replace")
    return {"completed": not outcome.error, "session_error": outcome.error,
            "faults": [f"{e['cause']}: {e['detail']}" for e in events if e["event"] == "fault"],
            "monitor_stall_notices": sum(e["event"] == "monitor_stall" for e in events),
            "policy_stall_notices": policy_log.count("control loop stalled for"),
            "fell": bool(fall_metrics(recorded)["fell"]),
            "walking_vx_rmse": walking_vx_rmse(recorded)}


def walking_vx_rmse(recorded: dict) -> float | None:
    """Over the walking segments, or None when the session ended before any was scored."""
    rmse = tracking_metrics(recorded).get("walking_vx_rmse")
    return None if rmse is None or rmse != rmse else round(float(rmse), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="sessions per stall length")
    parser.add_argument("--stall-ms", type=float, nargs="+", default=[110.0, 200.0])
    parser.add_argument("--stalls", type=int, default=3, help="stalls per session, 1 s apart while walking")
    parser.add_argument("--name", default="host_stall", help="results file name in bench/results")
    args = parser.parse_args()
    rows = []
    for stall_ms in args.stall_ms:
        for k in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="host_stall") as tmp:
                rows.append({"stall_ms": stall_ms, **one_run(stall_ms, args.stalls, Path(tmp))})
            print(f"{stall_ms:g} ms, run {k + 1}/{args.runs}: {json.dumps(rows[-1])}", flush=True)
    result = {"machine": describe_machine(), "robot": "go2", "motor_model": "driver",
              "policy": str(shipped_policy_path("go2")), "stalls_per_session": args.stalls, "runs": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1))
    lines = ["# Whole-host stalls while walking (every rehearsal process stopped at once)", "",
             f"Machine: {result['machine']}. Go2, motor model driver, the shipped policy; {args.stalls} stalls per "
             f"session, {STALL_EVERY_S:g} s apart from WALK on.", "",
             "| stall (ms) | completed | faults | falls | own-stall notices: monitor / policy node | vx RMSE (m/s) |",
             "|---|---|---|---|---|---|"]
    for stall_ms in args.stall_ms:
        runs = [r for r in rows if r["stall_ms"] == stall_ms]
        faults = sorted({f.split(":")[0] for r in runs for f in r["faults"]})
        rmse = ", ".join("-" if r["walking_vx_rmse"] is None else f"{r['walking_vx_rmse']:.3f}" for r in runs)
        lines.append(f"| {stall_ms:g} | {sum(r['completed'] for r in runs)}/{len(runs)} | "
                     f"{', '.join(faults) or 'none'} | {sum(r['fell'] for r in runs)} | "
                     f"{', '.join(str(r['monitor_stall_notices']) for r in runs)} / "
                     f"{', '.join(str(r['policy_stall_notices']) for r in runs)} | "
                     f"{rmse} |")
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
