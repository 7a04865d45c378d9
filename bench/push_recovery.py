"""Push recovery over the gait cycle: the share of lateral kicks a policy falls from, kick by kick phase.

    python bench/push_recovery.py POLICY.onnx... [--labels a b] [--push-m-s 0.6 0.8] [--timings 10]
                                  [--episodes 32] [--gait pace] [--name push_recovery]

The robustness matrix kicks every robot at the same two instants (left at 4 s, right at 7 s), so its
push cell samples one moment of each robot's gait: whether 1 of 32 robots falls there depends on where
in its stride that instant lands. A kick's effect depends on which legs are on the ground, so this bench
moves the same pair of kicks (left at t, right at t + 3 s) through `--timings` starting times spread
evenly over one gait period after 4 s (`--gait`: a multi-gait file's gait), and counts falls over all of them
(`evaluate_policy`, the policy node's path, the held-out eval seed and command set, as the matrix does). A fall
share is a rate with a binomial spread: the Wilson 95 % interval is reported beside it.

Writes bench/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from machine_info import describe_machine  # noqa: E402

from surrogait_core.policy.onnx_policy import OnnxPolicy  # noqa: E402
from surrogait_train.conditions import EvalCondition  # noqa: E402
from surrogait_train.evaluate import evaluate_policy  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+", type=Path)
    parser.add_argument("--labels", nargs="+", default=None)
    parser.add_argument("--push-m-s", nargs="+", type=float, default=[0.6, 0.8])
    parser.add_argument("--timings", type=int, default=10, help="kick times spread over one gait period")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--gait", default=None, help="a multi-gait policy's gait (default: its contract's)")
    parser.add_argument("--name", default="push_recovery")
    args = parser.parse_args()
    labels = args.labels or [p.stem for p in args.policies]
    if len(labels) != len(args.policies):
        parser.error("--labels needs one label per policy")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine = describe_machine()
    rows = []
    for label, path in zip(labels, args.policies, strict=True):
        contract = OnnxPolicy(path).contract
        gait = args.gait or contract.gait.name
        if gait not in contract.gait_names:
            parser.error(f"{path}: no gait {gait!r}; it walks {', '.join(contract.gait_names)}")
        period_s = contract.gait_named(gait).period_s
        for push in args.push_m_s:
            falls, kicks, per_timing = 0, 0, []
            t0 = time.perf_counter()
            for t in 4.0 + period_s * np.arange(args.timings) / args.timings:
                condition = EvalCondition(f"push {push} m/s at {t:.3f} s", lateral_push_m_s=push,
                                          push_times_s=(float(t), float(t) + 3.0))  # fmt: skip
                result = evaluate_policy(path, num_episodes=args.episodes, episode_s=args.seconds,
                                         condition=condition, gait=gait)  # fmt: skip
                fell = int(np.sum(result.fell))
                falls, kicks = falls + fell, kicks + args.episodes
                per_timing.append(fell)
            low, high = wilson_interval(falls, kicks)
            rows.append({"label": label, "policy": str(path), "gait": gait, "push_m_s": push, "falls": falls,
                         "episodes": kicks,
                         "fall_share": falls / kicks, "wilson95": [low, high], "falls_per_timing": per_timing,
                         "wall_s": round(time.perf_counter() - t0, 1)})  # fmt: skip
            print(f"{label} push {push}: {falls}/{kicks} episodes fell, by timing {per_timing}", flush=True)
    out = RESULTS / args.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(
        {"command": "python " + " ".join(sys.argv), "date": started, "machine": machine, "episodes": args.episodes,
         "seconds": args.seconds, "timings": args.timings, "rows": rows}, indent=2))  # fmt: skip
    lines = [
        "# Push recovery over the gait cycle", "",
        f"Command: `python {' '.join(sys.argv)}`. Date: {started}. Machine: {machine}.", "",
        f"Each cell: {args.timings} kick timings spread over one gait period (left at t, right at t + 3 s, t from 4 s) "
        f"× {args.episodes} episodes of {args.seconds:g} s, the eval's held-out seed and command set; an episode "
        "counts once however many times it falls.", "",
        "| policy | kick (m/s) | episodes that fell | share | Wilson 95 % | falls per timing |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['label']} ({r['gait']}) | {r['push_m_s']:g} | {r['falls']}/{r['episodes']} | "
                     f"{r['fall_share']:.3f} | "
                     f"{r['wilson95'][0]:.3f}-{r['wilson95'][1]:.3f} | {' '.join(map(str, r['falls_per_timing']))} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
