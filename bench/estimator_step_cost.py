"""CPU time of one `StateEstimator.step` (the estimator node's per-sample work, 500 times a second).

    python bench/estimator_step_cost.py [--samples 4000] [--repeats 5]

Steps the ROS-free estimator through a synthetic trot (tests/estimator/synthetic_robot.py: feet
alternating between stance and swing, so the Kalman update, the slip gate and the contact logic all run)
in a tight loop, no processes, no DDS. Reports the best of `--repeats` runs per step (the least disturbed
by the rest of the machine). Writes bench/results/estimator_step_cost.{json,md} (`--name` for another name).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from estimator.synthetic_robot import SyntheticRobot  # noqa: E402
from machine_info import describe_machine  # noqa: E402

from surrogait_core.estimator import StateEstimator  # noqa: E402
from surrogait_core.robot_spec import load_robot_spec  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DT_S = 0.002


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--name", default="estimator_step_cost", help="results file name in bench/results")
    args = parser.parse_args()
    spec = load_robot_spec("go2")
    robot = SyntheticRobot(spec, base_vel_w=(0.5, 0.0, 0.0), trot=True)
    samples = [robot.sample(k * DT_S) for k in range(args.samples)]
    best_s = float("inf")
    for _ in range(args.repeats):
        estimator = StateEstimator(spec)
        start = time.perf_counter()
        for sample in samples:
            estimator.step(sample)
        best_s = min(best_s, time.perf_counter() - start)
    per_step_ms = 1e3 * best_s / args.samples
    result = {"machine": describe_machine(), "samples": args.samples, "repeats": args.repeats,
              "per_step_ms": round(per_step_ms, 4), "share_of_a_core_at_500_hz": round(per_step_ms / 2.0, 3)}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1))
    lines = ["# State-estimator step cost", "", f"Machine: {result['machine']}. `python bench/estimator_step_cost.py "
             f"--samples {args.samples} --repeats {args.repeats}`: a synthetic trot at 0.5 m/s, best of the runs.", "",
             "| per step (ms) | share of a core at 500 Hz |", "|---|---|",
             f"| {result['per_step_ms']} | {100 * result['share_of_a_core_at_500_hz']:.1f} % |"]
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
