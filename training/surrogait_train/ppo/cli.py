"""`python -m surrogait_train.ppo {train,export}`: the PPO baseline on the trainer's environment.

    python -m surrogait_train.ppo train --run-dir runs/ppo_s0 --iterations 200 seed=0 env.num_envs=256 \
        --ppo entropy_coef=0.005
    python -m surrogait_train.ppo export --run-dir runs/ppo_s0 --out runs/ppo_s0/policy.onnx
    python -m surrogait_train.ppo train --run-dir runs/ppo_tune \
        --config ros2_ws/src/surrogait_bringup/policies/go2_trot_plain.yaml \
        --init-from ros2_ws/src/surrogait_bringup/policies/go2_trot_plain.onnx --ppo init_noise_std=0.2 \
        -- env.terrain=rough

The positional `key=value` overrides and `--config` are the differentiable trainer's config
(environment, rewards, seed, actor network), so both learners train on the same task;
`--ppo key=value` sets PPO hyper-parameters (see `PPOConfig`). `--device cuda` puts PPO's learner on
the GPU (the override `learner.device=cuda`); add `env.backend=mjx env.device=cuda` to keep the
environment there too (surrogait_train/devices.py). Evaluate the exported policy with the trainer's
`surrogait-train eval`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import yaml

from surrogait_train.config import ConfigError, apply_overrides, from_dict, load_config
from surrogait_train.ppo.config import PPOConfig, from_train_config
from surrogait_train.ppo.config import apply_overrides as apply_ppo_overrides

TRAIN_CONFIG_FILE = "train_config.yaml"
PPO_CONFIG_FILE = "ppo_config.yaml"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m surrogait_train.ppo", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train PPO (rsl_rl) on the trainer's environment")
    train.add_argument("--config", type=Path, default=None, help="trainer config YAML (default: shipped go2_trot)")
    train.add_argument("--run-dir", type=Path, required=True, help="where logs, checkpoints and policy.onnx go")
    train.add_argument(
        "--iterations", type=int, default=300, help="PPO iterations (each num_envs*num_steps_per_env samples)"
    )
    train.add_argument("--ppo", nargs="*", default=[], metavar="KEY=VALUE", help="PPO hyper-parameter overrides")
    train.add_argument(
        "--init-from", type=Path, default=None, metavar="POLICY",
        help="start the actor from an exported policy .onnx (fine-tuning; set --ppo init_noise_std=0.2 or so)",
    )
    train.add_argument(
        "--device", default=None,
        help="torch device of PPO's networks and updates: cpu, cuda, cuda:N (learner.device; default: the "
             "environment's, env.device)",
    )
    train.add_argument("overrides", nargs="*", help="trainer config overrides, e.g. env.num_envs=256 seed=1")

    export = sub.add_parser("export", help="export a PPO checkpoint as an ONNX policy with the contract embedded")
    export.add_argument("--run-dir", type=Path, required=True, help="a run directory written by `train`")
    export.add_argument("--checkpoint", type=Path, default=None, help="checkpoint (default: newest model_*.pt)")
    export.add_argument("--out", type=Path, required=True, help="output .onnx path")
    return parser


def _train(args: argparse.Namespace) -> int:
    from surrogait_train.ppo.train import PPOSession

    if args.device is not None:
        args.overrides = [*args.overrides, f"learner.device={args.device}"]
    if args.config is None:
        try:
            cfg = load_config(None, args.overrides)
        except ConfigError:  # no shipped config yet: defaults plus overrides
            cfg = apply_overrides(from_dict({}), args.overrides)
    else:
        cfg = load_config(args.config, args.overrides)
    ppo_cfg = apply_ppo_overrides(from_train_config(cfg), args.ppo)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    (args.run_dir / TRAIN_CONFIG_FILE).write_text(yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False))
    (args.run_dir / PPO_CONFIG_FILE).write_text(yaml.safe_dump(dataclasses.asdict(ppo_cfg), sort_keys=False))
    if args.init_from is not None and not args.init_from.is_file():
        raise FileNotFoundError(f"--init-from: {args.init_from} not found")
    session = PPOSession(cfg, ppo_cfg, log_dir=args.run_dir)
    try:
        if args.init_from is not None:
            from surrogait_train.ppo.init_from_policy import init_ppo_from_policy_file

            changed = init_ppo_from_policy_file(session, args.init_from)
            note = f" (with this run's {', '.join(changed)})" if changed else ""
            print(f"actor initialised from {args.init_from}{note}", flush=True)
        session.learn(args.iterations)
        out = session.export(args.run_dir / "policy.onnx")
    finally:
        session.close()
    print(
        f"PPO: {session.iterations} iterations, {session.env_samples} env samples, "
        f"{session.train_seconds:.1f} s; policy: {out}"
    )
    return 0


def _export(args: argparse.Namespace) -> int:
    from surrogait_train.ppo.train import PPOSession

    run_dir: Path = args.run_dir
    for name in (TRAIN_CONFIG_FILE, PPO_CONFIG_FILE):
        if not (run_dir / name).is_file():
            raise FileNotFoundError(f"{run_dir / name} not found; pass a run directory written by `train`")
    checkpoint = args.checkpoint
    if checkpoint is None:
        found = sorted(run_dir.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[-1]))
        if not found:
            raise FileNotFoundError(f"no model_*.pt checkpoint in {run_dir}; train first or pass --checkpoint")
        checkpoint = found[-1]
    if not checkpoint.is_file():
        raise FileNotFoundError(f"checkpoint {checkpoint} not found")
    cfg = from_dict(yaml.safe_load((run_dir / TRAIN_CONFIG_FILE).read_text()), str(run_dir / TRAIN_CONFIG_FILE))
    cfg.env.num_envs = 4  # only to construct the networks; no training happens here
    cfg.env.backend, cfg.env.device, cfg.learner.device = "cpu", "", "cpu"  # whatever the run trained on
    ppo_cfg = PPOConfig(**yaml.safe_load((run_dir / PPO_CONFIG_FILE).read_text()))
    ppo_cfg.num_mini_batches = 1
    session = PPOSession(cfg, ppo_cfg, log_dir=None)
    try:
        session.load(checkpoint)
        out = session.export(args.out)
    finally:
        session.close()
    print(f"exported {checkpoint} -> {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _train(args) if args.command == "train" else _export(args)
    except (ConfigError, ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
