"""Where in the demo's session do policies fall, and does slewing the command (as the policy node does) stop it?

    python bench/investigations/stop_from_speed.py POLICY.onnx... [--rates 0 2 1 0.5] [--name stop_from_speed]

For each policy: the pre-flight (`surrogait_train.preflight`, 16 robots at the drivers' 2 ms PD step) over the
demo's session cut after each segment (walk 0.5 m/s, turn, walk 1.0 m/s, stop), the commands followed at once; then
the whole session with its commands slewed at each `--rates` value (m/s² and rad/s² alike; 0 = at once). Asked
because Go1 demo snapshots fell in 16 of 16 pre-flight robots while the eval, which never stops a robot, saw none.

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.demo import demo_segments  # noqa: E402
from surrogait_train.preflight import SessionStep, preflight  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+", type=Path)
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 2.0, 1.0, 0.5])
    parser.add_argument("--name", default="stop_from_speed")
    args = parser.parse_args()
    machine = describe_machine()
    segments = demo_segments()
    session = [SessionStep(s.duration_s, s.command) for s in segments]
    rows = []
    for policy in args.policies:
        row = {"policy": str(policy), "falls_up_to": {}, "slewed": {}}
        for n, segment in enumerate(segments, start=1):
            r = preflight(policy, session[:n], command_slew_rate=(0.0, 0.0, 0.0))
            row["falls_up_to"][segment.name] = r.falls
        for rate in args.rates:
            r = preflight(policy, session, command_slew_rate=(rate, rate, rate))
            row["slewed"][f"{rate:g}"] = {"falls": r.falls, "worst": round(r.worst, 3), "cleared": r.cleared,
                                          "joint_position": round(r.joint_position, 3)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    command = "python bench/investigations/stop_from_speed.py " + " ".join(
        [*(str(p) for p in args.policies), "--rates", *(f"{r:g}" for r in args.rates), "--name", args.name])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"machine": machine, "command": command, "rows": rows},
                                                          indent=1) + "\n")
    names = [s.name for s in segments]
    head = ["policy", *(f"falls after '{n}'" for n in names), *(f"slewed {r:g}: falls · worst" for r in args.rates)]
    lines = ["# Falls at the stop, and the command's slew", "", f"Machine: {machine}. Command: `{command}`.", "",
             "Pre-flight, 16 robots: falls (of 16) when the session is cut after each segment, commands followed at "
             "once; then the whole session with its commands slewed at each rate (m/s² for vx, vy; rad/s² for the "
             "yaw rate; 0 = at once), falls and the worst rule's peak as a fraction of the monitor's threshold.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [Path(row["policy"]).name, *(str(row["falls_up_to"][n]) for n in names),
                 *(f"{row['slewed'][f'{r:g}']['falls']} · {row['slewed'][f'{r:g}']['worst']:.2f}" for r in args.rates)]
        lines.append("| " + " | ".join(cells) + " |")
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
