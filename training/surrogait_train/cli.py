"""`surrogait-train`: train, export and evaluate differentiable-simulation locomotion policies.

surrogait-train train [--config FILE] [--run-dir DIR] [--resume] [key=value ...]
surrogait-train export --run-dir DIR [--checkpoint FILE] [--out policy.onnx]
surrogait-train eval POLICY.onnx [--episodes 32] [--seconds 10] [--condition NAME] [--out metrics.json]
surrogait-train upgrade-contract OLD.onnx --out NEW.onnx     # a schema-1 policy file under schema 2
surrogait-train sweep --out DIR [--config FILE] --grid KEY=V1,V2 [--grid ...] [--seeds 0 1] [--address ADDR]
                [--num-cpus N] [--cpus-per-run 1] [--max-retries 3] [--eval-episodes 8] [--eval-seconds 5]
                [key=value ...]                              # seeds x configs as Ray tasks (docs/sweeps.md)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from surrogait_core.policy.contract import ContractError
from surrogait_core.terrain import TERRAINS


def _cmd_train(args: argparse.Namespace) -> int:
    from surrogait_train.config import load_config
    from surrogait_train.trainer import CHECKPOINT, Trainer, trainer_from_checkpoint

    run_dir = Path(args.run_dir)
    ckpt = run_dir / CHECKPOINT
    if args.resume:
        if not ckpt.is_file():
            raise SystemExit(f"error: --resume: no checkpoint at {ckpt}; start a run without --resume first")
        trainer = trainer_from_checkpoint(ckpt, run_dir)
        if args.overrides:
            from surrogait_train.config import apply_overrides

            # only budgets may change on resume; anything else would silently change the experiment
            allowed = {"max_iterations", "budget_s", "checkpoint_every"}
            bad = [o for o in args.overrides if o.split("=", 1)[0] not in allowed]
            if bad:
                raise SystemExit(f"error: --resume only accepts overrides of {sorted(allowed)}, got {bad}")
            apply_overrides(trainer.cfg, args.overrides)
        print(f"resuming {run_dir} from iteration {trainer.iteration} ({trainer.env_steps} env steps)", flush=True)
    else:
        cfg = load_config(args.config, args.overrides)
        if ckpt.exists():
            raise SystemExit(f"error: {run_dir} already holds a run; use --resume or another --run-dir")
        trainer = Trainer(cfg, run_dir)
        if args.init_from:
            if not Path(args.init_from).is_file():
                raise SystemExit(f"error: --init-from: {args.init_from} not found")
            trainer.init_from(args.init_from)
            print(f"initialised networks from {args.init_from}", flush=True)
    callback = None
    if args.snapshot_every > 0:
        from surrogait_train.api import snapshot_callback

        callback = snapshot_callback(run_dir, args.snapshot_every)
    trainer.train(progress=not args.no_progress, callback=callback)
    print(f"trained to iteration {trainer.iteration}, {trainer.env_steps} env steps; checkpoint {ckpt}", flush=True)
    if args.export:
        from surrogait_train.export import export_onnx

        out = export_onnx(trainer.actor, trainer.env.contract, run_dir / "policy.onnx", trainer.provenance())
        print(f"exported {out}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from surrogait_train.export import export_onnx, parity_error
    from surrogait_train.trainer import CHECKPOINT, trainer_from_checkpoint

    ckpt = Path(args.checkpoint) if args.checkpoint else Path(args.run_dir) / CHECKPOINT
    if not ckpt.is_file():
        raise SystemExit(f"error: checkpoint {ckpt} not found; train first (surrogait-train train --run-dir ...)")
    trainer = trainer_from_checkpoint(ckpt, ckpt.parent)
    out = Path(args.out) if args.out else ckpt.parent / "policy.onnx"
    export_onnx(trainer.actor, trainer.env.contract, out, trainer.provenance())
    err = parity_error(trainer.actor, out)
    trainer.env.close()
    print(f"exported {out} ({out.stat().st_size / 1024:.0f} KiB); onnxruntime vs torch max |diff| = {err:.2e}")
    if err > 1e-5:
        raise SystemExit(f"error: ONNX parity {err:.2e} exceeds 1e-5")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from surrogait_train.conditions import condition_by_name
    from surrogait_train.evaluate import WALK_VX_RMSE, WALK_YAW_RMSE, UnknownGaitError, evaluate_policy

    try:
        condition = condition_by_name(args.condition)
    except ValueError as e:
        raise SystemExit(f"error: --condition: {e}") from None
    try:
        result = evaluate_policy(args.policy, num_episodes=args.episodes, episode_s=args.seconds, seed=args.seed,
                                 condition=condition, gait=args.gait, terrain=args.terrain)
    except UnknownGaitError as e:
        raise SystemExit(f"error: --gait: {e}") from None
    out = Path(args.out) if args.out else Path(args.policy).with_suffix(".eval.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.to_json())
    print(
        f"{args.policy} [{result.condition}, {result.gait}, {result.terrain}]: {result.episodes} episodes x "
        f"{result.episode_s:.0f} s  "
        + (f"crossed {result.crossed_rate:.3f}  " if result.crossed_rate is not None else "") +
        f"fall rate {result.fall_rate:.3f}  "
        f"vx RMSE {result.vx_rmse:.3f}  vy RMSE {result.vy_rmse:.3f}  yaw-rate RMSE {result.yaw_rate_rmse:.3f}  "
        f"CoT {result.cost_of_transport:.2f}  foot slip {result.foot_slip_m_s:.3f} m/s  "
        f"outside soft range by up to {result.soft_range_excess_rad:.3f} rad {result.soft_range_excess_joint}  "
        f"(gait-period averaged: vx RMSE {result.vx_rmse_gait_avg:.3f}, "
        f"yaw-rate RMSE {result.yaw_rate_rmse_gait_avg:.3f})"
    )
    verdict = "WALKS" if result.walks else "DOES NOT WALK"
    print(f"{verdict} (needs no falls, vx RMSE <= {WALK_VX_RMSE}, yaw-rate RMSE <= {WALK_YAW_RMSE}); metrics: {out}")
    return 0


def _cmd_upgrade_contract(args: argparse.Namespace) -> int:
    from surrogait_train.upgrade import upgrade_contract_file

    contract, warnings = upgrade_contract_file(args.policy, args.out)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"upgraded {args.policy} -> {args.out}: contract schema 1 -> {contract.schema_version}, network unchanged")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from surrogait_train.sweep import SweepSpec, parse_grid_arg, run_sweep

    # `--seeds 0 1 env.num_envs=8` would hand the override to --seeds (nargs="+"): take it back
    overrides = list(args.overrides) + [s for s in args.seeds if "=" in s]
    try:
        seeds = [int(s) for s in args.seeds if "=" not in s]
    except ValueError:
        raise SystemExit(f"error: --seeds takes integers, got {args.seeds}") from None
    spec = SweepSpec(
        out=Path(args.out), config=args.config, overrides=overrides, grid=[parse_grid_arg(g) for g in args.grid],
        seeds=seeds, eval_episodes=args.eval_episodes, eval_seconds=args.eval_seconds, address=args.address,
        num_cpus=args.num_cpus, cpus_per_run=args.cpus_per_run, max_retries=args.max_retries,
    )  # fmt: skip
    result = run_sweep(spec, progress=not args.no_progress)
    print(result.table, end="")
    done = len(result.rows) - len(result.failed)
    print(f"{done}/{len(result.rows)} cells done ({len(result.skipped)} finished before); "
          f"results: {spec.out / 'results.md'}, {spec.out / 'results.csv'}")  # fmt: skip
    for name, error in result.failed.items():
        print(f"error: cell {name} failed: {error}; its worker log: {spec.out / name / 'worker.log'}", file=sys.stderr)
    return 1 if result.failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="surrogait-train", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train a policy (MuJoCo forward, surrogate backward)")
    p.add_argument("--config", default=None, help="YAML config (default: the shipped configs/go2_trot.yaml)")
    p.add_argument("--run-dir", default="runs/go2_trot", help="run folder for logs and checkpoints")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its last checkpoint")
    p.add_argument(
        "--init-from", default=None, metavar="CHECKPOINT_OR_POLICY",
        help="start a new run (new config) from another run's checkpoint.pt, or from an exported policy .onnx "
        "(its actor; the critic starts fresh: set learner.critic_warmup_iterations)",
    )
    p.add_argument("--export", action="store_true", help="export RUN_DIR/policy.onnx at the end")
    p.add_argument("--snapshot-every", type=int, default=0, metavar="N",
                   help="also export RUN_DIR/snapshots/it<iteration>.onnx every N iterations, to choose among later")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("overrides", nargs="*", help="config overrides key=value, e.g. learner.actor_lr=5e-4")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser("export", help="export a checkpoint to ONNX with the policy contract embedded")
    p.add_argument("--run-dir", default="runs/go2_trot", help="run folder holding checkpoint.pt")
    p.add_argument("--checkpoint", default=None, help="checkpoint file (default RUN_DIR/checkpoint.pt)")
    p.add_argument("--out", default=None, help="ONNX path (default RUN_DIR/policy.onnx)")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("eval", help="evaluate an ONNX policy in MuJoCo; prints whether it walks")
    p.add_argument("policy", help="ONNX policy exported by `surrogait-train export`")
    p.add_argument("--episodes", type=int, default=32)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=10_000, help="held-out evaluation seed")
    p.add_argument(
        "--condition", default="nominal", help='a robustness-matrix condition, e.g. "delay 20 ms" (conditions.py)'
    )
    p.add_argument("--gait", default=None, help="a multi-gait policy's gait (default: its first); bound and gallop "
                                                 "are judged over 0.5-1.5 m/s")
    p.add_argument("--terrain", default="flat", choices=TERRAINS,
                   help="a terrain course walked straight ahead (crossed: the share of robots past its end)")
    p.add_argument("--out", default=None, help="metrics JSON (default POLICY.eval.json)")
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser(
        "upgrade-contract",
        help="rewrite a schema-1 policy's contract as schema 2 (soft joint range, default pose: from the robot model)",
    )
    p.add_argument("policy", help="ONNX policy with a schema-1 contract")
    p.add_argument("--out", required=True, help="upgraded ONNX path (the network is copied unchanged)")
    p.set_defaults(func=_cmd_upgrade_contract)

    p = sub.add_parser(
        "sweep",
        help="train + evaluate a grid of seeds x configs as Ray tasks (resumable), one table of results",
        description="Each cell (a seed and one value per --grid axis) trains in OUT/<cell> as a Ray task, resumes "
        "from its checkpoint when its worker dies, is exported and evaluated; OUT/results.md and results.csv "
        "collect them. Running the command again skips finished cells. See docs/sweeps.md.",
    )
    p.add_argument("--config", default=None, help="base YAML config (default: the shipped configs/go2_trot.yaml)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="a grid axis: a config key and its values (YAML), e.g. env.gait=trot,pace; repeatable")
    p.add_argument("--seeds", nargs="+", default=["0"], metavar="SEED", help="training seeds (default 0)")
    p.add_argument("--out", required=True,
                   help="sweep folder, one run folder per cell; with --address it must be storage every node "
                        "mounts at the same path")  # fmt: skip
    p.add_argument("--address", default=None,
                   help="an existing Ray cluster (HOST:PORT of `ray start --head`, or auto); default: an embedded "
                        "Ray on this machine")  # fmt: skip
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the embedded Ray (default: all)")
    p.add_argument("--cpus-per-run", type=float, default=1.0,
                   help="CPUs one cell reserves (default 1); match it to env.num_threads and learner.update_threads")
    p.add_argument("--max-retries", type=int, default=3, help="retries of a cell whose worker died (default 3)")
    p.add_argument("--eval-episodes", type=int, default=8)
    p.add_argument("--eval-seconds", type=float, default=5.0)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("overrides", nargs="*", help="config overrides key=value common to all cells")
    p.set_defaults(func=_cmd_sweep)
    return parser


def main(argv: list[str] | None = None) -> int:
    from surrogait_train.config import ConfigError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, ContractError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
