"""How often a node hangs when the rehearsal stops it: the simulator and a node started and stopped, N times.

    python bench/node_stops.py [--stops 40] [--node estimator_node] [--run-s 5]

Once (2026-12-04, the third session of scripts/gait_videos.py) the state estimator logged its "stopped" line
and then did not exit: the harness killed it 33 s later and the demo ended NOT COMPLETED. This repeats what
the demo does around that moment: start go2_sim, start the node on the same DDS domain, let it run for
--run-s, stop both as the demo does (`ProcessGroup.stop_all`: SIGINT, then SIGTERM, then SIGKILL), and count
the stops whose node did not exit 0 on SIGINT, with the time each stop took. A hung node writes its threads'
stacks to its log before it is killed (surrogait_rehearsal.harness.processes.dump_stacks); the logs of every
failed stop stay in the work folder named in the JSON.
Writes bench/results/node_stops.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.harness.nodes import DEPLOYMENT_NODES  # noqa: E402
from surrogait_rehearsal.harness.session import Session, SessionConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
GRACE_S = 30.0  # the demo's (ProcessGroup.stop_all's default)


def one_stop(node: str, run_s: float, domain: int, work: Path) -> dict:
    # The nodes' built-in defaults and the simulator at SCHED_FIFO 30, as when the result was recorded.
    config = SessionConfig(work, domain=domain, nodes=(node,), params_files=False, sim_log=False, niceness=None,
                           params={"go2_sim": {"sched_fifo_priority": 30}}, operator_name="node_stops")
    session = Session(config, log=lambda _: None)
    try:
        session.start()
        session.wait_ready()
        time.sleep(run_s)
        start = time.monotonic()
        session.group.stop_all(grace_s=GRACE_S)
        stop_s = time.monotonic() - start
        child, sim = session.group[node], session.group["go2_sim"]
    finally:
        session.stop(grace_s=0.0, term_s=None)
    return {"exit_code": child.process.returncode, "sim_exit_code": sim.process.returncode, "stop_s": stop_s,
            "stacks_in_log": "Current thread" in child.log}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stops", type=int, default=40)
    parser.add_argument("--node", default="estimator_node", choices=DEPLOYMENT_NODES)
    parser.add_argument("--run-s", type=float, default=5.0, help="how long the node runs before each stop")
    parser.add_argument("--domain", type=int, default=82)
    parser.add_argument("--out", default=str(RESULTS / "node_stops"))
    args = parser.parse_args()
    machine = describe_machine()
    work = Path(tempfile.mkdtemp(prefix="node_stops_"))
    stops, failed = [], []
    for i in range(args.stops):
        run_dir = work / f"stop_{i:03d}"
        r = one_stop(args.node, args.run_s, args.domain, run_dir)
        stops.append(r)
        if r["exit_code"] == 0 and r["sim_exit_code"] == 0:
            shutil.rmtree(run_dir, ignore_errors=True)  # keep only the logs of the stops that went wrong
        else:
            failed.append(i)
        print(f"\rstop {i + 1}/{args.stops}: {len(failed)} did not exit cleanly", end="", flush=True)
    print()
    stop_s = sorted(r["stop_s"] for r in stops)
    result = {"node": args.node, "stops": stops, "failed": failed, "run_s": args.run_s, "work_dir": str(work),
              "machine": machine, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": "python bench/node_stops.py " + " ".join(sys.argv[1:])}
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"# Stopping {args.node} (and go2_sim) as the demo does",
        "",
        f"Machine: {machine}. Date: {result['date']}. Command: `{result['command']}`.",
        "",
        "| stops | node ran | did not exit 0 on SIGINT | stop time: median · max (s) |",
        "|---|---|---|---|",
        f"| {args.stops} | {args.run_s:g} s | {len(failed)} {failed if failed else ''} "
        f"| {stop_s[len(stop_s) // 2]:.2f} · {stop_s[-1]:.2f} |",
        "",
        f"A stop that does not end within {GRACE_S:.0f} s is escalated (SIGTERM, SIGKILL) after the node has written "
        "its threads' stacks to its log; those logs are in the work folder named in the JSON.",
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
