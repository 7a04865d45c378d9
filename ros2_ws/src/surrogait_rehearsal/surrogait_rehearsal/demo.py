"""The demo (the README's main command, `make demo`): train, rehearse, report.

    python -m surrogait_rehearsal.demo [--use-shipped-policy] [--quick] [--train-budget-s 120]

1. trains a Go2 policy with the differentiable trainer for a short budget and exports it to
   ONNX (or, with --use-shipped-policy, takes the shipped one);
2. starts the rehearsal as separate processes — the MuJoCo Go2 speaking unitree_sdk2 DDS, the
   policy node, and the state estimator and safety monitor where installed — each with its
   package's parameters file, as in launch/go2_rehearsal.launch.py (paths and domain overridden);
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
import shutil
import signal
import sys
import time
from importlib import resources
from pathlib import Path

from surrogait_core.onnx_policy import OnnxPolicy
from surrogait_rehearsal.demo_processes import ProcessGroup, write_params
from surrogait_rehearsal.demo_session import Session, SessionError, demo_segments
from surrogait_rehearsal.report import RunFiles, build_report

REPO_ROOT = Path(__file__).resolve().parents[4]
PACKAGES = REPO_ROOT / "ros2_ws" / "src"
SHIPPED_POLICY = "pretrained/go2_trot.onnx"
# The rehearsal of launch/go2_rehearsal.launch.py: (node name, executable, its package's parameters
# file — whose defaults are the rehearsal's — and whether the demo needs it).
NODES = (
    ("go2_sim", "go2_sim", PACKAGES / "surrogait_rehearsal/config/go2_sim.yaml", True),
    ("estimator_node", "estimator_node", PACKAGES / "surrogait_estimator/config/estimator.yaml", False),
    ("safety_monitor", "safety_monitor", PACKAGES / "surrogait_safety/config/safety_monitor.yaml", False),
    ("policy_node", "policy_node", PACKAGES / "surrogait_policy/config/policy_node.yaml", True),
)


def say(text: str) -> None:
    print(text, flush=True)


def shipped_policy_path() -> Path:
    try:
        return Path(str(resources.files("surrogait_train") / SHIPPED_POLICY))
    except ModuleNotFoundError:
        return REPO_ROOT / "training" / "surrogait_train" / SHIPPED_POLICY


def get_policy(args: argparse.Namespace, run_dir: Path) -> tuple[Path, str]:
    """The ONNX file to rehearse, and where it came from."""
    if args.policy:
        return Path(args.policy).resolve(), "given with --policy"
    if args.use_shipped_policy:
        return shipped_policy_path(), "the shipped policy (--use-shipped-policy)"
    try:
        from surrogait_train.api import QUICK_TRAINING_OVERRIDES, train_and_export
    except ImportError as e:
        say(f"  the trainer is not available ({e}); using the shipped policy instead")
        return shipped_policy_path(), "the shipped policy (trainer unavailable)"
    budget = args.train_budget_s
    say(f"  training with the differentiable trainer for {budget:.0f} s (use --use-shipped-policy to skip)")
    start = time.monotonic()
    path = train_and_export(list(QUICK_TRAINING_OVERRIDES), budget_s=budget, out_path=run_dir / "policy.onnx",
                            run_dir=run_dir / "training", progress=True)
    return path.resolve(), f"trained here for {budget:.0f} s ({time.monotonic() - start:.0f} s with export)"


def child_env(domain: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               MUJOCO_GL=env.get("MUJOCO_GL", "osmesa"), PYOPENGL_PLATFORM=env.get("PYOPENGL_PLATFORM", "osmesa"))
    # console scripts live next to this interpreter (the venv), whatever PATH says
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def executable(name: str) -> str | None:
    """A console script: the one next to this interpreter (the venv) first, else from PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.is_file() else shutil.which(name)


