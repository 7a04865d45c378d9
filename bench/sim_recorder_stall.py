"""How long the simulator's physics loop waits on its recording: the longest `SimRecorder.maybe_record` call.

    python bench/sim_recorder_stall.py [--sim-seconds 20]

go2_sim and the Gazebo stand-in call `maybe_record` after every physics step (500 Hz) on their real-time
thread; whatever it costs, rt/lowstate waits for. This steps the simulator (no processes, no DDS) in real time
for `--sim-seconds` at record rates of 50 Hz (the demo's) and 500 Hz, so the recorder's periodic saves come
as often as in a rehearsal, and reports the longest call and the 99.9th percentile, beside the cost of the
physics step itself. The safety monitor faults on a
lowstate older than 50 ms (2.5 control periods), so a recording must never come near that.
Writes bench/results/sim_recorder_stall.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig  # noqa: E402
from surrogait_rehearsal.sim.recorder import SimRecorder  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def measure(rate_hz: float, sim_seconds: float, workdir: Path) -> dict:
    sim = Go2Sim(SimConfig(initial_pose="stand"))
    recorder = SimRecorder(workdir / f"sim_{rate_hz:g}hz.npz", sim, rate_hz=rate_hz)
    steps = int(round(sim_seconds / sim.model.opt.timestep))
    record_s, step_s = np.empty(steps), np.empty(steps)
    t_wall = time.monotonic()
    dt = sim.model.opt.timestep
    for k in range(steps):
        time.sleep(max(0.0, t_wall + k * dt - time.monotonic()))  # real time: saves are paced by the wall clock
        t0 = time.perf_counter()
        sim.step(None)
        t1 = time.perf_counter()
        recorder.maybe_record(None, lambda: (0, 0), True)
        t2 = time.perf_counter()
        step_s[k], record_s[k] = t1 - t0, t2 - t1
    t_close = time.perf_counter()
    recorder.close()
    return {"record_rate_hz": rate_hz, "rows": recorder.num_rows, "wall_s": round(time.monotonic() - t_wall, 1),
            "record_max_ms": round(record_s.max() * 1e3, 2),
            "record_p999_ms": round(float(np.percentile(record_s, 99.9)) * 1e3, 3),
            "calls_over_5ms": int(np.count_nonzero(record_s > 0.005)),
            "step_p50_ms": round(float(np.median(step_s)) * 1e3, 3),
            "close_ms": round((time.perf_counter() - t_close) * 1e3, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim-seconds", type=float, default=20.0)
    parser.add_argument("--name", default="sim_recorder_stall")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(rate, args.sim_seconds, Path(tmp)) for rate in (50.0, 500.0)]
    result = {"machine": describe_machine(), "sim_seconds": args.sim_seconds, "results": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1))
    lines = ["# The physics loop's wait on its recording (SimRecorder.maybe_record)", "",
             f"Machine: {result['machine']}. {args.sim_seconds:g} s of simulated time per rate, one call after each "
             "500 Hz physics step, in real time.", "",
             "| record rate | rows | longest call (ms) | p99.9 (ms) | calls > 5 ms | physics step p50 (ms) "
             "| close (ms) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['record_rate_hz']:g} Hz | {r['rows']} | {r['record_max_ms']} | {r['record_p999_ms']} | "
                     f"{r['calls_over_5ms']} | {r['step_p50_ms']} | {r['close_ms']} |")
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
