"""Benchmark: does the full rehearsal session complete, run after run, with fresh processes?

Runs the demo's scripted session (`python -m surrogait_rehearsal.demo`: stand up, walk 0.5 m/s,
turn, walk 1.0 m/s, stop, damp) N times per configuration, each with fresh processes:
  - shipped    the shipped policy, motor model `driver` (PD at the physics rate, as the robot's drivers)
  - on_command the shipped policy, motor model `on_command` (torque computed when a LowCmd arrives, held)
  - trained    a policy trained here for --train-budget-s (120 s), motor model `driver`
  - trained_each  as every `make demo`: each run trains its own policy (scripts/demo.py's training and
                pre-flight), then rehearses it; motor model `driver`
  - gait_switch the shipped multi-gait policy (surrogait_bringup/policies/go2_gaits.onnx), switching from trot to pace,
                bound or gallop (in turn) as the turn begins; motor model `driver`
and reports completions (the demo's exit code), falls (ground truth) and safety faults by cause.
A fault is *real* when the ground truth shows it: a joint rule judges the simulator's own joint
state (real); a height or tilt fault is real when the ground-truth base height or tilt at the
latch confirms it; a silence (policy_silent, lowstate_stale) is real only when a process died.

    python bench/demo_reliability.py --runs 20 [--configs shipped on_command trained trained_each] [--trained-runs 10]

Writes bench/results/demo_reliability.json and .md. Targets (issue 12): shipped 20/20 under each
motor model, trained and trained_each ≥ 9/10, gait_switch every run (issue 14), no fault whose cause is not real.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.safety.thresholds import default_thresholds
from surrogait_rehearsal.demo import shipped_gaits_policy
from surrogait_rehearsal.harness.nodes import shipped_policy_path
from surrogait_rehearsal.report import GT, load_session, read_fault_log

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_info import describe_machine, machine_facts  # noqa: E402
from provenance import file_sha256, provenance, repo_relative  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
CONFIGS = {"shipped": ("shipped", "driver"), "on_command": ("shipped", "on_command"), "trained": ("trained", "driver"),
           "trained_each": ("trained_each", "driver"), "gait_switch": ("gaits", "driver")}
TARGETS = {"shipped": 1.0, "on_command": 1.0, "trained": 0.9, "trained_each": 0.9,
           "gait_switch": 1.0}  # completed fraction
SWITCH_TO = ("pace", "bound", "gallop")  # gait_switch: run i switches from trot to SWITCH_TO[i % 3] as the turn begins
SILENCES = ("policy_silent", "lowstate_stale")
JOINT_STATE_CAUSES = ("joint_position_limit", "joint_velocity", "estimated_torque", "state_not_finite")
RUN_TIMEOUT_S = 300


def first_damp_time(session: dict) -> float | None:
    """Session time of the safety monitor's first DAMP verdict."""
    for t, verdict in session.get("safety_states", []):
        if verdict.get("state") == "DAMP":
            return float(t)
    return None


def fault_is_real(fault: dict, session: dict, t_latch: float | None, children_died: bool) -> bool:
    """Does the ground truth (or a process that really died) show the fault?"""
    cause = fault["cause"]
    if cause in SILENCES:
        return children_died
    if cause in JOINT_STATE_CAUSES or cause.startswith("estop") or cause.startswith("command_"):
        return True  # judged on the simulator's own joint state, or on what was really commanded
    gt = session["ground_truth"]
    if t_latch is None or not gt.size:
        return False
    near = gt[np.abs(gt[:, GT["t"]] - t_latch) <= 0.1]
    if not near.size:
        return False
    th = default_thresholds(load_robot_spec("go2"))
    if cause == "base_too_low":
        return bool(near[:, GT["z"]].min() < th.min_base_height_m)
    if cause == "base_tilt":
        return bool(np.max(np.abs(near[:, [GT["roll"], GT["pitch"]]])) > min(th.max_roll_rad, th.max_pitch_rad))
    return False


