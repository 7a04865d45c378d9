"""Pre-flight of policies through the demo's session, beside how their own demo sessions ended.

    python bench/preflight.py POLICY.onnx... [--robots 16] [--quick] [--walk-test] [--action-delay-ms 0]
                              [--name preflight]

For each policy: `surrogait_train.preflight.preflight` over `make demo`'s session (walk 0.5 m/s,
turn, walk 1.0 m/s, stop; `--quick`: the short one; `--walk-test`: the rehearsal walk tests' 0.5 and
1.0 m/s), with new targets reaching the motors `--action-delay-ms` late, and, where the policy sits in a demo run folder
(`runs/demo-*/policy.onnx`), that demo's outcome (its metrics.json, the report's "Session:" line). It shows
whether the pre-flight, which the demo now uses to choose what it rehearses, would have told the
demos that were damped from those that completed.

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.demo import demo_segments  # noqa: E402
from surrogait_rehearsal.harness.session import walk_test_segments  # noqa: E402
from surrogait_train.preflight import SessionStep, preflight  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def demo_outcome(policy: Path) -> str:
    """The outcome of the demo session whose run folder holds `policy` (its metrics.json, as the report says it)."""
    metrics = policy.parent / "metrics.json"
    if not metrics.exists():
        return "(not from a demo run)"
    return json.loads(metrics.read_text())["info"]["outcome"]


def preflight_table(rows: list[dict], first: tuple, last: tuple | None = None) -> list[str]:
    """Markdown rows of pre-flight results; `first` / `last`: (header, row -> cell) columns around the rules."""
    extra = [last] if last else []
    head = [first[0], "pre-flight", "falls", "joint speed", "commanded torque", "motor saturation", "tilt",
            "vx RMSE (m/s)", "L/R RMS speed ratio", *(c[0] for c in extra)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [first[1](r), "cleared" if r["cleared"] else "**not cleared**", f"{r['falls']}/{r['robots']}",
                 f"{r['joint_speed']:.2f} ({r['joint_speed_joint']})",
                 f"{r['commanded_torque']:.2f} ({r['commanded_torque_joint']})", f"{r['motor_saturation']:.2f}",
                 f"{r['tilt']:.2f}", f"{r['vx_rmse']:.3f}",
                 f"{r['left_right_imbalance']:.2f} ({r['left_right_imbalance_joint'] or '-'})",
                 *(c[1](r) for c in extra)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+", type=Path)
    parser.add_argument("--robots", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="the demo's --quick session")
    parser.add_argument("--walk-test", action="store_true", help="the walk tests' session instead of the demo's")
    parser.add_argument("--action-delay-ms", type=float, default=0.0, help="sense-to-actuate latency, ms")
    parser.add_argument("--name", default="preflight", help="results file name in bench/results")
    args = parser.parse_args()
    machine = describe_machine()
    segments = walk_test_segments(5.0, stop_s=2.0) if args.walk_test else demo_segments(args.quick)
    session_name = "walk tests'" if args.walk_test else "demo's"
    session = [SessionStep(s.duration_s, s.command) for s in segments]
    rows = []
    for path in args.policies:
        start = time.perf_counter()
        result = preflight(path, session, robots=args.robots, action_delay_s=args.action_delay_ms / 1e3)
        seconds = round(time.perf_counter() - start, 1)
        rows.append({"policy": str(path), "demo_outcome": demo_outcome(path), "seconds": seconds,
                     **result.as_dict()})
        print(f"{path}: {result.summary()} | demo: {rows[-1]['demo_outcome']}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"machine": machine, "robots": args.robots,
                                                           "quick": args.quick, "walk_test": args.walk_test,
                                                           "action_delay_ms": args.action_delay_ms, "rows": rows},
                                                          indent=1))
    lines = [
        f"# Pre-flight through the {session_name} session", "",
        f"Machine: {machine}. Command: `python bench/preflight.py {' '.join(str(p) for p in args.policies)} "
        f"--robots {args.robots}{' --quick' if args.quick else ''}{' --walk-test' if args.walk_test else ''} "
        f"--action-delay-ms {args.action_delay_ms:g} --name {args.name}`.", "",
        f"{args.robots} robots, MuJoCo at the drivers' 2 ms PD step; each rule's peak as a fraction of the safety "
        "monitor's threshold; cleared: no fall and every peak ≤ 0.9.", "",
    ]
    lines += preflight_table(rows, ("policy", lambda r: f"`{r['policy']}`"), ("its demo", lambda r: r["demo_outcome"]))
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
