"""The demo's training recipe, snapshot by snapshot, through the pre-flight: which iterations would it clear?

    python bench/investigations/demo_training_preflight.py [--iterations 175] [--every 25] [--name NAME] [key=value ...]

Trains with `make demo`'s recipe (the robot's trot config + DEMO_TRAINING_OVERRIDES + any key=value
given here) for a fixed number of iterations rather than 120 s: the trainer is deterministic for a
number of iterations, so this is the sequence of policies every demo walks along, and a 120 s demo
stops somewhere in it (136-177 iterations on this 2-core machine). Exports a snapshot every `--every`
iterations and pre-flies each through the demo's session (surrogait_train.preflight), with `eval`'s
nominal tracking beside it.

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: machine_info
from machine_info import describe_machine  # noqa: E402
from preflight import preflight_table  # noqa: E402  (bench/preflight.py)

from surrogait_rehearsal.demo import demo_segments  # noqa: E402
from surrogait_train.api import DEMO_TRAINING_OVERRIDES, snapshots, train_and_export  # noqa: E402
from surrogait_train.config import default_config_path  # noqa: E402
from surrogait_train.preflight import SessionStep, preflight  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results
ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=175)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--robot", default="go2")
    parser.add_argument("--name", default="demo_training_preflight", help="results file name in bench/results")
    parser.add_argument("--workdir", type=Path, default=ROOT / "runs" / "demo_training_preflight")
    parser.add_argument("overrides", nargs="*", help="key=value on top of the demo's recipe")
    args = parser.parse_args()
    machine = describe_machine()
    run_dir = args.workdir / args.name
    overrides = [*DEMO_TRAINING_OVERRIDES[args.robot], *args.overrides]
    start = time.perf_counter()
    train_and_export(overrides, budget_s=0, out_path=run_dir / "policy.onnx",
                     config_path=default_config_path(f"{args.robot}_trot"), run_dir=run_dir / "training",
                     progress=True, snapshot_every=args.every, max_iterations=args.iterations)
    train_s = time.perf_counter() - start
    session = [SessionStep(s.duration_s, s.command) for s in demo_segments()]
    rows = []
    for iteration, path in reversed(snapshots(run_dir / "training")):
        result = preflight(path, session)
        rows.append({"iteration": iteration, **result.as_dict()})
        print(f"iteration {iteration}: {result.summary()}", flush=True)
    command = (f"python bench/investigations/demo_training_preflight.py --iterations {args.iterations} "
               f"--every {args.every} --robot {args.robot} --name {args.name} {' '.join(args.overrides)}").strip()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(
        {"machine": machine, "command": command, "overrides": overrides, "train_s": round(train_s, 1), "rows": rows},
        indent=1))
    lines = [
        "# The demo's training recipe through the pre-flight", "",
        f"Machine: {machine}. Command: `{command}` (recipe: {' '.join(overrides)}; {train_s:.0f} s of training).", "",
        "Each snapshot flown through `make demo`'s session on 16 robots at the drivers' 2 ms PD step; each rule's "
        "peak as a fraction of the safety monitor's threshold; cleared: no fall and every peak ≤ 0.9.", "",
    ]
    lines += preflight_table(rows, ("iteration", lambda r: str(r["iteration"])))
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
