"""Skills: a policy's gaits × terrain courses, judged as issues 14 and 34 ask (JSON + md + PNG grid).

    python bench/skills.py POLICY.onnx [--gaits trot pace ...] [--terrains flat stand rough slope stairs]
        [--episodes 32] [--seconds 12] [--baseline bench/results/skills_ppo_baseline.json] [--out bench/results/skills]
    python bench/skills.py --report-only [--out bench/results/skills]   # re-render md + png from the JSON

One cell (gait, terrain) is one `evaluate_policy(path, gait=..., terrain=...)` call (the deployment
path: PolicyRunner + onnxruntime on a batch of MuJoCo robots): on flat ground the eval's command set
(bound and gallop over vx 0.5-1.5 m/s), on a course straight ahead (vx 0.6-1.0 m/s; bound and gallop
0.5-1.5); `stand` is flat ground at a zero command. Gaits default to the policy's own (its contract's
`gaits`, or its one `gait`).

Targets (issue 34): every gait WALKS on flat ground by the eval's definition (0 falls, vx RMSE ≤ 0.15
m/s, yaw-rate RMSE ≤ 0.2 rad/s) in that gait (its feet pair up as the gait's schedule says: `gait_match`
≥ GAIT_MATCH_MIN, surrogait_train.gait_pattern; a pace that tracks its command with a trot's diagonal
pairs does not count; the same holds on the courses) and, told to stand (zero command), holds |vx| and
|vy| RMSE ≤ 0.05 m/s with no fall; the trot crosses rough ground and 15° slopes in ≥ 95 % of episodes;
the pace crosses rough ground in ≥ 90 %; the trot's stairs must beat the PPO baseline (its crossed share
in the `--baseline` skills JSON, where one exists). Other cells are reported, not judged. The report
names the policy's provenance (which learner made it) from its metadata.

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
CROSS_TARGETS = {("trot", "rough"): 0.95, ("trot", "slope"): 0.95, ("pace", "rough"): 0.90}
BEAT_BASELINE = {("trot", "stairs")}  # the target is the PPO baseline's crossed share, to be beaten
TERRAIN_COLUMNS = ("flat", "stand", "rough", "slope", "stairs")


def cross_target(cell: dict) -> float | None:
    """The crossed share a course cell must reach (> for a baseline to beat), None where there is none."""
    key = (cell["gait"], cell["terrain"])
    if key in BEAT_BASELINE:
        return cell.get("baseline_crossed")
    return CROSS_TARGETS.get(key)


def target_of(cell: dict) -> str | None:
    if cell["terrain"] == "flat":
        return "WALKS in its gait"
    if cell["terrain"] == "stand":
        from surrogait_train.evaluate import STAND_RMSE_M_S

        return f"stands (RMSE ≤ {STAND_RMSE_M_S} m/s)"
    target = cross_target(cell)
    if target is None:
        return None
    if (cell["gait"], cell["terrain"]) in BEAT_BASELINE:
        return f"crossed > {target:.0%} (the PPO baseline's)"
    return f"crossed ≥ {target:.0%}"


def meets(cell: dict) -> bool | None:
    """True / False against the cell's target, None where the issues set none."""
    if target_of(cell) is None:
        return None
    if "error" in cell:
        return False
    if cell["terrain"] == "flat":
        return bool(cell["walks"]) and follows_gait(cell) is not False
    if cell["terrain"] == "stand":
        return bool(cell["stands"])
    crossed = cell["crossed_rate"]
    if follows_gait(cell) is False:
        return False
    if (cell["gait"], cell["terrain"]) in BEAT_BASELINE:
        return crossed is not None and crossed > cross_target(cell)
    return crossed is not None and crossed >= cross_target(cell)


def follows_gait(cell: dict) -> bool | None:
    """Whether a cell's feet paired up as its gait's schedule says (None: at a zero command, or a report from before
    it was measured)."""
    from surrogait_train.gait_pattern import GAIT_MATCH_MIN

    match = cell.get("gait_match")
    return None if match is None else match >= GAIT_MATCH_MIN


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "—" if x is None or not math.isfinite(x) else format(x, fmt)


