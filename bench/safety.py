"""The safety monitor's fault-injection suite, run in rehearsal; prints and writes the table.

    python bench/safety.py                       # all scenarios, shipped policy
    python bench/safety.py --scenarios kill9_policy estop_service
    python bench/safety.py --standin             # without the policy node (development stand-in, no walking)
    python bench/safety.py --robot go1           # the Go1's subset over UDP (the monitor as the link's gateway)

Each scenario starts a rehearsal session (surrogait_rehearsal.harness.session: go2_sim, estimator_node,
safety_monitor and policy_node, each with its package's parameters file, as the demo and the robot run them)
on DDS domain --domain (loopback), stands the robot up, walks it at 0.5 m/s, injects one fault and
measures from an independent unitree_sdk2py subscriber in this process: time from the fault
to the first damping LowCmd on rt/lowcmd (target ≤ 60 ms; on the Go1, the first damping LowCmd the
simulated robot accepted, from its tap), limit violations on the wire
after the fault, whether the robot ends lying still, and whether the fault is in the fault
log. Writes bench/results/safety.json and bench/results/safety.md (with the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine  # noqa: E402
from provenance import provenance  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PRETRAINED = ROOT / "ros2_ws" / "src" / "surrogait_bringup" / "policies"
OBSERVERS = {"go2": "an independent raw DDS reader on rt/lowcmd",
             "go1": "the Go1 simulator's tap (a copy of every LowCmd it accepted; the monitor is the link's gateway)"}
STANDIN = ROOT / "tests" / "safety" / "standin_policy.py"


def causes(r: dict) -> str:
    text = ", ".join(r["logged_causes"])
    if r.get("policy_damp_cause"):
        text += f" (policy node: {r['policy_damp_cause']})"
    return text


def wrong_cause(r: dict) -> str:
    return "" if r.get("cause_ok", True) else f" (first caught as {r.get('first_logged_cause')})"


def markdown(results: list[dict], meta: dict, baselines: list[dict] | None = None) -> str:
    lines = [
        "# Safety monitor fault-injection suite (rehearsal)",
        "",
        f"Machine: {meta['machine']}. Rehearsal process priority: {meta['priority']}. "
        f"Policy: {meta['policy']}. Date: {meta['date']}. "
        f"Command: `{meta['command']}`.",
    ]
    if results:
        lines += scenario_lines(results, meta)
    if baselines:
        lines += baseline_lines(baselines)
    lines.append("")
    return "\n".join(lines)


def scenario_lines(results: list[dict], meta: dict) -> list[str]:
    lines = [
        "",
        f"Latency = fault → first damping LowCmd reaching the robot, seen by {meta.get('observer', OBSERVERS['go2'])} "
        "(target ≤ 60 ms). Violations = commands after the fault (the injector's own excepted) that are "
        "non-finite, put a stiff target outside the joint range, or ask for more than the motor's torque limit "
        "(kp·(q*−q)+kd·(dq*−dq)+τff with the joint state at arrival). For a silence (a killed or hung policy "
        "node, a stopped rt/lowstate) the fault is only a fault once it has lasted the rule's threshold "
        "(as the monitor logged it: a silent 500 Hz LowCmd stream after 20 ms, a stale rt/lowstate after 2 "
        "control periods = 40 ms); the latency is from the fault itself, and the reaction after the threshold is "
        "shown as '+x'. 'PD > τ_lim before damping': stiff commands already in flight in the reaction window whose "
        "kp·(q*−q) on joints displaced by the fault exceeds the limit (the driver clips them); from the first "
        "damping command on, every command must be within every limit. Lying still: the last 0.5 s of "
        "rt/lowstate with every |dq| and |gyro| < 0.3 rad/s and ground-truth base height < 0.2 m, observed at "
        "least 3 s after the fault and until still (at most 10 s). ok also needs the first cause logged after "
        "the fault to be the injected fault's.",
        "",
        f"Phase at injection: {next((r['phase'] for r in results if 'phase' in r), '?')}.",
        "",
        "| scenario | fault time from | latency ms | damped by | violations | PD > τ_lim before damping | "
        "lying still (max dq, gyro, z; observed for) | logged causes | ok |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['scenario']} | – | – | – | – | – | – | – | **no** ({r['error'][:80]}) |")
            continue
        lat = "–" if r["latency_s"] is None else f"{r['latency_s'] * 1e3:.1f}"
        if r.get("reaction_after_threshold_s") is not None:
            lat += f" ({r['reaction_after_threshold_s'] * 1e3:+.1f} after the {r['silence_threshold_s'] * 1e3:.0f} ms)"
        z = "–" if r["end_base_height_m"] is None else f"{r['end_base_height_m']:.2f} m"
        lines.append(
            f"| {r['scenario']} | {r['fault_time_from']} | {lat} | {r['who_damped']} | {r['limit_violations']} | "
            f"{r['pd_over_torque_before_damping']} | {'yes' if r['lying_still'] else 'NO'} "
            f"({r['end_max_joint_vel']:.2f}, {r['end_max_gyro']:.2f}, {z}; {r['observed_after_fault_s']} s) | "
            f"{causes(r)} | "
            f"{'yes' if r['ok'] else '**no**'}{wrong_cause(r)} |")
    names = list(dict.fromkeys(r["scenario"] for r in results))
    if len(results) > len(names):
        lines += ["", f"## Summary over {len(results) // len(names)} trials", "",
                  "| scenario | ok | latency ms median | latency ms max | reaction after a silence's threshold, "
                  "max ms |",
                  "|---|---|---|---|---|"]
        for name in names:
            runs = [r for r in results if r["scenario"] == name]
            lats = sorted(r["latency_s"] * 1e3 for r in runs if r.get("latency_s") is not None)
            reacts = [r["reaction_after_threshold_s"] * 1e3 for r in runs
                      if r.get("reaction_after_threshold_s") is not None]
            med = f"{lats[len(lats) // 2]:.1f}" if lats else "–"
            lines.append(f"| {name} | {sum(bool(r.get('ok')) for r in runs)}/{len(runs)} | {med} | "
                         f"{max(lats):.1f} | {f'{max(reacts):.1f}' if reacts else '–'} |" if lats else
                         f"| {name} | {sum(bool(r.get('ok')) for r in runs)}/{len(runs)} | – | – | – |")
    resets = [r for r in results if "reset" in r]
    if resets:
        lines += ["", "## Reset (safety/reset service)", "", "| scenario | early call (sent / answered after the "
                  "fault) | once lying still |", "|---|---|---|"]
        for r in resets:
            early, final = r["reset"]["early"], r["reset"]["final"]
            when = f"{early.get('called_after_fault_s', 0.15):.2f} / {early.get('answered_after_fault_s', 0.0):.2f} s"
            lines.append(f"| {r['scenario']} | {when}: {'accepted' if early['accepted'] else 'refused'}: "
                         f"{early['message']} | {'accepted' if final['accepted'] else 'refused'}: {final['message']} |")
    cpus = [r["monitor_cpu_share"] for r in results if r.get("monitor_cpu_share") is not None]
    if cpus:
        lines += ["", f"safety_monitor CPU: {min(cpus) * 100:.0f}–{max(cpus) * 100:.0f} % of one core from the "
                  "injection to the end of each scenario (200 Hz checks; rt/lowstate arrives at 500 Hz)."]
    lags = [r["observer_stamp_lag_max_ms"] for r in results if r.get("observer_stamp_lag_max_ms") is not None]
    if lags:
        lines += ["", f"Observer: the tap's thread read copies up to {max(lags):.0f} ms after they arrived; the "
                  "latencies use the kernel's arrival stamps (SO_TIMESTAMPNS) instead."]
    retried = [f"{r['scenario']} ({len(r['failed_bring_ups'])}: {r['failed_bring_ups'][0][:120]})"
               for r in results if r.get("failed_bring_ups")]
    if retried:
        lines += ["", "Scenarios started again because the rehearsal did not reach the starting state "
                  "(no fault injected yet): " + "; ".join(retried) + "."]
    ok = sum(bool(r.get("ok")) for r in results)
    lats = [r["latency_s"] for r in results if r.get("latency_s") is not None]
    lines += ["", f"{ok}/{len(results)} scenarios pass; worst latency "
              f"{max(lats) * 1e3:.1f} ms." if lats else f"{ok}/{len(results)} scenarios pass."]
    return lines


def baseline_lines(baselines: list[dict]) -> list[str]:
    """The no-fault walks (one per gait walked): each rule's largest value as a fraction of its threshold."""
    lines = ["", "## No fault (false-positive check)", ""]
    for b in baselines:
        gait = f" in the {b['gait']}" if len(baselines) > 1 else ""
        if "error" in b:
            lines.append(f"Baseline{gait} failed: {b['error']}")
        else:
            lines.append(f"Stand up, walk 0.5 then 1.0 m/s{gait}, stop: final safety state {b['final_safety_state']}, "
                         f"false faults: {b['false_faults'] or 'none'}.")
    walked = [b for b in baselines if "error" not in b]
    if walked:
        heads = [f"max ({b['gait']})" if len(baselines) > 1 else "max" for b in walked]
        lines += ["", "Largest value each rule saw, as a fraction of its threshold (1.0 = the rule fires):", "",
                  "| quantity | " + " | ".join(heads) + " |", "|---|" + "---|" * len(walked)]
        lines += [f"| {k} | " + " | ".join(str(b["max_fraction_of_threshold"][k]) for b in walked) + " |"
                  for k in walked[0]["max_fraction_of_threshold"]]
    return lines


