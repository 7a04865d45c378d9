"""The rehearsal demo: rehearse a policy in a scripted session, write the report.

    python -m surrogait_rehearsal.demo [--robot go2|go1] [--policy FILE | --use-shipped-policy] [--quick]
                                       [--motor-model M] [--simulator mujoco|gazebo|gazebo-standin]

`make demo` (scripts/demo.py) trains a policy first and passes it here with --policy.
1. takes the policy given with --policy (else the shipped one: with --switch-gait, the shipped multi-gait
   policy) and checks its contract;
2. starts the rehearsal as separate processes — the MuJoCo robot speaking its wire (the Go2's
   unitree_sdk2 DDS, or the Go1's unitree_legged_sdk UDP with the safety monitor as the link's
   gateway), the policy node, and the state estimator and safety monitor where installed — each
   with its package's parameters file, as in launch/<robot>_rehearsal.launch.py (paths, domain
   and ports overridden). `--simulator gazebo` rehearses the Go2 in Gazebo instead, as
   launch/go2_gazebo.launch.py (gz sim, ros_gz_bridge, the Gazebo bridge node speaking the Go2's
   wire); `--simulator gazebo-standin` the same with a MuJoCo stand-in for gz sim + ros_gz_bridge
   (surrogait_rehearsal.harness.gazebo); one rehearsal `Session` (surrogait_rehearsal.harness.session);
3. drives a scripted session through the policy node's services and cmd_vel: stand up, walk
   0.5 m/s, turn, walk 1.0 m/s, stop, damp;
4. writes runs/demo-<timestamp>/ with report.md, metrics.json, plots/ and the robot's video.
Every child process is stopped on exit, Ctrl-C included.

The exit code tells the truth: 0 only when the scripted session completed — no safety damp, no
fall, no dead process, no refused step — and non-zero otherwise, after the report is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import signal
from collections.abc import Callable
from pathlib import Path

from surrogait_core.policy.contract import read_contract
from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.terrain import TERRAINS
from surrogait_rehearsal.harness.gazebo import GazeboUnavailable, gazebo_commands
from surrogait_rehearsal.harness.host_steal import StealSampler
from surrogait_rehearsal.harness.nodes import REPO_ROOT, rehearsal_robot, shipped_policy_path, sim_node
from surrogait_rehearsal.harness.operator import Operator, Segment, SessionError
from surrogait_rehearsal.harness.session import SIMULATORS, Session, SessionConfig, simulator_refusal
from surrogait_rehearsal.report import RunFiles, build_report

ROUGH_POLICY = "{robot}_trot_rough.onnx"  # beside the robot's shipped trot: fine-tuned on the rough course
GAITS_POLICY = "{robot}_gaits.onnx"  # beside the robot's shipped trot: trot, pace, bound and gallop (issue 14)


def say(text: str) -> None:
    print(text, flush=True)


def terrain_segments(quick: bool = False) -> list[Segment]:
    """Straight over a terrain course (4 m, 0.5 m ahead of the start) and on: 0.6 m/s for 10 s, then stop."""
    return [
        Segment("onto the course, 0.6 m/s", 4.0 if quick else 5.0, (0.6, 0.0, 0.0)),
        Segment("over and off it, 0.6 m/s", 6.0 if quick else 7.0, (0.6, 0.0, 0.0)),
        Segment("stop", 2.0, (0.0, 0.0, 0.0), scored=False),
    ]


def demo_segments(quick: bool = False) -> list[Segment]:
    """Walk 0.5 m/s, turn, walk 1.0 m/s, stop (the issue's script); quick mode shortens each."""
    d = 2.0 if quick else 6.0  # quick: a second of each scored after report.SETTLE_S (the tests' demo)
    return [
        Segment("walk 0.5 m/s", d, (0.5, 0.0, 0.0)),
        Segment("turn (0.5 m/s, 0.5 rad/s)", d, (0.5, 0.0, 0.5)),
        Segment("walk 1.0 m/s", d, (1.0, 0.0, 0.0)),
        Segment("stop", 1.0 if quick else 3.0, (0.0, 0.0, 0.0), scored=False),
    ]


def terrain_note(terrain: str, robot: str = "go2") -> str | None:
    """What to know before rehearsing `terrain`: its courses are height fields, whose contacts a policy trained
    without domain randomisation has not met (bench/results/heightfield_contacts.md)."""
    if terrain == "flat":
        return None
    note = (f"  note: the {terrain} course is a MuJoCo height field, where a foot gets about three contacts and a "
            "policy trained without domain randomisation can fall even on its flat parts (35/64 against 0/64 on "
            "the plane, bench/results/heightfield_contacts.md); the shipped policies are randomised "
            "(--use-shipped-policy)")
    if terrain != "rough":
        return note
    # the one course a shipped policy was fine-tuned for, and only the Go2's (surrogait_bringup/policies/README.md)
    rough_policy = shipped_policy_path(robot).with_name(ROUGH_POLICY.format(robot=robot))
    if rough_policy.is_file():
        return note + (f"; for rough ground, --policy {rough_policy} crosses the trainer's rough course in 97 % "
                       "of episodes, against 53 % (surrogait_bringup/policies/README.md)")
    return note + (f"; no policy fine-tuned for rough ground is shipped for the {robot} "
                   "(surrogait_bringup/policies/README.md)")


def shipped_gaits_policy(robot: str) -> Path | None:
    """The robot's shipped multi-gait policy, if one is shipped."""
    path = shipped_policy_path(robot).with_name(GAITS_POLICY.format(robot=robot))
    return path if path.is_file() else None


def gait_switch_refusal(gait: str, policy_gaits: tuple[str, ...], robot: str) -> str | None:
    """Why the session cannot switch to `gait` with a policy trained for `policy_gaits` (None: it can)."""
    if gait in policy_gaits:
        return None
    why = f"cannot switch to the gait {gait!r}: the policy was trained for {', '.join(policy_gaits)} only"
    shipped = shipped_gaits_policy(robot)
    if shipped is None:
        return why + f"; rehearse a multi-gait policy with --policy (none is shipped for the {robot})"
    from_shipped = read_contract(shipped, robot=robot).gait_names
    if gait not in from_shipped:
        return why + f"; the shipped multi-gait policy knows {', '.join(from_shipped)}"
    return why + f"; --policy {shipped} walks {', '.join(from_shipped)} (or leave out --policy)"


def get_policy(args: argparse.Namespace) -> tuple[Path, str]:
    """The ONNX file to rehearse, and where it came from."""
    if args.policy:
        return Path(args.policy).resolve(), args.policy_source or "given with --policy"
    if args.switch_gait is not None and (gaits := shipped_gaits_policy(args.robot)) is not None:
        return gaits, "the shipped multi-gait policy (--switch-gait without --policy)"
    if args.use_shipped_policy:
        return shipped_policy_path(args.robot), "the shipped policy (--use-shipped-policy)"
    return shipped_policy_path(args.robot), "the shipped policy (no --policy given)"


def session_config(args: argparse.Namespace, run_dir: Path, policy: Path) -> SessionConfig:
    """The demo's rehearsal: the session's own (the packages' parameters files, the link, the records in `run_dir`),
    with the video, the policy node's loop timing, and the MuJoCo simulator's motor model and terrain as asked."""
    return SessionConfig(run_dir, domain=args.domain, robot=args.robot, simulator=args.simulator, policy=policy,
                         params={sim_node(args.robot): {"motor_model": args.motor_model, "terrain": args.terrain}},
                         video=not args.no_video, timing_log=True, operator_name="surrogait_demo")


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
                             "as the robot's motor drivers), or a torque computed when a LowCmd arrives, then held "
                             "(MuJoCo only; the Gazebo bridge runs the PD at its own rate)")
    parser.add_argument("--terrain", choices=TERRAINS, default="flat",
                        help="rough, slope or stairs: the session walks straight over that course (surrogait_core."
                             "terrain) instead of the flat-ground script (MuJoCo rehearsal only)")
    parser.add_argument("--switch-gait", default=None, metavar="GAIT",
                        help="switch to this gait (policy/gait/GAIT) as the second segment starts; the report "
                             "marks the change on the velocity plot. Needs a multi-gait policy: without --policy, "
                             "the robot's shipped one (surrogait_bringup/policies/<robot>_gaits.onnx)")
    parser.add_argument("--simulator", choices=SIMULATORS, default="mujoco",
                        help="mujoco (go2_sim / go1_sim, the default); gazebo (gz sim + ros_gz_bridge + the Gazebo "
                             "bridge node; needs Gazebo Harmonic and ros_gz_bridge); gazebo-standin (the same with a "
                             "MuJoCo stand-in for gz sim + ros_gz_bridge). Gazebo: Go2 only")
    args = parser.parse_args(argv)
    if args.terrain != "flat" and args.simulator != "mujoco":
        parser.error("--terrain is the MuJoCo rehearsal's (go2_sim / go1_sim); the Gazebo worlds are flat")
    if (refusal := simulator_refusal(args.robot, args.simulator)) is not None:
        parser.error(refusal)
    return args