def markdown(report: dict) -> str:
    from surrogait_train.gait_pattern import GAIT_MATCH_MIN

    cells = {(c["gait"], c["terrain"]): c for c in report["cells"]}
    gaits, terrains = report["gaits"], report["terrains"]
    lines = [f"# Skills: gaits × terrain ({report['policy']})", "",
             f"Policy: {report.get('provenance', 'provenance not recorded')}.", "",
             f"Machine: {report['machine']}. Date: {report['date']}. Command: `{report['command']}`.", "",
             f"{report['episodes']} episodes × {report['seconds']:g} s per cell, the eval's held-out seed. Cell: "
             "falls · vx RMSE (m/s) · yaw-rate RMSE (rad/s) · gait match on flat ground (WALKS: 0 falls, vx ≤ "
             f"0.15, yaw ≤ 0.2; in its gait: the feet pair up as the gait's schedule says, gait match ≥ "
             f"{GAIT_MATCH_MIN}, 1 = as scheduled, ~0.35 another of the four gaits); stand (a zero command): falls · "
             "|vx| RMSE · |vy| RMSE (holds: ≤ 0.05 m/s, no fall); on a course, "
             "walked straight ahead: crossed (share of robots past its end standing) · falls · gait match (a "
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
                row.append(f"{mark}{falls} · {_num(c['vx_rmse'])} · {_num(c['yaw_rate_rmse'])}"
                           + (f" · gait {_num(c['gait_match'], '.2f')}" if c.get("gait_match") is not None else ""))
            elif terrain == "stand":
                row.append(f"{mark}{falls} · {_num(c['vx_rmse'])} · {_num(c['vy_rmse'])}")
            else:
                row.append(f"{mark}crossed {_num(c['crossed_rate'], '.0%')} · falls {falls}"
                           + (f" · gait {_num(c['gait_match'], '.2f')}" if c.get("gait_match") is not None else ""))
        lines.append(f"| {gait} | " + " | ".join(row) + " |")
    judged = [meets(c) for c in report["cells"] if meets(c) is not None]
    lines += ["", f"Targets met: {sum(judged)}/{len(judged)} cells."]
    misses = [shortfall(c) for c in report["cells"] if meets(c) is False]
    lines += [f"Missed: {'; '.join(misses)}." if misses else "Missed: none."]
    return "\n".join(lines) + "\n"


def shortfall(cell: dict) -> str:
    """A missed cell, its target and by how much it misses."""
    from surrogait_train.evaluate import STAND_RMSE_M_S, WALK_VX_RMSE, WALK_YAW_RMSE

    name = f"{cell['gait']} on {cell['terrain']}"
    if "error" in cell:
        return f"{name} (error)"
    if cell["terrain"] == "flat":
        short = [f"{cell['falls']}/{cell['episodes']} fell (0 allowed)"] if cell["falls"] else []
        for key, label, limit in (("vx_rmse", "vx RMSE", WALK_VX_RMSE), ("yaw_rate_rmse", "yaw-rate RMSE",
                                                                         WALK_YAW_RMSE)):
            value = cell[key]
            if value is None:
                short.append(f"no {label} (every robot fell)")
            elif value > limit:
                short.append(f"{label} {value:.3f} > {limit:g} (by {value - limit:.3f})")
        if follows_gait(cell) is False:
            short.append(f"its feet do not pair up as a {cell['gait']}'s (gait match {cell['gait_match']:.2f})")
        return f"{name} does not WALK in its gait: {', '.join(short)}"
    if cell["terrain"] == "stand":
        drift = [x for x in (cell["vx_rmse"], cell["vy_rmse"]) if x is not None]
        parts = [f"{cell['falls']}/{cell['episodes']} fell"] if cell["falls"] else []
        if drift and max(drift) > STAND_RMSE_M_S:
            parts.append(f"drifts at RMSE {max(drift):.3f} m/s > {STAND_RMSE_M_S}")
        return f"{cell['gait']} does not stand still: {', '.join(parts)}"
    target = cross_target(cell)
    crossed = cell["crossed_rate"] or 0.0
    gait = (f", its feet not paired up as a {cell['gait']}'s (gait match {cell['gait_match']:.2f})"
            if follows_gait(cell) is False else "")
    if (cell["gait"], cell["terrain"]) in BEAT_BASELINE:
        return f"{name} crossed {crossed:.0%}, not more than the PPO baseline's {target:.0%}{gait}"
    if crossed >= target:
        return f"{name} crossed {crossed:.0%}{gait}"
    points = round((target - crossed) * 100)
    return f"{name} crossed {crossed:.0%} against ≥ {target:.0%} ({points} point{'s' * (points != 1)} short){gait}"


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
                score[i, j] = (1.0 - c["fall_rate"]) if t in ("flat", "stand") else c["crossed_rate"]
    fig, ax = plt.subplots(figsize=(1.6 * len(terrains) + 2, 0.7 * len(gaits) + 1.5))
    ax.imshow(score, vmin=0, vmax=1, cmap="RdYlGn")
    ax.set_xticks(range(len(terrains)), terrains)
    ax.set_yticks(range(len(gaits)), gaits)
    for i, g in enumerate(gaits):
        for j, t in enumerate(terrains):
            c = cells.get((g, t))
            if c is None or "error" in c:
                continue
            if t == "flat":
                text = ("WALKS" if c["walks"] else "no") + ("\nnot its gait" if follows_gait(c) is False else "")
            elif t == "stand":
                text = "stands" if c["stands"] else "drifts"
            else:
                text = f"{c['crossed_rate']:.0%}" + ("\nnot its gait" if follows_gait(c) is False else "")
            ax.text(j, i, text, ha="center", va="center", fontsize=9)
            if meets(c) is False:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
    ax.set_title("flat: WALKS, stand: holds (colour: no falls); courses: share crossed; red: target missed")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(report))


