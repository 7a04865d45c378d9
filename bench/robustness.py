"""Robustness matrix: ONNX policies evaluated under a fixed set of perturbed worlds (issue 13).

    python bench/robustness.py POLICY.onnx [POLICY2.onnx ...] [--labels old new]
        [--conditions "nominal" "delay 20 ms" ...] [--gaits trot pace ...] [--episodes 32] [--seconds 10] [--threads 2]
        [--out bench/results/robustness]
    python bench/robustness.py --report-only [--out bench/results/robustness]   # re-render md + png from the JSON

    # e.g. the shipped policy against a new one, over the whole matrix:
    python bench/robustness.py ros2_ws/src/surrogait_bringup/policies/go2_trot.onnx runs/new/policy.onnx \\
        --labels shipped new

What: every policy is run under every condition of `ROBUSTNESS_MATRIX` (training/surrogait_train/
conditions.py: nominal, friction 0.25, +3 kg, -1 kg, kp x 0.8, delay 10 ms, delay 20 ms, push
0.6 m/s, flipping vy and yaw commands, the other contact model), or the `--conditions` named, or
with `--beyond-the-matrix` the harder `BEYOND_THE_MATRIX` (a 0.8 m/s kick, delay with low friction,
mass with weak motors) used to choose among checkpoints that meet the matrix.

How: one cell (policy, condition) is one `evaluate_policy(path, condition=...)` call, the trainer's
eval path (the policy node's PolicyRunner and onnxruntime on a batch of MuJoCo robots): `--episodes`
robots (default 32) for `--seconds` each (default 10), the held-out eval seed and fixed command set, so
every cell of every policy sees the same commands and starting states. RMSEs are over the non-fallen
robots' control steps after the first second.

Targets per cell (issue 13 item 3): 0 falls, vx RMSE <= 0.2 m/s, yaw-rate RMSE <= 0.3 rad/s
(`meets_targets`). Per policy the report also says in how many cells it meets them and whether it
WALKS under the nominal condition by the eval's own, stricter definition (EvalResult.walks: 0 falls,
vx RMSE <= 0.15 m/s, yaw-rate RMSE <= 0.2 rad/s).

Labels default to the file stems (parent folder / stem where stems collide). Progress: a line per cell.

Writes OUT.json (machine, date, command line, episodes, seconds, targets, conditions, and per policy
and condition the fall rate, falls, vx / vy / yaw-rate RMSE, WALKS, meets-targets and wall seconds of the
cell; a cell that raised keeps its error), OUT.md (one table, rows = conditions, columns = policies)
after every finished cell, and OUT.png (heat maps of falls, vx RMSE and yaw-rate RMSE, failing cells
framed in red) after every finished policy, so an interrupted bench keeps what it finished.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import shlex
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine, machine_facts  # noqa: E402
from provenance import provenance  # noqa: E402

from surrogait_train.evaluate import EVAL_SEED  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
TARGETS = {"falls": 0, "vx_rmse": 0.2, "yaw_rate_rmse": 0.3}  # issue 13 item 3, per cell
WALK_TEXT = "eval's WALKS: 0 falls, vx RMSE ≤ 0.15 m/s, yaw-rate RMSE ≤ 0.2 rad/s"


# ------------------------------------------------------------------------------------------ judgement
def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def metric_ok(cell: dict | None, key: str, targets: dict = TARGETS) -> bool:
    """Whether one metric ("falls", "vx_rmse" or "yaw_rate_rmse") of a cell is within its target."""
    if cell is None or "error" in cell or not _finite(cell.get(key)):
        return False
    return cell[key] <= targets[key]


def meets_targets(cell: dict | None, targets: dict = TARGETS) -> bool:
    """A cell meets the targets: no falls, vx RMSE and yaw-rate RMSE within theirs (missing / error / NaN: no)."""
    return all(metric_ok(cell, k, targets) for k in ("falls", "vx_rmse", "yaw_rate_rmse"))


def cell_from_result(result, wall_s: float) -> dict:
    """The JSON cell of an EvalResult: fall rate and count, RMSEs (non-finite: null), WALKS, wall seconds."""

    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None  # all robots fell: no RMSE (strict JSON has no inf)

    cell = {
        "fall_rate": float(result.fall_rate),
        "falls": int(sum(result.fell)),
        "episodes": int(result.episodes),
        "vx_rmse": num(result.vx_rmse),
        "vy_rmse": num(result.vy_rmse),
        "yaw_rate_rmse": num(result.yaw_rate_rmse),
        "walks": bool(result.walks),
        "wall_s": round(wall_s, 2),
    }
    cell["meets_targets"] = meets_targets(cell)
    return cell


def policy_summary(report: dict, label: str) -> dict:
    """Cells meeting the targets (k of the report's conditions), cells run, and nominal WALKS (None: not run)."""
    cells = report["results"].get(label, {}).get("cells", {})
    conditions = report["conditions"]
    nominal = cells.get("nominal")
    return {
        "met": sum(meets_targets(cells.get(c), report["targets"]) for c in conditions),
        "run": sum(c in cells for c in conditions),
        "total": len(conditions),
        "nominal_walks": None if nominal is None or "error" in nominal else bool(nominal["walks"]),
        "wall_s": sum(c.get("wall_s", 0.0) for c in cells.values()),
    }


# ------------------------------------------------------------------------------------------ rendering
def _fmt(x: float | None) -> str:
    return f"{x:.3f}" if _finite(x) else "all fell"


def cell_text(cell: dict | None, targets: dict = TARGETS) -> str:
    """One table cell: mark, falls/episodes, vx RMSE, yaw-rate RMSE; a metric off its target in bold."""
    if cell is None:
        return "not run"
    if "error" in cell:
        return "error: " + " ".join(cell["error"].split()).replace("|", "\\|")[:80]

    def part(key: str, text: str) -> str:
        return text if metric_ok(cell, key, targets) else f"**{text}**"

    mark = "✓" if meets_targets(cell, targets) else "✗"
    falls = part("falls", f"{cell['falls']}/{cell['episodes']}")
    vx, yaw = part("vx_rmse", _fmt(cell["vx_rmse"])), part("yaw_rate_rmse", _fmt(cell["yaw_rate_rmse"]))
    return f"{mark} {falls} · {vx} · {yaw}"


def markdown(report: dict) -> str:
    t = report["targets"]
    labels = list(report["results"])
    lines = [
        "# Robustness matrix",
        "",
        f"Command: `{report['command']}`. Date: {report['date']}. Machine: {report['machine']}.",
        "",
        f"Every cell: `evaluate_policy` (the deployment path: PolicyRunner + onnxruntime on MuJoCo) under one "
        f"condition, {report['episodes']} episodes × {report['seconds']:g} s, the held-out eval seed "
        f"{report.get('seed', EVAL_SEED)} and the fixed "
        "command set (same for every cell); RMSEs of the instantaneous body velocities of non-fallen robots "
        "after the first second.",
        "",
        f"Targets per cell (issue 13): {t['falls']} falls, vx RMSE ≤ {t['vx_rmse']:g} m/s, yaw-rate RMSE ≤ "
        f"{t['yaw_rate_rmse']:g} rad/s.",
        "",
    ]
    for label in labels:
        s = policy_summary(report, label)
        walks = {None: "not run", True: "yes", False: "no"}[s["nominal_walks"]]
        pending = f" ({s['total'] - s['run']} not run)" if s["run"] < s["total"] else ""
        lines.append(
            f"- **{label}** (`{report['results'][label]['path']}`): meets the targets in "
            f"**{s['met']}/{s['total']}** cells{pending}; nominal WALKS ({WALK_TEXT}): **{walks}**; "
            f"{s['wall_s']:.0f} s of evaluation."
        )
    lines += [
        "",
        "| condition | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for c in report["conditions"]:
        row = [cell_text(report["results"][label]["cells"].get(c), t) for label in labels]
        lines.append(f"| {c} | " + " | ".join(row) + " |")
    lines += [
        "",
        "Cell: falls/episodes · vx RMSE (m/s) · yaw-rate RMSE (rad/s); ✓ meets all three targets, ✗ misses at "
        "least one (the missed value in bold); 'all fell': no robot left to measure an RMSE on.",
        "",
        f"Figure: `{Path(report.get('out', 'robustness')).name}.png`.",
        "",
    ]
    return "\n".join(lines)


METRICS = (  # key, title, annotation
    ("falls", "falls (of {episodes})", "{:d}"),
    ("vx_rmse", "vx RMSE, m/s (target ≤ {vx_rmse:g})", "{:.3f}"),
    ("yaw_rate_rmse", "yaw-rate RMSE, rad/s (target ≤ {yaw_rate_rmse:g})", "{:.3f}"),
)


def plot(report: dict, path: Path) -> None:
    """Heat maps of falls, vx RMSE and yaw-rate RMSE (rows = conditions, columns = policies).

    Colours diverge at the target (green within, red beyond; falls: green only at 0, any fall red); a
    value off the target is also bold and framed in red; an RMSE of a cell where every robot fell takes
    the worst colour; grey: not run or errored.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.patches import Rectangle

    labels, conditions, t = list(report["results"]), report["conditions"], report["targets"]
    nr, nc = len(conditions), max(len(labels), 1)
    fig, axes = plt.subplots(1, 3, figsize=(3.0 + 3 * (1.2 * nc + 0.6), 1.6 + 0.45 * nr), squeeze=False)
    cmap = matplotlib.colormaps["RdYlGn_r"].with_extremes(bad="lightgrey")
    for ax, (key, title, fmt) in zip(axes[0], METRICS, strict=True):
        # colour value per cell: NaN (grey) where not run or errored; an RMSE nobody was left for is worst
        shade = np.full((nr, nc), np.nan)
        texts = [["not run"] * nc for _ in range(nr)]
        for j, label in enumerate(labels):
            for i, c in enumerate(conditions):
                cell = report["results"][label]["cells"].get(c)
                if cell is None:
                    continue
                if "error" in cell:
                    texts[i][j] = "error"
                elif not _finite(cell.get(key)):
                    texts[i][j], shade[i, j] = "all fell", np.inf
                else:
                    texts[i][j] = fmt.format(int(cell[key]) if key == "falls" else cell[key])
                    shade[i, j] = cell[key]
        if key == "falls":  # 0 green; any fall clearly red, darker towards all of them
            episodes = max(float(report["episodes"]), 1.0)
            shade = np.where(shade > 0, 0.8 + 0.2 * np.minimum(shade, episodes) / episodes, shade)
            norm = TwoSlopeNorm(vmin=0.0, vcenter=0.5, vmax=1.0)
        else:  # green up to the target, red beyond it
            finite = shade[np.isfinite(shade)]
            top = max(2.0 * t[key], float(finite.max()) if finite.size else 0.0)
            shade = np.minimum(shade, top)
            norm = TwoSlopeNorm(vmin=0.0, vcenter=t[key], vmax=top)
        ax.imshow(np.ma.masked_invalid(shade), cmap=cmap, norm=norm, aspect="auto")
        for j, label in enumerate(labels):
            for i, c in enumerate(conditions):
                cell = report["results"][label]["cells"].get(c)
                bad = cell is not None and not metric_ok(cell, key, t)
                rgb = cmap(norm(shade[i, j]))[:3] if np.isfinite(shade[i, j]) else (0.83, 0.83, 0.83)
                dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 0.45
                ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=8,
                        color="white" if dark else "black", fontweight="bold" if bad else "normal")  # fmt: skip
                if bad:
                    ax.add_patch(Rectangle((j - 0.44, i - 0.42), 0.88, 0.84, fill=False, ec="red", lw=2.0, zorder=3))
        ax.set_title(title.format(episodes=report["episodes"], **t), fontsize=10)
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(nr), conditions if ax is axes[0][0] else [""] * nr, fontsize=8)
        ax.tick_params(left=ax is axes[0][0])
        ax.set_xticks(np.arange(-0.5, nc), minor=True)
        ax.set_yticks(np.arange(-0.5, nr), minor=True)
        ax.grid(which="minor", color="white", lw=1.5)
        ax.tick_params(which="minor", length=0)
    fig.suptitle(
        f"Robustness matrix: {report['episodes']} episodes × {report['seconds']:g} s per cell "
        "(green: within the target, red: beyond; framed and bold: off the target)",
        fontsize=11,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(report: dict, out: Path, png: bool = True) -> None:
    """OUT.json and OUT.md (and OUT.png unless png=False)."""
    report = {**report, "out": str(out)}  # the md names the png next to it
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2, allow_nan=False))
    out.with_suffix(".md").write_text(markdown(report))
    if png:
        plot(report, out.with_suffix(".png"))


# ------------------------------------------------------------------------------------------ running
def default_labels(paths: list[Path]) -> list[str]:
    """File stems; parent/stem for stems shared by several files; a #n suffix if that still collides."""
    stems = [p.stem for p in paths]
    labels = [f"{p.parent.name}/{p.stem}" if stems.count(p.stem) > 1 else p.stem for p in paths]
    return [label if labels.count(label) == 1 else f"{label}#{i}" for i, label in enumerate(labels, 1)]


def run_matrix(policies: list[Path], labels: list[str], conditions, args: argparse.Namespace, command: str,
               gaits: list[str | None] | None = None) -> dict:
    """`gaits`: per policy, the gait a multi-gait file walks (None: its contract's default)."""
    from surrogait_train.evaluate import evaluate_policy

    gaits = gaits or [None] * len(policies)
    report = {
        "benchmark": "robustness",
        "machine": describe_machine(),
        "machine_facts": machine_facts(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "episodes": args.episodes,
        "seconds": args.seconds,
        "threads": args.threads,
        "seed": args.seed,
        "targets": TARGETS,
        "conditions": [c.name for c in conditions],
        "condition_specs": [dataclasses.asdict(c) for c in conditions],
        "out": str(args.out),
        "results": {label: {"path": str(p), "cells": {}, **({"gait": g} if g else {})}
                for label, p, g in zip(labels, policies, gaits, strict=True)},
        **provenance(policies),  # commit, policy_sha256: docs/results.md tells stale figures by them
    }
    total, done = len(policies) * len(conditions), 0
    for label, path, gait in zip(labels, policies, gaits, strict=True):
        cells = report["results"][label]["cells"]
        for cond in conditions:
            done += 1
            t0 = time.perf_counter()
            try:
                result = evaluate_policy(
                    path, num_episodes=args.episodes, episode_s=args.seconds, num_threads=args.threads,
                    condition=cond, seed=args.seed, gait=gait,
                )  # fmt: skip
                cells[cond.name] = cell_from_result(result, time.perf_counter() - t0)
            except Exception as e:  # one broken cell must not lose the others
                traceback.print_exc()
                cells[cond.name] = {"error": f"{type(e).__name__}: {e}", "wall_s": round(time.perf_counter() - t0, 2)}
            print(f"[{done}/{total}] {label} | {cond.name}: {cell_text(cells[cond.name]).replace('**', '')} "
                  f"({cells[cond.name]['wall_s']:.1f} s)", flush=True)  # fmt: skip
            write_report(report, args.out, png=False)
        write_report(report, args.out)
        s = policy_summary(report, label)
        print(f"{label}: meets the targets in {s['met']}/{s['total']} cells", flush=True)
    return report


def main(argv: list[str] | None = None) -> int:
    from surrogait_train.conditions import BEYOND_THE_MATRIX, ROBUSTNESS_MATRIX, condition_by_name

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policies", nargs="*", type=Path, help="ONNX policy files")
    parser.add_argument("--labels", nargs="+", default=None, help="one per policy (default: the file stems)")
    parser.add_argument(
        "--beyond-the-matrix",
        action="store_true",
        help="the harder conditions of conditions.BEYOND_THE_MATRIX instead of the matrix",
    )
    parser.add_argument("--conditions", nargs="+", default=None, metavar="NAME",
                        help="names from the robustness matrix (default: all of them, in its order)")  # fmt: skip
    parser.add_argument("--gaits", nargs="+", default=None, metavar="GAIT",
                        help="a multi-gait policy's gaits to run the matrix in, each its own column (default: the "
                             "contract's gait; bound and gallop are commanded evaluate.GAIT_EVAL_VX's speeds)")
    parser.add_argument("--episodes", type=int, default=32, help="robots (episodes) per cell")
    parser.add_argument("--seconds", type=float, default=10.0, help="episode length, s")
    parser.add_argument("--threads", type=int, default=2, help="MuJoCo threads of the evaluation")
    parser.add_argument(
        "--seed", type=int, default=EVAL_SEED, help=f"evaluation seed (default {EVAL_SEED}, the eval's held-out one)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "robustness", help="writes OUT.json, OUT.md, OUT.png")
    parser.add_argument("--report-only", action="store_true", help="re-render OUT.md and OUT.png from OUT.json")
    args = parser.parse_args(argv)
    args.out = args.out.with_suffix("") if args.out.suffix in (".json", ".md", ".png") else args.out

    if args.report_only:
        report = json.loads(args.out.with_suffix(".json").read_text())
        write_report(report, args.out)  # rewrites the JSON unchanged, the md and the png
        print(markdown(report))
        return 0
    if not args.policies:
        parser.error("give at least one ONNX policy (or --report-only)")
    missing = [str(p) for p in args.policies if not p.is_file()]
    if missing:
        parser.error(f"no such policy file: {', '.join(missing)}")
    labels = args.labels or default_labels(args.policies)
    if len(labels) != len(args.policies) or len(set(labels)) != len(labels):
        parser.error("--labels needs one distinct label per policy")
    gaits: list[str | None] = [None] * len(labels)
    if args.gaits:  # every policy once per gait: "label/gait" columns
        from surrogait_core.policy.contract import read_contract

        for path in args.policies:
            walks = read_contract(path).gait_names
            missing = [g for g in args.gaits if g not in walks]
            if missing:
                parser.error(f"{path} has no gait {', '.join(missing)}; it walks {', '.join(walks)}")
        labels = [f"{label}/{g}" for label in labels for g in args.gaits]
        args.policies = [p for p in args.policies for _ in args.gaits]
        gaits = list(args.gaits) * (len(labels) // len(args.gaits))
    try:
        if args.conditions:
            conditions = [condition_by_name(n) for n in args.conditions]
        else:
            conditions = list(BEYOND_THE_MATRIX if args.beyond_the_matrix else ROBUSTNESS_MATRIX)
    except ValueError as e:
        parser.error(str(e))
    report = run_matrix(args.policies, labels, conditions, args, "python bench/robustness.py " + shlex.join(argv),
                        gaits)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
