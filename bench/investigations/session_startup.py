"""How long a rehearsal session takes to start: `Session.start()` until the simulator's ground truth reaches the
operator, over many start-ups, each in a fresh process as `make demo` and the tests start one.

    flock /tmp/surrogait-processes.lock python bench/investigations/session_startup.py [--starts 20] [--name NAME]

A session with no robot nodes (the operator, the session recorder and the MuJoCo simulator on loopback DDS) is
started and stopped `--starts` times. Start-up once took 1.0-1.9 s or 3.6 s, nothing between: a Fast DDS discovery
answer lost on loopback, found again only at the peer's next 3 s announcement (docs/rehearsal-log.md, 2026-12-06
(2)); a second mode seconds above the first would be that again.

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
DOMAIN = 58


def one_start(domain: int) -> float:
    """Seconds from Session.start() to the first ground truth at the operator (start() waits for it)."""
    from surrogait_rehearsal.harness.operator import Operator
    from surrogait_rehearsal.harness.session import Session, SessionConfig

    operator = Operator(domain, log=None)
    config = SessionConfig(Path(tempfile.mkdtemp(prefix="session-startup-")), domain=domain, nodes=(), sim_log=False)
    session = Session(config, operator=operator, log=lambda line: None)
    t0 = time.monotonic()
    try:
        session.start()
        return time.monotonic() - t0
    finally:
        session.stop(grace_s=10.0)
        operator.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--name", default="session_startup")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one start-up, its seconds
    args = parser.parse_args()
    if args.one:
        print(f"STARTUP_S {one_start(DOMAIN):.3f}", flush=True)
        return
    seconds = []
    for i in range(args.starts):
        out = subprocess.run([sys.executable, __file__, "--one"], capture_output=True, text=True, timeout=120)
        found = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("STARTUP_S ")]
        if out.returncode != 0 or not found:
            raise SystemExit(f"start-up {i + 1} failed (exit {out.returncode}):\n{out.stderr[-2000:]}")
        seconds.append(float(found[0]))
        print(f"start-up {i + 1}/{args.starts}: {seconds[-1]:.2f} s", flush=True)
    command = "python bench/investigations/session_startup.py " + " ".join(sys.argv[1:])
    report = {"machine": describe_machine(), "command": command, "seconds": seconds,
              "median_s": round(float(np.median(seconds)), 3), "max_s": round(max(seconds), 3),
              "over_2_5_s": sum(s > 2.5 for s in seconds)}
    RESULTS.joinpath(f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    RESULTS.joinpath(f"{args.name}.md").write_text(markdown(report))


def markdown(report: dict) -> str:
    s = sorted(report["seconds"])
    return "\n".join([
        f"# Rehearsal session start-up ({report['machine']})", "", f"`{report['command']}`", "",
        f"{len(s)} start-ups of a session with no robot nodes (operator, session recorder, MuJoCo simulator), each in "
        "a fresh process: seconds from `Session.start()` to the simulator's first ground truth at the operator.", "",
        "| start-ups | median s | fastest s | slowest s | over 2.5 s |", "|---|---|---|---|---|",
        f"| {len(s)} | {report['median_s']:.2f} | {s[0]:.2f} | {s[-1]:.2f} | {report['over_2_5_s']} |", "",
        "Every start-up, sorted (s): " + ", ".join(f"{x:.2f}" for x in s), "",
    ])


if __name__ == "__main__":
    main()
