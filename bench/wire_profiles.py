"""Does the stack walk on every Unitree-protocol wire, or refuse it with its reason? One rehearsal per wire profile.

    python bench/wire_profiles.py [--profiles NAME ...] [--out bench/results/wire_profiles] [--domain 41]

Each session is the real rehearsal (the MuJoCo Go2 on `wire_profile`, estimator, safety monitor, policy node with
the shipped policy) driven by surrogait_rehearsal.harness.wire_rehearsal: stand up (the pre-flight first), calibrate the
foot sensors where they report raw counts, walk the walk test's segments (0.5 then 1.0 m/s), stop, damp. For each
profile the report gives: walks or refuses (with the refusal), the safety monitor's faults (every one is a false
fault: nothing is wrong with the robot), its input events (what the stack adapted to), whether the robot ever
stood still in WALK, mean forward speed per segment, and the nodes' diagnostics mid-walk. Writes
<out>.json and <out>.md. Run it under the shared process lock (it starts processes and opens DDS).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine, machine_facts  # noqa: E402

from surrogait_rehearsal.harness.session import walk_test_segments  # noqa: E402
from surrogait_rehearsal.harness.wire_rehearsal import ProfileOutcome, rehearse_profile  # noqa: E402

# (wire profile, allow_lowstate_without_crc in the stack, what the stack should do)
SESSIONS = [
    ("go2", False, "walks"),
    ("tickless", False, "walks"),
    ("no_foot_force", False, "walks"),
    ("raw_foot_force", False, "walks"),
    ("lowstate_200hz", False, "walks"),
    ("no_crc", False, "refuses"),
    ("no_crc", True, "walks"),
    ("tickless,no_foot_force,lowstate_200hz,no_crc", True, "walks"),  # unitree_mujoco's Python simulator
    ("tickless,no_foot_force,lowstate_200hz,no_crc", False, "refuses"),
]
NODES = ("policy_node: control loop", "estimator_node: state estimator", "safety_monitor: inputs and latch")


def summarise(outcome: ProfileOutcome, expected: str) -> dict:
    statuses = {name: {"level": level, "message": message}
                for name, (level, message, _) in outcome.statuses.items() if name in NODES}
    return {
        "profile": outcome.profile, "allow_lowstate_without_crc": outcome.allow_without_crc, "expected": expected,
        "verdict": outcome.verdict, "as_expected": outcome.verdict == expected, "refusals": outcome.refusals,
        "calibration": outcome.calibration, "error": outcome.error,
        "faults": [{"cause": f["cause"], "detail": f["detail"]} for f in outcome.faults],
        "input_events": [{"event": e["event"], "cause": e["cause"], "detail": e["detail"]}
                         for e in outcome.input_events],
        "entered_walk": outcome.entered_walk, "stood_still_in_walk": outcome.stood_still_in_walk,
        "segments": outcome.segments, "vx_rmse": outcome.vx_rmse, "fell": outcome.fell,
        "statuses_mid_walk": statuses, "seconds": round(outcome.seconds, 1),
    }


def markdown(rows: list[dict], info: dict) -> str:
    ok = sum(r["as_expected"] for r in rows)
    false_faults = sum(len(r["faults"]) for r in rows)
    still = sum(r["stood_still_in_walk"] for r in rows)
    lines = [
        "# Wire profiles: the stack walks, or refuses with its reason",
        "",
        f"Command: `flock /tmp/surrogait-processes.lock python bench/wire_profiles.py` — {info['when']}, "
        f"{info['machine']}. One rehearsal per row: the MuJoCo Go2 writing rt/lowstate as the profile says "
        "(`surrogait_rehearsal.sim.wire_profile`), the real estimator, safety monitor and policy node (shipped "
        "policy); stand up (pre-flight first), calibrate raw foot sensors, walk 0.5 then 1.0 m/s for 5 s each, "
        "stop, damp. `allow CRC`: `allow_lowstate_without_crc` in the stack (simulators only).",
        "",
        f"**{ok}/{len(rows)} sessions did what the stack should; {false_faults} safety faults in all "
        f"(every one would be false: nothing is wrong with the robot); {still} sessions stood still in WALK.**",
        "",
        "| profile | allow CRC | expected | result | safety faults | stood still in WALK | mean vx at 0.5 / 1.0 m/s "
        "| vx RMSE | what the stack said |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        vx = " / ".join(f"{s['vx_mean']:.2f}" for s in r["segments"]) or "-"
        said = "; ".join(r["refusals"][-1:]) if r["verdict"] != "walks" else "; ".join(
            sorted({e["cause"] for e in r["input_events"] if e["event"] == "input"})) or "nothing (no input issue)"
        if r["error"]:
            said = f"ERROR: {r['error']}"
        rmse = "-" if r["vx_rmse"] is None else f"{r['vx_rmse']:.3f}"
        lines.append(f"| `{r['profile']}` | {'yes' if r['allow_lowstate_without_crc'] else 'no'} | {r['expected']} "
                     f"| **{r['verdict']}** | {len(r['faults'])} | {'YES' if r['stood_still_in_walk'] else 'no'} | "
                     f"{vx} | {rmse} | {said.replace('|', '/')} |")
    lines += ["", "## Per session", ""]
    for r in rows:
        lines.append(f"### `{r['profile']}`{' (allow CRC)' if r['allow_lowstate_without_crc'] else ''}: "
                     f"{r['verdict']} ({r['seconds']} s)")
        for message in r["refusals"]:
            lines.append(f"- refused: {message}")
        for message in r["calibration"]:
            lines.append(f"- calibration: {message}")
        for e in r["input_events"]:
            lines.append(f"- monitor {e['event']} `{e['cause']}`: {e['detail']}")
        for f in r["faults"]:
            lines.append(f"- **fault** `{f['cause']}`: {f['detail']}")
        for name, st in r["statuses_mid_walk"].items():
            level = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}.get(st["level"], st["level"])
            lines.append(f"- {name} mid-walk: {level} — {st['message']}")
        if r["error"]:
            lines.append(f"- error: {r['error']}")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profiles", nargs="*", help="only these sessions (profile names as in SESSIONS)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/wire_profiles"))
    ap.add_argument("--domain", type=int, default=41)
    ap.add_argument("--keep", type=Path, default=None, help="keep each session's records under this folder")
    args = ap.parse_args()
    sessions = [s for s in SESSIONS if not args.profiles or s[0] in args.profiles]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = {**machine_facts(), "machine": describe_machine(), "when": when}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        for i, (profile, allow, expected) in enumerate(sessions):
            print(f"[{i + 1}/{len(sessions)}] {profile} (allow CRC: {allow}), expected: {expected}", flush=True)
            workdir = root / f"{i:02d}_{profile.replace(',', '+')}{'_allow_crc' if allow else ''}"
            outcome = rehearse_profile(workdir, domain=args.domain, profile=profile, allow_without_crc=allow,
                                       segments=walk_test_segments(5.0, stop_s=2.0), log=lambda m: None)
            row = summarise(outcome, expected)
            rows.append(row)
            print(f"    -> {row['verdict']}, faults {len(row['faults'])}, stood still {row['stood_still_in_walk']}, "
                  f"refusals {row['refusals'][-1:] }, error {row['error']!r}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps({"machine": info, "sessions": rows}, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(rows, info))
    print(f"wrote {args.out.with_suffix('.md')} and .json")
    return 0 if all(r["as_expected"] and not r["faults"] and not r["stood_still_in_walk"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
