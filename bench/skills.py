"""Skills: a policy's gaits × terrain courses, judged as issue 14 asks (JSON + md + PNG grid).

    python bench/skills.py POLICY.onnx [--gaits trot pace ...] [--terrains flat rough slope stairs]
        [--episodes 32] [--seconds 12] [--out bench/results/skills]
    python bench/skills.py --report-only [--out bench/results/skills]   # re-render md + png from the JSON

One cell (gait, terrain) is one `evaluate_policy(path, gait=..., terrain=...)` call (the deployment
path: PolicyRunner + onnxruntime on a batch of MuJoCo robots): on flat ground the eval's command set
(bound and gallop over vx 0.5-1.5 m/s), on a course straight ahead (vx 0.6-1.0 m/s; bound and gallop
0.5-1.5). Gaits default to the policy's own (its contract's `gaits`, or its one `gait`).

Targets (issue 14): every gait WALKS on flat ground by the eval's definition (0 falls, vx RMSE ≤
0.15 m/s, yaw-rate RMSE ≤ 0.2 rad/s); trot crosses rough ground and slopes in ≥ 95 % of episodes
and stairs in ≥ 90 %. Other cells are reported, not judged.

Writes OUT.json (machine, date, command, per cell the fall rate, crossed rate, RMSEs, WALKS, wall
seconds; errors kept) after every cell, OUT.md and OUT.png (crossed rate / WALKS per cell).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CROSS_TARGETS = {("trot", "rough"): 0.95, ("trot", "slope"): 0.95, ("trot", "stairs"): 0.90}


def target_of(gait: str, terrain: str) -> str | None:
    if terrain == "flat":
        return "WALKS"
    if (gait, terrain) in CROSS_TARGETS:
        return f"crossed ≥ {CROSS_TARGETS[gait, terrain]:.0%}"
    return None


def meets(cell: dict) -> bool | None:
    """True / False against the cell's target, None where the issue sets none."""
    if target_of(cell["gait"], cell["terrain"]) is None:
        return None
    if "error" in cell:
        return False
    if cell["terrain"] == "flat":
        return bool(cell["walks"])
    return cell["crossed_rate"] is not None and cell["crossed_rate"] >= CROSS_TARGETS[cell["gait"], cell["terrain"]]


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, fmt)


def markdown(report: dict) -> str:
    cells = {(c["gait"], c["terrain"]): c for c in report["cells"]}
    gaits, terrains = report["gaits"], report["terrains"]
    lines = [f"# Skills: gaits × terrain ({report['policy']})", "",
             f"Machine: {report['machine']}. Date: {report['date']}. Command: `{report['command']}`.", "",
             f"{report['episodes']} episodes × {report['seconds']:g} s per cell, the eval's held-out seed. Cell: "
             "falls · vx RMSE (m/s) · yaw-rate RMSE (rad/s) on flat ground (WALKS: 0 falls, vx ≤ 0.15, yaw ≤ "
             "0.2); on a course, walked straight ahead: crossed (share of robots past its end standing) · falls (a "
             "robot's run ends when it falls or passes the finish line, 0.3 m past the course's end). "
             "✓ / ✗: the issue's target met / missed; no mark: no target set.", "",
             "| gait | " + " | ".join(terrains) + " |", "|---|" + "---|" * len(terrains)]
    for gait in gaits:
        row = []
        for terrain in terrains:
            c = cells.get((gait, terrain))
            if c is None:
                row.append("")
                continue
            if "error" in c:
                row.append(f"✗ error: {c['error'][:60]}")
                continue
            mark = {True: "✓ ", False: "✗ ", None: ""}[meets(c)]
            falls = f"{c['falls']}/{c['episodes']}"
            if terrain == "flat":
                row.append(f"{mark}{falls} · {_num(c['vx_rmse'])} · {_num(c['yaw_rate_rmse'])}")
            else:
                row.append(f"{mark}crossed {_num(c['crossed_rate'], '.0%')} · falls {falls}")
        lines.append(f"| {gait} | " + " | ".join(row) + " |")
    judged = [meets(c) for c in report["cells"] if meets(c) is not None]
    lines += ["", f"Targets met: {sum(judged)}/{len(judged)} cells."]
    misses = [shortfall(c) for c in report["cells"] if meets(c) is False]
    lines += [f"Missed: {'; '.join(misses)}." if misses else "Missed: none."]
    return "\n".join(lines) + "\n"


