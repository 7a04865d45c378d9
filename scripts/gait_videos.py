"""A short video of each gait of a multi-gait policy, from the rehearsal (issue 14).

    python scripts/gait_videos.py [--policy ros2_ws/src/surrogait_bringup/policies/go2_gaits.onnx] \
        [--out-dir docs/media]

For each gait after the policy's first it rehearses the demo's session (`python -m surrogait_rehearsal.demo
--switch-gait GAIT --no-video`: the real processes over DDS, switching gait as the turn begins), then renders
a clip of each gait from the simulator's recording with the rehearsal's renderer
(surrogait_rehearsal.gait_clips): the first gait from the first session's opening walk (0.5 m/s), each other
from its own session after the switch (the turn at 0.5 m/s and 0.5 rad/s, then 1.0 m/s). A session that does
not complete (a fall, a safety damp) makes no clip, and the script's exit code says so.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from surrogait_core.policy.contract import read_contract
from surrogait_core.robot_spec import load_robot_spec
from surrogait_rehearsal.demo import shipped_gaits_policy
from surrogait_rehearsal.gait_clips import gait_windows, render_window
from surrogait_rehearsal.harness.nodes import REPO_ROOT
from surrogait_rehearsal.report import load_session


def rehearse(policy: Path, gait: str, run_dir: Path, robot: str, terrain: str, domain: int) -> int:
    command = [sys.executable, "-m", "surrogait_rehearsal.demo", "--policy", str(policy), "--robot", robot,
               "--switch-gait", gait, "--terrain", terrain, "--no-video", "--run-dir", str(run_dir),
               "--domain", str(domain)]
    print(f"rehearsing the switch to {gait}: {' '.join(command[1:])}", flush=True)
    return subprocess.run(command, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=("go2", "go1"), default="go2")
    parser.add_argument("--policy", type=Path, default=None, help="a multi-gait policy (default: the shipped one)")
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "docs" / "media")
    parser.add_argument("--work-dir", type=Path, default=REPO_ROOT / "runs" / "gait_videos")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each clip")
    parser.add_argument("--terrain", default="flat")
    parser.add_argument("--domain", type=int, default=1)
    args = parser.parse_args(argv)
    policy = args.policy or shipped_gaits_policy(args.robot)
    if policy is None:
        parser.error(f"no multi-gait policy is shipped for the {args.robot}: give one with --policy")
    gaits = read_contract(policy, robot=args.robot).gait_names
    if len(gaits) < 2:
        parser.error(f"{policy} walks one gait ({gaits[0]}): give a multi-gait policy with --policy")
    spec = load_robot_spec(args.robot)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    made, failed = {}, []
    for gait in gaits[1:]:
        run_dir = args.work_dir / gait
        if (rc := rehearse(policy, gait, run_dir, args.robot, args.terrain, args.domain)) != 0:
            failed.append(f"{gait} (the session did not complete, exit {rc}: {run_dir / 'report.md'})")
            continue
        session = load_session(run_dir / "session.npz")
        with np.load(run_dir / "sim_log.npz") as z:
            sim_log = {k: z[k] for k in ("time_s", "stamp_unix_s", "joint_pos", "base_pos_w", "base_quat_wxyz")}
        for window in gait_windows(session, sim_log, args.seconds):
            if window.gait in made:
                continue  # the first gait's clip comes from the first session
            path = args.out_dir / f"{args.robot}_{window.gait}.mp4"
            frames = render_window(sim_log, spec, window, path, terrain=args.terrain)
            made[window.gait] = {"path": str(path), "frames": frames, "session": str(run_dir),
                                 "sim_time_s": [round(window.start_sim_s, 2), round(window.end_sim_s, 2)]}
            print(f"  {window.gait}: {path} ({frames} frames, {path.stat().st_size // 1024} KiB)", flush=True)
    (args.work_dir / "clips.json").write_text(json.dumps({"policy": str(policy), "clips": made,
                                                          "failed": failed}, indent=1) + "\n")
    for why in failed:
        print(f"no clip for {why}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