def one_run(run_dir: Path, policy: Path, motor_model: str, domain: int, extra_args: tuple[str, ...] = ()) -> dict:
    cmd = [sys.executable, "-m", "surrogait_rehearsal.demo", "--policy", str(policy), "--no-video",
           "--motor-model", motor_model, "--domain", str(domain), "--run-dir", str(run_dir), *extra_args]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = -1, f"timed out after {RUN_TIMEOUT_S} s: {e}"
    (run_dir / "demo_output.txt").write_text(out)
    result = {"run_dir": str(run_dir), "exit_code": rc, "completed": rc == 0,
              "wall_s": round(time.monotonic() - start, 1)}
    metrics_path, session_path = run_dir / "metrics.json", run_dir / "session.npz"
    if not metrics_path.is_file() or not session_path.is_file():
        result.update(outcome="no report", fell=None, faults=[])
        return result
    metrics = json.loads(metrics_path.read_text())
    session = load_session(session_path)
    children_died = "exited with" in out
    t_latch = first_damp_time(session)
    faults = [e for e in read_fault_log(run_dir / "safety_fault_log.jsonl") if e.get("event") == "fault"]
    result.update(
        outcome=metrics["info"]["outcome"],
        fell=metrics["falls"]["fell"],
        walking_vx_rmse=metrics["tracking"]["walking_vx_rmse"],
        host_steal=metrics["info"].get("host_steal"),
        faults=[{"cause": f["cause"], "detail": f.get("detail", ""),
                 "real": fault_is_real(f, session, t_latch, children_died)} for f in faults],
    )
    return result


def summarize(runs: list[dict]) -> dict:
    causes: dict[str, dict[str, int]] = {}
    for r in runs:
        for f in r["faults"]:
            entry = causes.setdefault(f["cause"], {"real": 0, "not_real": 0})
            entry["real" if f["real"] else "not_real"] += 1
    return {"runs": len(runs), "completed": sum(r["completed"] for r in runs),
            "falls": sum(bool(r.get("fell")) for r in runs), "faults_by_cause": causes,
            "faults_not_real": sum(c["not_real"] for c in causes.values())}


def train_policy(out_dir: Path, budget_s: float) -> Path:
    """What `make demo` rehearses: scripts/demo.py's own training and pre-flight."""
    from demo_training import load_demo_script  # bench/demo_training.py: scripts/demo.py, loaded by its path

    out_dir.mkdir(parents=True, exist_ok=True)
    trained = load_demo_script().train(out_dir, budget_s)
    if trained is None:
        raise SystemExit("the trainer (surrogait_train) is not installed: run `make setup`")
    return trained.path


def steal_note(run: dict) -> str:
    """What the hypervisor took from the machine in the run's worst 100 ms (the harness's host_steal)."""
    steal = run.get("host_steal") or {}
    if not steal.get("available"):
        return ""
    return (f"; the hypervisor took {steal['worst_ms']:.0f} ms of CPU in its worst {steal['window_ms']:.0f} ms "
            f"({steal['total_ms']:.0f} ms in the session)")


