"""The rehearsal demo: rehearse a policy in a scripted session, write the report.

    python -m surrogait_rehearsal.demo [--robot go2|go1] [--policy FILE | --use-shipped-policy] [--quick]
                                       [--motor-model M]

`make demo` (scripts/demo.py) trains a policy first and passes it here with --policy.
1. takes the policy given with --policy (else the shipped one) and checks its contract;
2. starts the rehearsal as separate processes — the MuJoCo robot speaking its wire (the Go2's
   unitree_sdk2 DDS, or the Go1's unitree_legged_sdk UDP with the safety monitor as the link's
   gateway), the policy node, and the state estimator and safety monitor where installed — each
   with its package's parameters file, as in launch/<robot>_rehearsal.launch.py (paths, domain
   and ports overridden);
3. drives a scripted session through the policy node's services and cmd_vel: stand up, walk
   0.5 m/s, turn, walk 1.0 m/s, stop, damp;
4. writes runs/demo-<timestamp>/ with report.md, metrics.json, plots/ and the robot's video.
Every child process is stopped on exit, Ctrl-C included.

The exit code tells the truth: 0 only when the scripted session completed — no safety damp, no
fall, no dead process, no refused step — and non-zero otherwise, after the report is written.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import time
from pathlib import Path

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_rehearsal.harness.operator import Operator, Segment, SessionError
from surrogait_rehearsal.harness.processes import (
    REHEARSAL_NICENESS,
    REPO_ROOT,
    ProcessGroup,
    go1_ports,
    launch_rehearsal,
    link_params,
    rehearsal_nodes,
    shipped_policy_path,
    sim_node,
)
from surrogait_rehearsal.report import RunFiles, build_report


def say(text: str) -> None:
    print(text, flush=True)


def demo_segments(quick: bool = False) -> list[Segment]:
    """Walk 0.5 m/s, turn, walk 1.0 m/s, stop (the issue's script); quick mode shortens each."""
    d = 3.0 if quick else 6.0
    return [
        Segment("walk 0.5 m/s", d, (0.5, 0.0, 0.0)),
        Segment("turn (0.5 m/s, 0.5 rad/s)", d, (0.5, 0.0, 0.5)),
        Segment("walk 1.0 m/s", d, (1.0, 0.0, 0.0)),
        Segment("stop", 2.0 if quick else 3.0, (0.0, 0.0, 0.0), scored=False),
    ]


def get_policy(args: argparse.Namespace) -> tuple[Path, str]:
    """The ONNX file to rehearse, and where it came from."""
    if args.policy:
        return Path(args.policy).resolve(), args.policy_source or "given with --policy"
    if args.use_shipped_policy:
        return shipped_policy_path(args.robot), "the shipped policy (--use-shipped-policy)"
    return shipped_policy_path(args.robot), "the shipped policy (no --policy given)"


def node_overrides(name: str, args: argparse.Namespace, run_dir: Path, policy: Path) -> dict:
    own = {
        sim_node(args.robot): {"log_path": str(run_dir / "sim_log.npz"), "motor_model": args.motor_model,
                               "video_path": "" if args.no_video else str(run_dir / "robot.mp4")},
        "estimator_node": {},
        "safety_monitor": {"fault_log_path": str(run_dir / "safety_fault_log.jsonl"), "policy_path": str(policy)},
        "policy_node": {"policy_path": str(policy), "timing_log_path": str(run_dir / "policy_timing.npz")},
    }[name]
    return {**link_params(args.robot, args.domain)[name], **own}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m surrogait_rehearsal.demo", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--use-shipped-policy", action="store_true", help="rehearse the shipped policy (the default)")
    source.add_argument("--policy", help="rehearse this exported ONNX policy")
    parser.add_argument("--robot", choices=("go2", "go1"), default="go2",
                        help="the robot rehearsed: go2 (unitree_sdk2 DDS) or go1 (unitree_legged_sdk UDP)")
    parser.add_argument("--policy-source", default=None,
                        help="where the --policy file came from, for the report (e.g. 'trained here for 120 s')")
    parser.add_argument("--quick", action="store_true", help="short segments")
    parser.add_argument("--run-dir", type=Path, default=None, help="output folder (default runs/demo-<timestamp>)")
    parser.add_argument("--domain", type=int, default=1,
                        help="DDS domain for unitree_sdk2 and ROS_DOMAIN_ID (default 1, the rehearsal's)")
    parser.add_argument("--no-video", action="store_true", help="do not render the robot's video")
    parser.add_argument("--motor-model", choices=("driver", "on_command"), default="driver",
                        help="the simulator's motor model: PD at the physics rate from the latest LowCmd (driver, "
                             "as the robot's motor drivers), or a torque computed when a LowCmd arrives, then held")
    return parser.parse_args(argv)