def main(argv: list[str] | None = None) -> int:
    from surrogait_core.robot_links import DDS, robot_link
    from surrogait_rehearsal.harness.fault_suite.injections import ROBOT_SCENARIOS, SCENARIOS, WALK_BEFORE_FAULT_S

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", type=int, default=45)
    ap.add_argument("--robot", choices=("go2", "go1"), default="go2",
                    help="go1: the Go1 subset (GO1_SCENARIOS) over the Go1's UDP link")
    ap.add_argument("--policy", type=Path, default=None, help="default: the shipped policy of --robot")
    ap.add_argument("--standin", action="store_true", help="use the development stand-in instead of policy_node")
    ap.add_argument("--scenarios", nargs="*", default=None, choices=list(SCENARIOS),
                    help="default: every scenario (Go2), GO1_SCENARIOS (Go1)")
    ap.add_argument("--phase", choices=("walk", "ready"), default="walk",
                    help="inject while walking (WALK at 0.5 m/s) or standing (READY)")
    ap.add_argument("--walk-s", type=float, default=WALK_BEFORE_FAULT_S,
                    help="seconds of walking before a fault is injected while walking")
    ap.add_argument("--repeat", type=int, default=1, help="run the whole list this many times")
    ap.add_argument("--bring-up-retries", type=int, default=2,
                    help="start a scenario again when the rehearsal failed to reach READY/WALK before the fault "
                         "(reported per scenario)")
    ap.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                    help="first walk with no fault: the monitor must stay OK; reports each rule's margin")
    ap.add_argument("--gaits", nargs="+", default=None, metavar="GAIT",
                    help="a multi-gait policy's gaits: the no-fault walk once in each (default: the gait it starts in)")
    ap.add_argument("--workdir", type=Path, default=ROOT / "runs" / "bench_safety")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--name", default="safety", help="results file stem")
    # 0 by default: each node takes its own priority from its parameters file, as on a robot. The suite's
    # observers time every sample by its source or kernel timestamp, so they need no real time; at FIFO 10 this
    # process (decoding ~1000 messages a second) and the processes it starts (the recorder, a node whose file
    # asks for normal scheduling) took a 2-core machine past Linux's real-time budget (rehearsal log 2026-12-07).
    ap.add_argument("--realtime-priority", type=int, default=0,
                    help="SCHED_FIFO priority of this process and the one every rehearsal process starts under, "
                         "before a node sets its own from its parameters file (needs root; 0 = normal scheduling)")
    args = ap.parse_args(argv)
    args.policy = args.policy or PRETRAINED / f"{args.robot}_trot.onnx"
    if args.scenarios is None:
        args.scenarios = list(ROBOT_SCENARIOS[args.robot])
    if args.standin and robot_link(args.robot).protocol != DDS:
        print("bench/safety: --standin is a Go2 DDS stand-in; the Go1 suite runs the policy node", file=sys.stderr)
        return 2
    if not args.policy.exists():
        print(f"bench/safety: no policy at {args.policy}; pass --policy (with --standin, the safety monitor "
              "still reads its contract)", file=sys.stderr)
        return 2
    # SIGTERM (e.g. a test's timeout) unwinds like Ctrl-C, so every rehearsal process is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ["ROS_DOMAIN_ID"] = str(args.domain)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    from surrogait_core.runtime.realtime import enter_realtime
    from surrogait_rehearsal.harness.fault_suite.observers import observe_wire
    from surrogait_rehearsal.harness.fault_suite.run import BringUpError, run_baseline, run_scenario
    from surrogait_rehearsal.harness.operator import Operator

    boosted = enter_realtime(args.realtime_priority)
    recorder = observe_wire(args.robot, args.domain)
    ros = Operator(args.domain, name="fault_suite")
    results = []
    baselines = []
    try:
        for gait in (args.gaits or [None]) if args.baseline and not args.standin else []:
            try:
                baseline = run_baseline(args.domain, args.workdir / f"baseline{'_' + gait if gait else ''}", ros,
                                        recorder, args.policy, gait=gait, robot=args.robot,
                                        realtime_priority=args.realtime_priority if boosted else 0)
            except Exception as e:
                baseline = {"scenario": "baseline_no_fault", "gait": gait, "ok": False,
                            "error": f"{type(e).__name__}: {e}"}
            baselines.append(baseline)
            print(json.dumps(baseline), flush=True)
        for trial, name in [(k, n) for k in range(args.repeat) for n in args.scenarios]:
            t0 = time.monotonic()
            failed_bring_ups = []
            while True:
                try:
                    r = run_scenario(SCENARIOS[name], args.domain, args.workdir / name, ros, recorder,
                                     args.policy, STANDIN if args.standin else None,
                                     walk_vx=0.5 if args.phase == "walk" else None,
                                     try_reset=name in ("estop_service", "kill9_policy"),
                                     realtime_priority=args.realtime_priority if boosted else 0, robot=args.robot,
                                     walk_s=args.walk_s)
                except BringUpError as e:  # the fault was never injected: start the scenario again
                    failed_bring_ups.append(str(e)[:300])
                    if len(failed_bring_ups) <= args.bring_up_retries:
                        continue
                    r = {"scenario": name, "ok": False, "error": f"bring-up failed: {e}"}
                except Exception as e:  # one broken scenario must not hide the others' results
                    r = {"scenario": name, "ok": False, "error": f"{type(e).__name__}: {e}"}
                break
            r["trial"] = trial
            r["failed_bring_ups"] = failed_bring_ups
            r["wall_s"] = round(time.monotonic() - t0, 1)
            results.append(r)
            print(json.dumps(r), flush=True)
    finally:
        ros.close()
    meta = {"machine": describe_machine(), "robot": args.robot, "observer": OBSERVERS[args.robot],
            "policy": "development stand-in (standing only)" if args.standin
            else str(args.policy.relative_to(ROOT) if args.policy.is_relative_to(ROOT) else args.policy),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "priority": f"SCHED_FIFO {args.realtime_priority}" if boosted else "normal scheduling",
            "command": "python bench/safety.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    meta.update(provenance([args.policy]))  # commit, policy_sha256: docs/results.md tells stale figures by them
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(
        json.dumps({"meta": meta, "baselines": baselines, "results": results}, indent=2) + "\n")
    table = markdown(results, meta, baselines)
    (args.out / f"{args.name}.md").write_text(table)
    print(table)
    return 0 if all(r.get("ok") for r in results + baselines) else 1


if __name__ == "__main__":
    sys.exit(main())
