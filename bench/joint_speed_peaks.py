"""How close a policy's joints come to their speed limits in rehearsal, recorded at the motor rate.

    python bench/joint_speed_peaks.py [--robot go2] [--motor-model on_command] [--runs 5] [--policy P]
                                      [--stall-ms 30]

The safety monitor's `joint_velocity` rule latches damping on a single rt/lowstate sample (500 Hz) over a
joint's limit, so a 50 Hz recording can miss what trips it. This runs the walk rehearsal (the walk test's
session: stand up, 0.5 m/s and 1.0 m/s for 5 s each, stop) `--runs` times with the simulator recording at
500 Hz, and reports for each run the fastest joint's peak as a fraction of its limit, how long it stayed
above 0.9 of it, the three fastest joints, and whether the session ended in a fault. `--stall-ms` stops the
simulator process (SIGSTOP) for that long five times during the walk, 1 s apart, to see whether a stalled
simulator makes the peaks. Writes bench/results/joint_speed_peaks.{json,md} (`--name` for another name).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

from surrogait_core.robot_spec import load_robot_spec  # noqa: E402
from surrogait_rehearsal.harness.nodes import shipped_policy_path, sim_node  # noqa: E402
from surrogait_rehearsal.harness.processes import ProcessGroup  # noqa: E402
from surrogait_rehearsal.harness.session import SessionConfig, SessionFiles, rehearse  # noqa: E402
from surrogait_rehearsal.report import load_session, read_fault_log, simulator_metrics  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DOMAIN = 57
STALLS, STALL_EVERY_S, FIRST_STALL_AFTER_S = 5, 1.0, 3.0  # the first stall 3 s into the walk


def stall_simulator(name: str, stall_s: float):
    """From WALK on (the session's while_walking): the simulator's process group stopped STALLS times."""

    def stall(group: ProcessGroup, _operator, done: threading.Event) -> None:
        if done.wait(FIRST_STALL_AFTER_S):
            return
        for _ in range(STALLS):
            group.pause(stall_s, names=[name])
            if done.wait(STALL_EVERY_S):
                return

    return stall


def one_run(robot: str, motor_model: str, policy: Path, stall_ms: float, workdir: Path) -> dict:
    spec = load_robot_spec(robot)
    sim = sim_node(robot)
    config = SessionConfig(workdir, domain=DOMAIN, robot=robot, policy=policy, operator_name="joint_speed_peaks",
                           params={sim: {"motor_model": motor_model, "log_rate_hz": 500.0}})
    outcome = rehearse(config, while_walking=stall_simulator(sim, stall_ms / 1e3) if stall_ms > 0 else None,
                       log=lambda _: None)
    ended = outcome.error
    faults = [f"{e['cause']}: {e['detail']}" for e in read_fault_log(SessionFiles(workdir).fault_log)
              if e["event"] == "fault"]
    sim = simulator_metrics(load_session(workdir / "session.npz"), workdir / "sim_log.npz")
    with np.load(workdir / "sim_log.npz") as log:
        ratio = np.abs(log["joint_vel"]) / spec.joint_vel_limit  # (rows, joints), rows every 2 ms
    peaks = ratio.max(axis=0)
    worst = int(np.argmax(peaks))
    above = ratio[:, worst] > 0.9
    longest = 0
    run = 0
    for is_above in above:
        run = run + 1 if is_above else 0
        longest = max(longest, run)
    return {"session_error": ended, "faults": faults, "fastest_joint": spec.joint_names[worst],
            "peak_fraction_of_limit": round(float(peaks[worst]), 3), "ms_above_0.9_longest": 2 * longest,
            "physics_max_gap_ms": round(float(sim.get("physics_max_gap_ms", float("nan"))), 1),
            "three_fastest": {spec.joint_names[i]: round(float(peaks[i]), 3) for i in np.argsort(peaks)[::-1][:3]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="go2", choices=["go2", "go1"])
    parser.add_argument("--motor-model", default="on_command", choices=["on_command", "driver"],
                        help="the Go2 simulator's motor model (the Go1's is always driver)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--policy", type=Path, default=None, help="policy file (default: the shipped one)")
    parser.add_argument("--stall-ms", type=float, default=0.0, help="stop the simulator this long, 5 times")
    parser.add_argument("--name", default="joint_speed_peaks", help="results file name in bench/results")
    args = parser.parse_args()
    policy = args.policy or shipped_policy_path(args.robot)
    runs = []
    for k in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="joint_speed_peaks") as tmp:
            runs.append(one_run(args.robot, args.motor_model, policy, args.stall_ms, Path(tmp)))
        print(f"run {k + 1}/{args.runs}: {json.dumps(runs[-1])}", flush=True)
    result = {"machine": describe_machine(), "robot": args.robot, "motor_model": args.motor_model,
              "policy": str(policy), "stall_ms": args.stall_ms, "record_rate_hz": 500.0, "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1))
    lines = ["# Joint-speed peaks in rehearsal (500 Hz recording)", "",
             f"Machine: {result['machine']}. Robot {args.robot}, motor model {args.motor_model}, policy `{policy}`, "
             f"simulator stalls: {f'{STALLS} x {args.stall_ms:g} ms' if args.stall_ms else 'none'}.", "",
             "| run | fastest joint | peak / limit | ms above 0.9 | physics loop's longest gap (ms) | faults |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {k + 1} | {r['fastest_joint']} | {r['peak_fraction_of_limit']} | {r['ms_above_0.9_longest']} | "
              f"{r['physics_max_gap_ms']} | {'; '.join(r['faults']) or 'none'} |" for k, r in enumerate(runs)]
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