def default_run_dir() -> Path:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    return REPO_ROOT / "runs" / f"demo-{stamp}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.simulator == "gazebo":
        try:
            gazebo_commands()  # refuse before anything is made or started when Gazebo is not installed
        except GazeboUnavailable as e:
            say(f"surrogait demo: cannot rehearse in Gazebo: {e}")
            return 2
    run_dir = (args.run_dir or default_run_dir()).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    # SIGTERM is handled like Ctrl-C, so the `finally` below stops the children either way.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    os.environ.update(ROS_DOMAIN_ID=str(args.domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    say(f"surrogait demo -> {run_dir}")

    say("[1/4] policy")
    policy, policy_source = get_policy(args)
    contract = OnnxPolicy(policy, robot=args.robot).contract  # refuses a bad file before anything starts
    say(f"  {policy} ({policy_source}); {contract.obs_size} obs -> {contract.action_size} actions, "
        f"{1 / contract.control_dt_s:.0f} Hz, gait {contract.gait.name}")
    if args.switch_gait is not None and (refusal := gait_switch_refusal(args.switch_gait, contract.gait_names,
                                                                        args.robot)) is not None:
        say(f"surrogait demo: {refusal}")
        return 2
    if (note := terrain_note(args.terrain, args.robot)) is not None:
        say(note)

    config = session_config(args, run_dir, policy)
    wire = rehearsal_robot(args.robot).wire(args.domain)
    say(f"[2/4] rehearsal processes ({args.robot} in {args.simulator}: {wire}; logs in {run_dir / 'logs'})")
    outcome, exit_code = "completed", 0
    segments = terrain_segments(args.quick) if args.terrain != "flat" else demo_segments(args.quick)
    session = Session(config, log=say)
    steal = StealSampler().start()  # a paused VM stalls every process at once: the report says if it happened
    try:
        try:
            session.start()
            say("[3/4] scripted session")
            session.run_session(segments, switch_gait=args.switch_gait, on_tick=progress(session.operator))
        except SessionError as e:
            # A damp (the safety monitor's or the policy node's own), a dead process or a refused step:
            # the session did not complete. The report still shows what happened.
            if session.operator.policy_state == "DAMP":
                outcome = f"stopped by a safety damp: {e}"
            else:
                outcome = f"stopped early: {e}"
            exit_code = 1
            say(f"  session {outcome}")
            try:
                session.operator.call("damp")
            except SessionError:
                pass
    except KeyboardInterrupt:
        say("interrupted: stopping the rehearsal")
        outcome, exit_code = "interrupted", 130
    finally:
        say("  stopping the rehearsal processes (they save their recordings)")
        session.stop()
        host_steal = steal.stop()
    group = session.group
    for child in group.children:
        if child.process.returncode not in (0, -signal.SIGINT, 130):
            say(f"  {child.name} exited with {child.process.returncode}; see {child.log_path}")
            if exit_code == 0:
                outcome, exit_code = f"{child.name} exited with {child.process.returncode}", 1

    say("[4/4] report")
    recorded = session.files
    if not recorded.session.is_file():
        say("  no session was recorded; no report")
        return exit_code or 1
    files = RunFiles(session=recorded.session, sim_log=_existing(recorded.sim_log), timing=_existing(recorded.timing),
                     fault_log=_existing(recorded.fault_log), video=_existing(recorded.video),
                     recording=_existing(recorded.recording))
    info = {"run": run_dir.name, "robot": args.robot, "simulator": args.simulator, "policy_path": str(policy),
            "policy_source": policy_source,
            "processes": [c.name for c in group.children],
            "outcome": outcome, "quick": args.quick, "host_steal": dataclasses.asdict(host_steal),
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


def progress(operator: Operator) -> Callable[[Segment, float], None]:
    """A line a second while walking: the segment, its time, the ground truth's speed, yaw rate and height."""
    def tick(segment: Segment, elapsed: float) -> None:
        gt = operator.latest_ground_truth()
        if gt is not None and int(elapsed * 10) % 10 == 0:
            say(f"  {segment.name:28s} {elapsed:4.1f}/{segment.duration_s:.0f} s   vx {gt[6]:+.2f} m/s  "
                f"yaw rate {gt[11]:+.2f} rad/s  height {gt[3]:.2f} m")

    return tick


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None


if __name__ == "__main__":
    raise SystemExit(main())
