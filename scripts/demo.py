"""`make demo`: train a Go2 (or Go1) policy briefly, then rehearse it and write the report.

    python scripts/demo.py [--robot go2|go1] [--use-shipped-policy | --policy FILE] [--quick]
                           [--train-budget-s 120] [--run-dir DIR] [--simulator mujoco|gazebo|gazebo-standin]
                           [rehearsal options: --domain N --no-video --motor-model M]
    make demo DEMO_ARGS="--robot go1"
    make demo DEMO_ARGS="--simulator gazebo"     (where Gazebo Harmonic and ros_gz_bridge are installed)
    make demo DEMO_ARGS="--terrain rough --switch-gait pace"   (the shipped multi-gait policy, no training)

1. trains a policy with the differentiable trainer (surrogait_train, the robot's demo recipe) for
   --train-budget-s seconds of wall time, exporting a snapshot every 5 iterations, then pre-flies the six
   that tracked best in training through the demo's session against the safety monitor's thresholds
   (surrogait_train.preflight) and exports the cleared one that tracks best on commands of its own (not the
   eval's) as <run dir>/policy.onnx
   (the results: <run dir>/preflight.json) — skipped with --use-shipped-policy or --policy;
2. rehearses it: `python -m surrogait_rehearsal.demo --policy <run dir>/policy.onnx` (run in this
   process), which starts the processes, drives the scripted session and writes the report.
The exit code is the rehearsal's: 0 only when the scripted session completed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import signal
import sys
import time
from pathlib import Path

from surrogait_rehearsal import demo as rehearsal

# A 120 s demo training reaches ~125 iterations on 2 cores with the Go2's 512 robots, ~500 with the Go1's 16, and a run
# can slide for a hundred iterations and come back (docs/training-log.md, 2026-12-05 (6)): so the pre-flight flies the
# six snapshots from iteration 20 on whose iterations tracked the command best in the trainer's own log; ~6 s each.
SNAPSHOT_EVERY = 5
PREFLIGHT_CANDIDATES = 6
FIRST_CANDIDATE_ITERATION = 20
WALK_EPISODES = 16  # the eval's held-out commands, 8 s each: ~10 s on 2 cores
# Between cleared snapshots the pre-flight's one session (four commands) chose one that does not walk where another
# did (docs/training-log.md, 2026-12-05 (7)): they are told apart on commands of their own, drawn over the eval's
# ranges but never the eval's, so the verdict stays on held-out commands.
VALIDATION_EPISODES = 16
VALIDATION_SEED = 50_000  # apart from training's, the pre-flight's (40 000) and the eval's (10 000)


def say(text: str) -> None:
    print(text, flush=True)


def train(run_dir: Path, budget_s: float, robot: str = "go2", quick: bool = False,
          overrides: tuple[str, ...] = ()) -> TrainedPolicy | None:
    """Train (the robot's demo recipe, `overrides` on top), then pre-fly the snapshots that tracked best in training
    through the demo's own session against the safety monitor's limits, and export the cleared one that tracks best
    (else the closest) as run_dir/policy.onnx; None without the trainer."""
    try:
        from surrogait_train.api import DEMO_TRAINING_OVERRIDES, snapshots, train_and_export
        from surrogait_train.config import default_config_path
        from surrogait_train.preflight import SessionStep, best_cleared
    except ImportError as e:
        say(f"surrogait demo: the trainer is not available ({e}); rehearsing the shipped policy instead")
        return None
    say(f"surrogait demo: training with the differentiable trainer for {budget_s:.0f} s "
        f"(use --use-shipped-policy to skip) -> {run_dir / 'policy.onnx'}")
    start = time.monotonic()
    training_dir = run_dir / "training"
    out = run_dir / "policy.onnx"
    train_and_export([*DEMO_TRAINING_OVERRIDES[robot], *overrides], budget_s=budget_s, out_path=out,
                     config_path=default_config_path(f"{robot}_trot"), run_dir=training_dir,
                     progress=True, snapshot_every=SNAPSHOT_EVERY)
    trained_s = time.monotonic() - start
    found = snapshots(training_dir)
    metrics = training_dir / "metrics.csv"
    candidates = (best_tracked_in_training(found, training_tracking(metrics)) if metrics.is_file()
                  else spread_over_the_run(found))
    session = [SessionStep(s.duration_s, s.command) for s in rehearsal.demo_segments(quick)]
    say(f"surrogait demo: pre-flight of {len(candidates)} snapshots (iterations "
        f"{', '.join(str(it) for it, _ in candidates)}): the demo's session on 16 robots "
        "against the safety monitor's thresholds (surrogait_train.preflight)")
    chosen, results = best_cleared(
        [path for _, path in candidates], session,
        report=lambda i, r: say(f"  iteration {candidates[i][0]}: {r.summary()}"),
    )  # fmt: skip
    cleared = [i for i, r in enumerate(results) if r.cleared]
    validation: dict[int, float] = {}
    if len(cleared) > 1:
        say(f"surrogait demo: {len(cleared)} snapshots cleared; each walks {VALIDATION_EPISODES} episodes of "
            "commands of its own (not the eval's) to choose between them")
        validation = {i: validation_score(candidates[i][1]) for i in cleared}
        chosen = min(cleared, key=lambda i: (validation[i], results[i].tracking))
        say("  " + ", ".join(f"iteration {candidates[i][0]}: {validation[i]:.2f}" for i in cleared)
            + " (the worse of vx / 0.15 and yaw rate / 0.2 RMSE; a fall: inf)")
    flown = [{"iteration": candidates[i][0], "chosen": i == chosen,
              "validation": validation_entry(validation.get(i)), **r.as_dict()} for i, r in enumerate(results)]
    (run_dir / "preflight.json").write_text(json.dumps(flown, indent=1) + "\n")
    iteration, path = candidates[chosen]
    shutil.copyfile(path, out)
    verdict = "the best tracker cleared by" if results[chosen].cleared else "NOT cleared by (the closest)"
    if not results[chosen].cleared:
        say("surrogait demo: no snapshot was cleared by the pre-flight; rehearsing the closest, which may be damped")
    judged = judge_walking(out)
    say(f"surrogait demo: the trained policy {judged.describe()}")
    source = (f"trained here for {budget_s:.0f} s ({trained_s:.0f} s with export); iteration {iteration}, {verdict} "
              f"the pre-flight: {results[chosen].summary()}; {judged.describe()}")
    return TrainedPolicy(out.resolve(), source, iteration, max((it for it, _ in found), default=0),
                         results[chosen].cleared, judged)


def spread_over_the_run(found: list[tuple[int, Path]], count: int = PREFLIGHT_CANDIDATES,
                        first_iteration: int = FIRST_CANDIDATE_ITERATION) -> list[tuple[int, Path]]:
    """`count` of a run's (iteration, path) snapshots (newest first), evenly spaced from the newest back to
    `first_iteration` (all of them when there are fewer; spread over them all when none is that late)."""
    eligible = [s for s in found if s[0] >= first_iteration] or found
    if len(eligible) <= count:
        return eligible
    picks = sorted({round(k * (len(eligible) - 1) / (count - 1)) for k in range(count)})
    return [eligible[i] for i in picks]


def training_tracking(metrics_csv: Path, window: int = SNAPSHOT_EVERY * 2) -> dict[int, float]:
    """Per iteration, how well the training robots tracked their commands over the `window` iterations up to it:
    the worse of the mean velocity and yaw-rate errors as a fraction of the eval's WALKS bounds, and any fall
    counted as not tracking at all (+1). The trainer's own log, free to read; a proxy for the pre-flight."""
    import csv

    from surrogait_train.evaluate import tracking_fraction

    with open(metrics_csv, newline="") as f:
        rows = [(int(r["iteration"]), float(r["lin_vel_error"]), float(r["yaw_rate_error"]), float(r["fall_rate"]))
                for r in csv.DictReader(f)]
    scores = {}
    for k, (iteration, *_) in enumerate(rows):
        recent = rows[max(0, k - window + 1): k + 1]
        vel = sum(r[1] for r in recent) / len(recent)
        yaw = sum(r[2] for r in recent) / len(recent)
        scores[iteration] = tracking_fraction(vel, yaw) + (1.0 if any(r[3] for r in recent) else 0.0)
    return scores


def best_tracked_in_training(found: list[tuple[int, Path]], tracking: dict[int, float],
                             count: int = PREFLIGHT_CANDIDATES,
                             first_iteration: int = FIRST_CANDIDATE_ITERATION) -> list[tuple[int, Path]]:
    """The `count` snapshots (from `first_iteration` on) whose iterations tracked best in training, newest first.
    A small batch takes hundreds of noisy steps in the demo's minutes, and a run can slide for a hundred iterations
    and come back (docs/training-log.md, 2026-12-05 (6)): snapshots spread evenly fell in the pre-flight where the
    training log already showed them falling."""
    eligible = [s for s in found if s[0] >= first_iteration and s[0] in tracking] or found
    ranked = sorted(eligible, key=lambda s: (tracking.get(s[0], float("inf")), -s[0]))[:count]
    return sorted(ranked, reverse=True)


@dataclasses.dataclass(frozen=True)
class WalkVerdict:
    """Whether a trained policy walks by the eval's definition and stands still when told to (the demo's minutes
    may not be enough: the report must say so, not let a rehearsal that completed imply it)."""

    episodes: int
    falls: int
    vx_rmse: float  # m/s, over the eval's held-out commands
    yaw_rate_rmse: float  # rad/s
    walks: bool
    stand_drift: float  # m/s: the larger of |vx| and |vy| RMSE at a zero command
    stand_fell: bool
    stands: bool

    def describe(self) -> str:
        from surrogait_train.evaluate import STAND_RMSE_M_S, WALK_VX_RMSE, WALK_YAW_RMSE

        tracking = (f"{self.episodes} eval episodes: {self.falls} fell, vx RMSE {self.vx_rmse:.3f} m/s "
                    f"(<= {WALK_VX_RMSE}), yaw-rate RMSE {self.yaw_rate_rmse:.3f} rad/s (<= {WALK_YAW_RMSE})")
        standing = (f"told to stand it {'holds' if self.stands else 'does NOT hold'} still (drift RMSE "
                    f"{self.stand_drift:.3f} m/s, <= {STAND_RMSE_M_S}{', it fell' if self.stand_fell else ''})")
        return f"{'WALKS' if self.walks else 'does NOT walk'} by the eval's definition ({tracking}); {standing}"


def validation_commands(episodes: int = VALIDATION_EPISODES, seed: int = VALIDATION_SEED):
    """(episodes, 3) commands drawn uniformly over the eval's ranges, never its own fixed set."""
    import numpy as np

    from surrogait_train.evaluate import DEFAULT_EVAL_VX, EVAL_VY, EVAL_YAW

    ranges = np.array([DEFAULT_EVAL_VX, EVAL_VY, EVAL_YAW])
    return np.random.default_rng(seed).uniform(ranges[:, 0], ranges[:, 1], size=(episodes, 3))


def validation_score(policy: Path, episodes: int = VALIDATION_EPISODES) -> float:
    """The worse of vx and yaw-rate RMSE as fractions of the eval's WALKS bounds on `validation_commands` (below 1:
    it would walk there); inf if a robot falls."""
    from surrogait_train.evaluate import evaluate_policy, tracking_fraction

    r = evaluate_policy(policy, num_episodes=episodes, episode_s=8.0, seed=VALIDATION_SEED,
                        commands=validation_commands(episodes))
    return float("inf") if r.fall_rate else tracking_fraction(r.vx_rmse, r.yaw_rate_rmse)


def validation_entry(score: float | None) -> float | str | None:
    """preflight.json's value: the score, "fell", or None where the snapshot was not validated (strict JSON)."""
    if score is None:
        return None
    return round(score, 3) if score != float("inf") else "fell"


def judge_walking(policy: Path, episodes: int = WALK_EPISODES) -> WalkVerdict:
    import numpy as np

    from surrogait_train.evaluate import STAND_RMSE_M_S, evaluate_policy

    walk = evaluate_policy(policy, num_episodes=episodes, episode_s=8.0)
    stand = evaluate_policy(policy, num_episodes=4, episode_s=8.0, commands=np.zeros((4, 3)))
    drift = float(max(stand.vx_rmse, stand.vy_rmse))
    return WalkVerdict(episodes, int(sum(walk.fell)), float(walk.vx_rmse), float(walk.yaw_rate_rmse), walk.walks,
                       drift, bool(stand.fall_rate), stand.fall_rate == 0 and drift <= STAND_RMSE_M_S)


@dataclasses.dataclass(frozen=True)
class TrainedPolicy:
    """What the demo's training step made: the policy it rehearses, and how it got there."""

    path: Path
    source: str  # for the report: how long it trained, which snapshot, the pre-flight and the verdict
    iteration: int  # the snapshot chosen
    iterations_trained: int
    cleared: bool  # by the pre-flight
    verdict: WalkVerdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/demo.py", description=__doc__.split("\n\n")[0],
                                     epilog="Other options go to the rehearsal: python -m surrogait_rehearsal.demo -h")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--use-shipped-policy", action="store_true", help="skip training; rehearse the shipped policy")
    source.add_argument("--policy", help="skip training; rehearse this exported ONNX policy")
    parser.add_argument("--train-budget-s", type=float, default=None,
                        help="training wall-clock budget, s (default 120; 20 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a short training budget and short segments")
    parser.add_argument("--run-dir", type=Path, default=None, help="output folder (default runs/demo-<timestamp>)")
    parser.add_argument("--robot", choices=("go2", "go1"), default="go2",
                        help="train for and rehearse this robot (default go2)")
    parser.add_argument("--simulator", choices=rehearsal.SIMULATORS, default="mujoco",
                        help="where to rehearse: mujoco (default), gazebo (gz sim + ros_gz_bridge) or "
                             "gazebo-standin (a MuJoCo stand-in for them); Gazebo: Go2 only")
    parser.add_argument("--switch-gait", default=None, metavar="GAIT",
                        help="switch gait while walking: rehearses the shipped multi-gait policy (or --policy) "
                             "without training, since the demo's minutes train a trot only")
    args, rehearsal_args = parser.parse_known_args(argv)
    if (refusal := rehearsal.simulator_refusal(args.robot, args.simulator)) is not None:
        parser.error(refusal)  # before minutes of training
    run_dir = (args.run_dir or rehearsal.default_run_dir()).resolve()
    rehearsal_args += ["--run-dir", str(run_dir), "--robot", args.robot, "--simulator", args.simulator]
    rehearsal_args += ["--quick"] if args.quick else []
    rehearsal_args += ["--switch-gait", args.switch_gait] if args.switch_gait else []
    if args.policy:
        rehearsal_args += ["--policy", args.policy]
    elif args.use_shipped_policy or args.switch_gait:
        rehearsal_args += ["--use-shipped-policy"]  # with --switch-gait: the shipped multi-gait policy
    else:
        budget_s = args.train_budget_s if args.train_budget_s is not None else (20.0 if args.quick else 120.0)
        run_dir.mkdir(parents=True, exist_ok=True)
        # SIGTERM ends the training like Ctrl-C (the rehearsal handles it the same way).
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            trained = train(run_dir, budget_s, args.robot, args.quick)
        except KeyboardInterrupt:
            say("interrupted while training")
            return 130
        if trained is None:
            rehearsal_args += ["--use-shipped-policy"]
        else:
            rehearsal_args += ["--policy", str(trained.path), "--policy-source", trained.source]
    return rehearsal.main(rehearsal_args)


if __name__ == "__main__":
    sys.exit(main())