def main(argv: list[str] | None = None) -> int:
    from surrogait_core.policy.contract import read_contract
    from surrogait_core.policy.provenance import describe, read_provenance
    from surrogait_core.terrain import TERRAINS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("policy", nargs="?")
    ap.add_argument("--gaits", nargs="*", default=None, help="default: the policy's gaits")
    ap.add_argument("--terrains", nargs="*", default=list(TERRAIN_COLUMNS), choices=(*TERRAINS, "stand"))
    ap.add_argument("--baseline", type=Path, default=RESULTS / "skills_ppo_baseline.json",
                    help="the PPO baseline's skills JSON, whose stairs share the trot must beat")
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
    import numpy as np

    from surrogait_train.evaluate import STAND_RMSE_M_S, evaluate_policy

    gaits = args.gaits or list(read_contract(args.policy).gait_names)
    baseline = {}
    if args.baseline.is_file():
        for c in json.loads(args.baseline.read_text())["cells"]:
            if "error" not in c and c.get("crossed_rate") is not None:
                baseline[c["gait"], c["terrain"]] = c["crossed_rate"]
    report = {"policy": args.policy, "provenance": describe(read_provenance(args.policy)),
              "machine": describe_machine(),
              "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "command": "python bench/skills.py " + shlex.join(argv if argv is not None else sys.argv[1:]),
              "episodes": args.episodes, "seconds": args.seconds, "gaits": gaits, "terrains": args.terrains,
              "cells": []}
    total = len(gaits) * len(args.terrains)
    for k, (gait, terrain) in enumerate([(g, t) for g in gaits for t in args.terrains], start=1):
        start = time.monotonic()
        cell = {"gait": gait, "terrain": terrain}
        if (gait, terrain) in BEAT_BASELINE and (gait, terrain) in baseline:
            cell["baseline_crossed"] = baseline[gait, terrain]
        try:
            stand = terrain == "stand"
            r = evaluate_policy(args.policy, num_episodes=args.episodes, episode_s=args.seconds, gait=gait,
                                terrain="flat" if stand else terrain,
                                commands=np.zeros((args.episodes, 3)) if stand else None)
            finite = lambda x: x if math.isfinite(x) else None  # noqa: E731
            cell.update(episodes=r.episodes, fall_rate=r.fall_rate, falls=int(round(r.fall_rate * r.episodes)),
                        crossed_rate=r.crossed_rate, vx_rmse=finite(r.vx_rmse), vy_rmse=finite(r.vy_rmse),
                        yaw_rate_rmse=finite(r.yaw_rate_rmse), walks=r.walks)
            if not stand:
                cell["gait_match"] = finite(r.gait_match)
            if stand:
                cell["stands"] = r.fall_rate == 0 and max(r.vx_rmse, r.vy_rmse) <= STAND_RMSE_M_S
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