def default_run_dir() -> Path:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    return REPO_ROOT / "runs" / f"demo-{stamp}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run_dir = (args.run_dir or default_run_dir()).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    # The safety monitor appends to its log; in a reused run folder the report must show this session only.
    (run_dir / "safety_fault_log.jsonl").unlink(missing_ok=True)
    # SIGTERM is handled like Ctrl-C, so the `finally` below stops the children either way.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    os.environ.update(ROS_DOMAIN_ID=str(args.domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    say(f"surrogait demo -> {run_dir}")

    say("[1/4] policy")
    policy, policy_source = get_policy(args)
    contract = OnnxPolicy(policy, robot=args.robot).contract  # refuses a bad file before anything starts
    say(f"  {policy} ({policy_source}); {contract.obs_size} obs -> {contract.action_size} actions, "
        f"{1 / contract.control_dt_s:.0f} Hz, gait {contract.gait.name}")

    wire = (f"Go1 UDP on 127.0.0.1 ports {go1_ports(args.domain).robot}.." if args.robot == "go1"
            else f"DDS domain {args.domain} on lo")
    say(f"[2/4] rehearsal processes ({args.robot}: {wire}; logs in {run_dir / 'logs'})")
    outcome, exit_code = "completed", 0
    segments = demo_segments(args.quick)
    operator = None
    group = ProcessGroup(run_dir / "logs", args.domain, config_dir=run_dir / "config", niceness=REHEARSAL_NICENESS)
    try:
        operator = Operator(args.domain, log=say, name="surrogait_demo")
        overrides = {name: node_overrides(name, args, run_dir, policy) for name in rehearsal_nodes(args.robot)}
        try:
            launch_rehearsal(group, operator, overrides, log=say)
            run_session(operator, group, segments)
        except SessionError as e:
            # A damp (the safety monitor's or the policy node's own), a dead process or a refused step:
            # the session did not complete. The report still shows what happened.
            if operator.policy_state == "DAMP":
                outcome = f"stopped by a safety damp: {e}"
            else:
                outcome = f"stopped early: {e}"
            exit_code = 1
            say(f"  session {outcome}")
            try:
                operator.call("damp")
            except SessionError:
                pass
        operator.save(run_dir / "session.npz")
    except KeyboardInterrupt:
        say("interrupted: stopping the rehearsal")
        outcome, exit_code = "interrupted", 130
        if operator is not None:
            operator.save(run_dir / "session.npz")
    finally:
        say("  stopping the rehearsal processes (they save their recordings)")
        group.stop_all()
        if operator is not None:
            operator.close()
    for child in group.children:
        if child.process.returncode not in (0, -signal.SIGINT, 130):
            say(f"  {child.name} exited with {child.process.returncode}; see {child.log_path}")
            if exit_code == 0:
                outcome, exit_code = f"{child.name} exited with {child.process.returncode}", 1

    say("[4/4] report")
    if not (run_dir / "session.npz").is_file():
        say("  no session was recorded; no report")
        return exit_code or 1
    files = RunFiles(session=run_dir / "session.npz", sim_log=_existing(run_dir / "sim_log.npz"),
                     timing=_existing(run_dir / "policy_timing.npz"),
                     fault_log=_existing(run_dir / "safety_fault_log.jsonl"), video=_existing(run_dir / "robot.mp4"))
    info = {"run": run_dir.name, "robot": args.robot, "policy_path": str(policy), "policy_source": policy_source,
            "processes": [c.name for c in group.children],
            "outcome": outcome, "quick": args.quick,
            "machine": f"{platform.node()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"}
    report, metrics = build_report(run_dir, files, info)
    tracking, falls = metrics["tracking"], metrics["falls"]
    say(f"  walking vx RMSE {tracking['walking_vx_rmse']:.3f} m/s; fell: {falls['fell']}; "
        f"distance {falls.get('distance_m', 0.0):.2f} m")
    say(f"report: {report}")
    if falls["fell"] and exit_code == 0:
        outcome, exit_code = "the robot fell", 1
    say(f"result: {'COMPLETED' if exit_code == 0 else 'NOT COMPLETED'} ({outcome})")
    return exit_code


def run_session(operator: Operator, group: ProcessGroup, segments: list[Segment]) -> None:
    """The scripted session: stand up, walk through `segments`, stop, damp. SessionError when it cannot go on."""
    operator.wait_for("the policy node", lambda: operator.policy_state is not None, 60.0, abort_on=group.why_dead)
    say("[3/4] scripted session")
    # The policy node needs a fresh robot state before it accepts a stand-up: retry for a while.
    # A damp before anything moved is a false fault at bring-up, and fails the session like any other.
    deadline = time.monotonic() + 20.0
    while not operator.call("stand_up")[0]:
        if operator.policy_state == "DAMP":
            causes = [v.get("cause") for _, v in operator.safety_states if v.get("cause")]
            raise SessionError(f"the policy node was in DAMP before the stand-up (safety monitor: "
                               f"{causes[-1] if causes else 'no fault'}; see the fault log)")
        if time.monotonic() > deadline:
            raise SessionError("the policy node never accepted stand_up")
        time.sleep(0.5)
    operator.wait_for_state("READY", 15.0)
    operator.call("walk", must_succeed=True)

    def progress(segment: Segment, elapsed: float) -> None:
        gt = operator.latest_ground_truth()
        if gt is not None and int(elapsed * 10) % 10 == 0:
            say(f"  {segment.name:28s} {elapsed:4.1f}/{segment.duration_s:.0f} s   vx {gt[6]:+.2f} m/s  "
                f"yaw rate {gt[11]:+.2f} rad/s  height {gt[3]:.2f} m")

    def abort() -> str | None:
        if operator.policy_state == "DAMP":
            return "the policy node went to DAMP"
        return group.why_dead()

    operator.run_segments(segments, on_tick=progress, abort_on=abort)
    operator.call("stop_walk", must_succeed=True)
    operator.wait_for_state("READY", 5.0)
    time.sleep(1.0)
    if (state := operator.policy_state) != "READY":  # a damp while standing after the walk
        raise SessionError(f"the policy node left READY before the final damp (now {state})")
    operator.call("damp", must_succeed=True)
    operator.wait_for_state("DAMP", 5.0)
    time.sleep(1.5)  # let the robot settle in damping, on camera
    latched = [v.get("cause", "") for _, v in operator.safety_states if v.get("state") == "DAMP"]
    if latched:
        raise SessionError(f"the safety monitor latched during the session: {latched[0]}")


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None


if __name__ == "__main__":
    raise SystemExit(main())
