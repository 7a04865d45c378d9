"""How often a hung Gazebo holds up the Gazebo bridge's motor loop: many SIGSTOPs of the stand-in, counted.

    python bench/investigations/bridge_stop_stalls.py [--stops 250] [--stop-s 1.5] [--run-s 1.0] [--no-client]

The bridge's loop must keep running while Gazebo is silent: it notices the silence (state_timeout_s),
stops rt/lowstate and logs "rt/lowstate stopped". `tests/rehearsal_sim/test_gazebo_bridge_process.py`
checks that once per CI run, and once in about fifteen CI runs it failed because the loop ran no cycle for
the whole stop. This starts the Gazebo stand-in, the bridge and (unless --no-client) the robot-side DDS
client the test uses, stops the stand-in `--stops` times, and counts the stops during which the bridge
logged no lapse, and the stalls the bridge logged ("the control loop stalled for N ms"). At the first stop
that blocks, while the stand-in is still stopped, it saves each process's threads (gdb, where installed)
under the work folder, so the call that blocks can be read.
Writes bench/results/bridge_stop_stalls.{json,md}. `bridge_stop_stalls_shm.*` is the run from before the bridge's
participant went onto UDP alone (surrogait_core/runtime/dds_transport.py): 2 of 300 stops blocked, with
the stacks.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.harness.processes import child_env  # noqa: E402
from surrogait_rehearsal.harness.session import Session, SessionConfig  # noqa: E402
from surrogait_rehearsal.sim.gazebo.bridge_core import logged_stalls_ms  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results
CLIENT = ROOT / "tests" / "rehearsal_sim" / "sim_dds_client.py"
LAPSE = "rt/lowstate stopped"


def dump_threads(pid: int, path: Path) -> None:
    """Every thread's native stack of process `pid`, by gdb (absent: a note saying so)."""
    if shutil.which("gdb") is None:
        path.write_text("gdb is not installed: no stacks\n")
        return
    r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"], capture_output=True,
                       text=True, timeout=120)
    path.write_text(r.stdout + r.stderr)


def measure(stops: int, stop_s: float, run_s: float, with_client: bool, domain: int, work: Path) -> dict:
    session = Session(SessionConfig(work, domain=domain, simulator="gazebo-standin", nodes=(), sim_log=False,
                                    niceness=None, operator_name="bridge_stop_stalls"), log=lambda _: None)
    client = None
    blocked: list[int] = []
    try:
        session.start()
        session.wait_ready()
        standin, bridge = session.group["gz_standin"], session.group["gazebo_bridge"]
        if with_client:
            client = subprocess.Popen(
                [sys.executable, str(CLIENT), "--domain", str(domain), "--mode", "monitor", "--duration", "0"],
                stdin=subprocess.PIPE, stdout=(work / "client.log").open("w"), stderr=subprocess.STDOUT,
                env=child_env(domain))
        bridge.wait_for_log("is fresh", 60.0)
        time.sleep(2.0)
        for i in range(stops):
            before = bridge.log.count(LAPSE)
            standin.process.send_signal(signal.SIGSTOP)  # Gazebo hangs
            time.sleep(stop_s)
            if bridge.log.count(LAPSE) == before:
                blocked.append(i)
                if len(blocked) == 1:  # while it is still blocked
                    dump_threads(bridge.pid, work / "bridge_threads.txt")
                    dump_threads(standin.pid, work / "standin_threads.txt")
            standin.process.send_signal(signal.SIGCONT)
            time.sleep(run_s)
            print(f"\rstop {i + 1}/{stops}: {len(blocked)} blocked", end="", flush=True)
        print()
        stalls_ms = logged_stalls_ms(bridge.log)
    finally:
        if client is not None:
            client.kill()
        session.group.kill_all()
        session.stop()
    return {"stops": stops, "stop_s": stop_s, "run_s": run_s, "client": with_client, "blocked_stops": blocked,
            "stalls_logged_ms": stalls_ms, "work_dir": str(work)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stops", type=int, default=250)
    parser.add_argument("--stop-s", type=float, default=1.5)
    parser.add_argument("--run-s", type=float, default=1.0)
    parser.add_argument("--no-client", action="store_true", help="without the robot-side DDS client")
    parser.add_argument("--domain", type=int, default=81)
    parser.add_argument("--out", default=str(RESULTS / "bridge_stop_stalls"))
    args = parser.parse_args()
    machine = describe_machine()
    work = Path(tempfile.mkdtemp(prefix="bridge_stop_stalls_"))
    result = measure(args.stops, args.stop_s, args.run_s, not args.no_client, args.domain, work)
    result.update(machine=machine, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  command="python bench/investigations/bridge_stop_stalls.py " + " ".join(sys.argv[1:]))
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    n, blocked = result["stops"], result["blocked_stops"]
    lines = [
        "# Gazebo bridge: loop stalls while the Gazebo stand-in is stopped",
        "",
        f"Machine: {machine}. Date: {result['date']}. Command: `{result['command']}`.",
        "",
        "| stops | each | robot-side client | stops with no lapse logged (loop blocked) | stalls the bridge logged |",
        "|---|---|---|---|---|",
        f"| {n} | {result['stop_s']:g} s stopped, {result['run_s']:g} s running "
        f"| {'yes' if result['client'] else 'no'} "
        f"| {len(blocked)} {blocked if blocked else ''} | {result['stalls_logged_ms'] or 'none'} (ms) |",
        "",
        "A blocked stop's threads (gdb) are in the work folder named in the JSON.",
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