def markdown(result: dict) -> str:
    lines = [f"# Demo reliability ({result['machine']})", "",
             f"`{result['command']}`", "",
             "| configuration | policy | motor model | completed | falls | safety faults by cause (real / not real) | "
             "target |", "|---|---|---|---|---|---|---|"]
    for name, c in result["configs"].items():
        s = c["summary"]
        faults = ", ".join(f"{k} {v['real']}/{v['not_real']}" for k, v in s["faults_by_cause"].items()) or "none"
        lines.append(f"| {name} | {c['policy']} | {c['motor_model']} | {s['completed']}/{s['runs']} | {s['falls']} | "
                     f"{faults} | ≥ {TARGETS[name] * s['runs']:.0f}/{s['runs']}, no fault not real: "
                     f"{'met' if c['meets_target'] else 'NOT met'} |")
    lines += ["", "Each run: `python -m surrogait_rehearsal.demo --policy P --no-video --motor-model M` with fresh "
              "processes (trained_each: after its own training, as scripts/demo.py's; gait_switch: with `--switch-gait "
              f"G`, G = {', '.join(SWITCH_TO)} in turn); completed = exit code 0 (no safety damp, no fall, no dead "
              "process, no refused step)."]
    for name, c in result["configs"].items():
        preflown = [r["preflight"] for r in c["runs"] if "preflight" in r]
        if preflown:
            lines += ["", f"{name}: the pre-flight cleared a snapshot in {sum(p['cleared'] for p in preflown)} of "
                      f"{len(preflown)} trainings, flying {', '.join(str(p['flown']) for p in preflown)} snapshots."]
        failed = [r for r in c["runs"] if not r["completed"]]
        if failed:
            lines += ["", f"Not completed ({name}):"] + [f"- {r['run_dir']}: {r['outcome']}{steal_note(r)}"
                                                           for r in failed]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="runs per shipped-policy configuration")
    ap.add_argument("--trained-runs", type=int, default=10, help="runs of the freshly trained policy")
    ap.add_argument("--configs", nargs="+", choices=tuple(CONFIGS), default=list(CONFIGS))
    ap.add_argument("--train-budget-s", type=float, default=120.0)
    ap.add_argument("--domain", type=int, default=27)
    ap.add_argument("--workdir", type=Path, default=ROOT / "runs" / "demo_reliability")
    ap.add_argument("--out", type=Path, default=RESULTS / "demo_reliability")
    args = ap.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
    machine = describe_machine()
    policies = {"shipped": shipped_policy_path(), "gaits": shipped_gaits_policy("go2")}
    result = {"benchmark": "demo_reliability", "machine": machine, "machine_facts": machine_facts(),
              "command": "python bench/demo_reliability.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "configs": {}, **provenance()}  # commit; policy_sha256 filled per configuration below
    for name in args.configs:
        source, motor_model = CONFIGS[name]
        if source == "trained" and source not in policies:
            print(f"[{name}] training a policy for {args.train_budget_s:.0f} s", flush=True)
            policies[source] = train_policy(args.workdir / "trained_policy", args.train_budget_s)
        n = args.trained_runs if name.startswith("trained") else args.runs
        runs = []
        for i in range(n):
            run_dir = args.workdir / name / f"run{i:02d}"
            if source == "trained_each":  # as every `make demo`: its own training, then its own rehearsal
                print(f"[{name}] run {i + 1}/{n}: training a policy for {args.train_budget_s:.0f} s", flush=True)
                policies[source] = train_policy(run_dir / "trained", args.train_budget_s)
            switch = ("--switch-gait", SWITCH_TO[i % len(SWITCH_TO)]) if name == "gait_switch" else ()
            r = one_run(run_dir, policies[source], motor_model, args.domain, switch)
            r["policy_sha256"] = file_sha256(policies[source])
            if source == "trained_each":
                preflown = json.loads((run_dir / "trained" / "preflight.json").read_text())
                r["preflight"] = {"flown": len(preflown), "cleared": any(p["cleared"] for p in preflown)}
            runs.append(r)
            faults = ", ".join(f"{f['cause']}{'' if f['real'] else ' (NOT REAL)'}" for f in r["faults"]) or "no fault"
            print(f"[{name}] run {i + 1}/{n}: {'completed' if r['completed'] else 'NOT completed'} "
                  f"({r['outcome']}); {faults}{steal_note(r)}; {r['wall_s']:.0f} s", flush=True)
        summary = summarize(runs)
        met = summary["completed"] >= TARGETS[name] * n and summary["faults_not_real"] == 0
        result["configs"][name] = {"policy": str(policies[source]), "motor_model": motor_model, "summary": summary,
                                   "meets_target": met, "runs": runs}
        result["policy_sha256"][repo_relative(policies[source])] = file_sha256(policies[source])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(result, indent=1))
        args.out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    return 0 if all(c["meets_target"] for c in result["configs"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