def node_overrides(name: str, args: argparse.Namespace, run_dir: Path, policy: Path) -> dict:
    common = {"dds_domain": args.domain, "network_interface": "lo"}
    return {
        "go2_sim": {**common, "log_path": str(run_dir / "sim_log.npz"), "motor_model": args.motor_model,
                    "video_path": "" if args.no_video else str(run_dir / "robot.mp4")},
        "estimator_node": common,
        "safety_monitor": {**common, "fault_log_path": str(run_dir / "safety_fault_log.jsonl"),
                           "policy_path": str(policy)},
        "policy_node": {**common, "policy_path": str(policy), "timing_log_path": str(run_dir / "policy_timing.npz")},
    }[name]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="surrogait demo", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--use-shipped-policy", action="store_true", help="skip training; rehearse the shipped policy")
    source.add_argument("--policy", help="rehearse this exported ONNX policy instead of training one")
    parser.add_argument("--train-budget-s", type=float, default=None,
                        help="training wall-clock budget, s (default 120; 20 with --quick)")
    parser.add_argument("--quick", action="store_true", help="short segments and a short training budget")
    parser.add_argument("--run-dir", type=Path, default=None, help="output folder (default runs/demo-<timestamp>)")
    parser.add_argument("--domain", type=int, default=1,
                        help="DDS domain for unitree_sdk2 and ROS_DOMAIN_ID (default 1, the rehearsal's)")
    parser.add_argument("--no-video", action="store_true", help="do not render the robot's video")
    parser.add_argument("--motor-model", choices=("driver", "on_command"), default="driver",
                        help="the simulator's motor model: PD at the physics rate from the latest LowCmd (driver, "
                             "as the robot's motor drivers), or a torque computed when a LowCmd arrives, then held")
    args = parser.parse_args(argv)
    if args.train_budget_s is None:
        args.train_budget_s = 20.0 if args.quick else 120.0
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    run_dir = (args.run_dir or REPO_ROOT / "runs" / f"demo-{stamp}").resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    # The safety monitor appends to its log; in a reused run folder the report must show this session only.
    (run_dir / "safety_fault_log.jsonl").unlink(missing_ok=True)
    # SIGTERM is handled like Ctrl-C, so the `finally` below stops the children either way.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    os.environ.update(ROS_DOMAIN_ID=str(args.domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    say(f"surrogait demo -> {run_dir}")

    say("[1/4] policy")
    policy, policy_source = get_policy(args, run_dir)
    contract = OnnxPolicy(policy, robot="go2").contract  # refuses a bad file before anything starts
    say(f"  {policy} ({policy_source}); {contract.obs_size} obs -> {contract.action_size} actions, "
        f"{1 / contract.control_dt_s:.0f} Hz, gait {contract.gait.name}")

    say(f"[2/4] rehearsal processes (DDS domain {args.domain} on lo; logs in {run_dir / 'logs'})")
    outcome, exit_code = "completed", 0
    segments = demo_segments(args.quick)
    session = None
    group = ProcessGroup(run_dir / "logs", child_env(args.domain))
    try:
        session = Session(args.domain, log=say)
        overrides = {name: node_overrides(name, args, run_dir, policy) for name, *_ in NODES}
        try:
            launch_rehearsal(group, session, overrides, run_dir / "config")
            run_session(session, group, segments)
        except SessionError as e:
            # A damp (the safety monitor's or the policy node's own), a dead process or a refused step:
            # the session did not complete. The report still shows what happened.
            if session.node.policy_state == "DAMP":
                outcome = f"stopped by a safety damp: {e}"
            else:
                outcome = f"stopped early: {e}"
            exit_code = 1
            say(f"  session {outcome}")
            try:
                session.call("damp", must_succeed=False)
            except SessionError:
                pass
        session.save(run_dir / "session.npz")
    except KeyboardInterrupt:
        say("interrupted: stopping the rehearsal")
        outcome, exit_code = "interrupted", 130
        if session is not None:
            session.save(run_dir / "session.npz")
    finally:
        say("  stopping the rehearsal processes (they save their recordings)")
        group.stop_all()
        if session is not None:
            session.close()
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
    info = {"run": run_dir.name, "policy_path": str(policy), "policy_source": policy_source,
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


def launch_rehearsal(group, session, overrides: dict[str, dict], config_dir: Path, log=say) -> list[str]:
    """Start the simulator, wait until it runs, then the nodes named in `overrides`.

    Each node gets its package's parameters file with `overrides` applied, written to
    `config_dir`. Optional nodes that are not installed are skipped.
    Starting the nodes once the simulator streams keeps their start-up from competing with its.
    """
    started = []
    for name, exe, template, required in NODES:
        if name not in overrides:
            continue
        path = executable(exe)
        if path is None:
            if required:
                raise SystemExit(f"demo: {exe} is not installed (run `make setup`)")
            log(f"  {name}: not installed, skipped")
            continue
        params = write_params(template, name, overrides[name], config_dir / template.name)
        group.start(name, path, params)
        started.append(name)
        log(f"  {name}: started")
        if name == "go2_sim":
            session.wait_for("the simulator's ground truth",
                             lambda: bool(session.node.ground_truth) or _raise_if(_children_dead(group)), 60.0)
    return started


def _children_dead(group) -> str | None:
    dead = group.dead()
    return f"{dead[0].name} exited ({dead[0].process.returncode}); see {dead[0].log_path}" if dead else None


def run_session(session, group, segments) -> None:
    session.started = [c.name for c in group.children]

    def children_alive() -> str | None:
        return _children_dead(group)

    session.wait_for("the policy node", lambda: session.node.policy_state is not None or
                     _raise_if(children_alive()), 60.0)
    say("[3/4] scripted session")
    # The policy node needs a fresh robot state before it accepts a stand-up: retry for a while.
    # A damp before anything moved is a false fault at bring-up, and fails the session like any other.
    deadline = time.monotonic() + 20.0
    while not session.call("stand_up", must_succeed=False)[0]:
        if session.node.policy_state == "DAMP":
            causes = [v.get("cause") for _, v in session.node.safety_states if v.get("cause")]
            raise SessionError(f"the policy node was in DAMP before the stand-up (safety monitor: "
                               f"{causes[-1] if causes else 'no fault'}; see the fault log)")
        if time.monotonic() > deadline:
            raise SessionError("the policy node never accepted stand_up")
        time.sleep(0.5)
    session.wait_for_state("READY", 15.0)
    session.call("walk")

    def progress(segment, elapsed) -> None:
        gt = session.latest_ground_truth()
        if gt is not None and int(elapsed * 10) % 10 == 0:
            say(f"  {segment.name:28s} {elapsed:4.1f}/{segment.duration_s:.0f} s   vx {gt[6]:+.2f} m/s  "
                f"yaw rate {gt[11]:+.2f} rad/s  height {gt[3]:.2f} m")

    def abort() -> str | None:
        if session.node.policy_state == "DAMP":
            return "the policy node went to DAMP"
        return children_alive()

    session.run_segments(segments, on_tick=progress, abort_on=abort)
    session.call("stop_walk")
    session.wait_for_state("READY", 5.0)
    time.sleep(1.0)
    if (state := session.node.policy_state) != "READY":  # a damp while standing after the walk
        raise SessionError(f"the policy node left READY before the final damp (now {state})")
    session.call("damp")
    session.wait_for_state("DAMP", 5.0)
    time.sleep(1.5)  # let the robot settle in damping, on camera
    latched = [v.get("cause", "") for _, v in session.node.safety_states if v.get("state") == "DAMP"]
    if latched:
        raise SessionError(f"the safety monitor latched during the session: {latched[0]}")


def _raise_if(reason: str | None) -> bool:
    if reason:
        raise SessionError(reason)
    return False


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None


if __name__ == "__main__":
    raise SystemExit(main())