def shortfall(cell: dict) -> str:
    """A missed cell, its target and by how much it misses."""
    name = f"{cell['gait']} on {cell['terrain']}"
    if "error" in cell:
        return f"{name} (error)"
    if cell["terrain"] == "flat":
        from surrogait_train.evaluate import WALK_VX_RMSE, WALK_YAW_RMSE

        short = [f"{cell['falls']}/{cell['episodes']} fell (0 allowed)"] if cell["falls"] else []
        for key, label, limit in (("vx_rmse", "vx RMSE", WALK_VX_RMSE), ("yaw_rate_rmse", "yaw-rate RMSE",
                                                                         WALK_YAW_RMSE)):
            value = cell[key]
            if value is None:
                short.append(f"no {label} (every robot fell)")
            elif value > limit:
                short.append(f"{label} {value:.3f} > {limit:g} (by {value - limit:.3f})")
        return f"{name} does not WALK: {', '.join(short)}"
    target = CROSS_TARGETS[cell["gait"], cell["terrain"]]
    crossed = cell["crossed_rate"] or 0.0
    points = round((target - crossed) * 100)
    return f"{name} crossed {crossed:.0%} against ≥ {target:.0%} ({points} point{'s' * (points != 1)} short)"


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    gaits, terrains = report["gaits"], report["terrains"]
    cells = {(c["gait"], c["terrain"]): c for c in report["cells"]}
    score = np.full((len(gaits), len(terrains)), np.nan)
    for i, g in enumerate(gaits):
        for j, t in enumerate(terrains):
            c = cells.get((g, t))
            if c and "error" not in c:
                score[i, j] = (1.0 - c["fall_rate"]) if t == "flat" else c["crossed_rate"]
    fig, ax = plt.subplots(figsize=(1.6 * len(terrains) + 2, 0.7 * len(gaits) + 1.5))
    ax.imshow(score, vmin=0, vmax=1, cmap="RdYlGn")
    ax.set_xticks(range(len(terrains)), terrains)
    ax.set_yticks(range(len(gaits)), gaits)
    for i, g in enumerate(gaits):
        for j, t in enumerate(terrains):
            c = cells.get((g, t))
            if c is None or "error" in c:
                continue
            text = ("WALKS" if c["walks"] else "no") if t == "flat" else f"{c['crossed_rate']:.0%}"
            ax.text(j, i, text, ha="center", va="center", fontsize=9)
            if meets(c) is False:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
    ax.set_title("flat: WALKS (colour: no falls); courses: share crossed")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(report))


def main(argv: list[str] | None = None) -> int:
    from surrogait_core.policy.contract import read_contract
    from surrogait_core.terrain import TERRAINS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("policy", nargs="?")
    ap.add_argument("--gaits", nargs="*", default=None, help="default: the policy's gaits")
    ap.add_argument("--terrains", nargs="*", default=list(TERRAINS), choices=TERRAINS)
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--out", type=Path, default=RESULTS / "skills")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    if args.report_only:
        report = json.loads(args.out.with_suffix(".json").read_text())
        write(report, args.out)
        plot(report, args.out.with_suffix(".png"))
        return 0
    if not args.policy:
        ap.error("a policy file is needed (or --report-only)")
    from surrogait_train.evaluate import evaluate_policy

    gaits = args.gaits or list(read_contract(args.policy).gait_names)
    report = {"policy": args.policy, "machine": describe_machine(),
              "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "command": "python bench/skills.py " + shlex.join(argv if argv is not None else sys.argv[1:]),
              "episodes": args.episodes, "seconds": args.seconds, "gaits": gaits, "terrains": args.terrains,
              "cells": []}
    total = len(gaits) * len(args.terrains)
    for k, (gait, terrain) in enumerate([(g, t) for g in gaits for t in args.terrains], start=1):
        start = time.monotonic()
        cell = {"gait": gait, "terrain": terrain}
        try:
            r = evaluate_policy(args.policy, num_episodes=args.episodes, episode_s=args.seconds, gait=gait,
                                terrain=terrain)
            cell.update(episodes=r.episodes, fall_rate=r.fall_rate, falls=int(round(r.fall_rate * r.episodes)),
                        crossed_rate=r.crossed_rate, vx_rmse=r.vx_rmse if math.isfinite(r.vx_rmse) else None,
                        yaw_rate_rmse=r.yaw_rate_rmse if math.isfinite(r.yaw_rate_rmse) else None, walks=r.walks)
        except Exception as e:  # one broken cell must not lose the others
            cell["error"] = f"{type(e).__name__}: {e}"
        cell["wall_s"] = round(time.monotonic() - start, 1)
        report["cells"].append(cell)
        write(report, args.out)
        verdict = meets(cell)
        print(f"[{k}/{total}] {gait} on {terrain}: "
              + ("error" if "error" in cell else
                 f"falls {cell['falls']}/{cell['episodes']}, crossed {_num(cell['crossed_rate'], '.0%')}, "
                 f"vx RMSE {_num(cell['vx_rmse'])}")
              + ("" if verdict is None else f" — target {'met' if verdict else 'MISSED'}"), flush=True)
    plot(report, args.out.with_suffix(".png"))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
