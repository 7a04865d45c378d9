"""The training loop: build env + surrogate + SHAC from a config, log, checkpoint, resume.

Run folder layout: `config.yaml` (the resolved config), `metrics.csv`, TensorBoard events,
`checkpoint.pt` (written atomically: tmp file + os.replace), `policy.onnx` after export.
"""

from __future__ import annotations

import csv
import os
import random
import time
from pathlib import Path

import numpy as np
import torch

from surrogait_core.policy.provenance import make_provenance
from surrogait_train.config import TrainConfig, dump_yaml, from_dict, to_dict
from surrogait_train.devices import learner_device, make_env
from surrogait_train.diff_env import SurrogateRollout
from surrogait_train.env import make_contract
from surrogait_train.export import action_reference_of
from surrogait_train.onnx_init import PolicyFileMismatch, floor_note, load_policy_file
from surrogait_train.provenance import git_commit, stages_of
from surrogait_train.reference import BALANCE_STEP_KEYS, PITCH_GAITS_KEY
from surrogait_train.shac import SHAC, IterationStats
from surrogait_train.surrogate import Surrogate
from surrogait_train.widen import appended_size, widen_learner_state

CHECKPOINT = "checkpoint.pt"


def seed_everything(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """Seed the process's generators; returns the learner's own generator, on its device."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator(device=device).manual_seed(seed)


def csv_header(csv_path: Path) -> list[str]:
    with open(csv_path, newline="") as f:
        return next(csv.reader(f))


def truncate_metrics(csv_path: Path, last_iteration: int) -> None:
    """Keep the header and the rows up to `last_iteration`, rewriting the file atomically (tmp + os.replace).

    A run killed after its last checkpoint has logged rows that the resumed run logs again; torn or
    unreadable rows from the crash are dropped too.
    """
    if not csv_path.exists():
        return
    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return
    header, kept = rows[0], [rows[0]]
    for row in rows[1:]:
        try:
            if len(row) == len(header) and int(row[0]) <= last_iteration:
                kept.append(row)
        except ValueError:
            pass
    tmp = csv_path.with_name(csv_path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        csv.writer(f).writerows(kept)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, csv_path)


class Trainer:
    def __init__(self, cfg: TrainConfig, run_dir: Path | str):
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        torch.set_num_threads(cfg.torch_threads)
        self.device = learner_device(cfg)  # the environment's: devices.py
        self.gen = seed_everything(cfg.seed, self.device)
        self.env = make_env(cfg.env, cfg.reward, seed=cfg.seed, randomization=cfg.randomization)
        self.surrogate = Surrogate(
            cfg.surrogate, self.env.kinematics, self.env.spec, self.env.model, self.env.kp, self.env.kd,
            self.env.control_dt, cfg.env.substeps,
        ).to(self.device)  # fmt: skip
        self.rollout = SurrogateRollout(self.env, self.surrogate, cfg.surrogate.gradient_decay)
        self.learner = SHAC(self.rollout, cfg.learner, self.gen)
        self.iteration = 0
        self.env_steps = 0
        self.wall_s = 0.0
        self.imitation_done = False
        self.prior_stages: list[dict] = []  # provenance: the stages that made this run's starting point
        self.init_checkpoint: str | None = None
        self.env.reset(seed=cfg.seed)

    @property
    def actor(self) -> torch.nn.Module:
        return self.learner.actor

    # ------------------------------------------------------------ provenance
    def stage(self) -> dict:
        """This run as a provenance stage (surrogait_train.provenance)."""
        cfg = self.cfg
        return {"learner": "differentiable", "seed": cfg.seed, "iterations": self.iteration,
                "samples": self.env_steps, "wall_s": round(self.wall_s, 1), "num_envs": cfg.env.num_envs,
                "gaits": list(self.env.contract.gait_names), "terrain": cfg.env.terrain,
                "randomization": cfg.randomization.enabled,
                "init_from": Path(self.init_checkpoint).name if self.init_checkpoint else None}

    def provenance(self) -> dict:
        """Learner, stages (the starting point's, then this run), commit: what export writes into the file."""
        return make_provenance([*self.prior_stages, self.stage()], git_commit())

    # ------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        path = self.run_dir / CHECKPOINT
        tmp = self.run_dir / (CHECKPOINT + ".tmp")
        torch.save(
            {
                "iteration": self.iteration,
                "env_steps": self.env_steps,
                "wall_s": self.wall_s,
                "imitation_done": self.imitation_done,
                "config": to_dict(self.cfg),
                "learner": self.learner.state_dict(),
                "torch_rng": torch.get_rng_state(),
                "gen_rng": self.gen.get_state(),
                "env_rng": self.env.rng_state(),
                "provenance_stages": [*self.prior_stages, self.stage()],
                "init_checkpoint": self.init_checkpoint,
            },
            tmp,
        )
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return path

    def load_checkpoint(self, path: Path) -> None:
        ckpt = torch.load(path, weights_only=False, map_location="cpu")  # load_state_dict moves to the device
        self.learner.load_state_dict(ckpt["learner"])
        self.iteration = ckpt["iteration"]
        self.env_steps = ckpt["env_steps"]
        self.wall_s = ckpt["wall_s"]
        self.imitation_done = ckpt.get("imitation_done", True)
        torch.set_rng_state(ckpt["torch_rng"])
        self.gen.set_state(ckpt["gen_rng"])
        self.env.set_rng_state(ckpt["env_rng"])
        self.prior_stages = list(ckpt.get("provenance_stages", [{}]))[:-1]
        self.init_checkpoint = ckpt.get("init_checkpoint")
        # the robots restart from fresh episodes; the learner continues from the saved step
        self.env.reset()
        self.learner.obs = None

    def init_from(self, path: Path | str) -> None:
        """Start this (new) run from another run's networks and normaliser: a second training stage.

        Optimiser state, counters and RNGs stay fresh. The networks must have the same sizes, except that
        this run's observation may append terms to the checkpoint's (a trot policy starting a multi-gait
        one): their inputs start with zero weights (surrogait_train.widen). An exported policy (`.onnx`)
        gives the actor alone (surrogait_train.onnx_init).
        """
        self.prior_stages = stages_of(path)
        if Path(path).suffix == ".onnx":
            self._init_from_policy_file(path)
            return
        ckpt = torch.load(path, weights_only=False, map_location="cpu")
        learner_state = ckpt["learner"]
        old_terms = make_contract(from_dict(ckpt["config"], str(path)).env).observation
        added = appended_size(old_terms, self.env.contract.observation)
        if added:
            mean, var = self.env.appended_obs_stats(len(old_terms))
            learner_state = widen_learner_state(learner_state, added, mean, var)
        for name in ("actor", "critic", "target_critic"):
            getattr(self.learner, name).load_state_dict(learner_state[name])
        self.imitation_done = True
        self.init_checkpoint = str(path)

    def _init_from_policy_file(self, path: Path | str) -> None:
        policy = load_policy_file(
            path, self.env.contract, self.cfg.learner.actor_hidden, self.env.appended_obs_stats
        )
        file_reference = action_reference_of(path)
        run_reference = self.learner.actor.reference.describe() if self.learner.actor.reference is not None else None
        if _tunable_part_removed(file_reference) != _tunable_part_removed(run_reference):
            raise PolicyFileMismatch(
                f"{path}: its actor is {_actor_kind(file_reference)} but this run's is {_actor_kind(run_reference)}; "
                "set learner.residual_reference (and env.stand_speed_m_s) to match the file"
            )
        changed = [*policy.changed_fields, *_reference_changes(file_reference, run_reference)]
        self.learner.actor.load_state_dict(policy.actor_state)
        note = floor_note(policy.actor_state, self.cfg.learner.obs_norm_min_std)
        if note:
            print(f"note: {note}", flush=True)
        self.imitation_done = True
        self.init_checkpoint = str(path)
        if changed:
            print(f"fine-tuning {path} with this run's {', '.join(changed)} (not the file's)", flush=True)
        if self.cfg.learner.critic_warmup_iterations == 0:
            print(
                f"warning: {path} carries no critic; an untrained one steers the first actor updates. "
                "Set learner.critic_warmup_iterations (e.g. 20) to train it alone first",
                flush=True,
            )

    # ------------------------------------------------------------ loop
    def train(
        self,
        max_iterations: int | None = None,
        budget_s: float | None = None,
        progress: bool = True,
        callback=None,
    ) -> IterationStats | None:
        """Run until `max_iterations` (total, counting resumed ones) or `budget_s` wall seconds of this call.

        `callback(trainer, stats)` runs after each iteration; returning True stops training.
        """
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        cfg = self.cfg
        max_iterations = cfg.max_iterations if max_iterations is None else max_iterations
        budget_s = cfg.budget_s if budget_s is None else budget_s
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.yaml").write_text(dump_yaml(cfg))
        # a resumed run may have logged past its checkpoint before it died: TensorBoard drops events from
        # the next step on (purge_step) and metrics.csv is cut back, so no iteration is logged twice
        resuming = self.iteration > 0
        writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=self.iteration + 1 if resuming else None)
        csv_path = self.run_dir / "metrics.csv"
        if resuming:
            truncate_metrics(csv_path, self.iteration)
        # a resumed run appends; a fresh one (also in a reused run folder) starts the file anew
        new_csv = not resuming or not csv_path.exists() or csv_path.stat().st_size == 0
        csv_file = open(csv_path, "w" if new_csv else "a", newline="")
        csv_writer = None
        steps_per_iter = cfg.env.num_envs * cfg.learner.horizon
        # with a wall-clock budget the bar counts seconds (the limit that binds); otherwise iterations
        if budget_s:
            bar = tqdm(total=round(budget_s), disable=not progress, unit="s", dynamic_ncols=True,
                       bar_format="{l_bar}{bar}| {n:.0f}/{total} s [{elapsed}<{remaining}{postfix}]")  # fmt: skip
        else:
            bar = tqdm(
                total=max_iterations, initial=self.iteration, disable=not progress, unit="it", dynamic_ncols=True
            )
        start = time.perf_counter()
        if self.iteration == 0 and cfg.learner.imitation_iterations > 0 and not self.imitation_done:
            t0 = time.perf_counter()
            mse = self.learner.imitate_reference(cfg.learner.imitation_iterations)
            self.imitation_done = True
            self.env_steps += cfg.learner.imitation_iterations * steps_per_iter
            self.wall_s += time.perf_counter() - t0
            print(f"reference warm start: {cfg.learner.imitation_iterations} windows, action MSE {mse:.4f}", flush=True)
        stats = None
        try:
            while self.iteration < max_iterations:
                if budget_s and time.perf_counter() - start >= budget_s:
                    break
                t0 = time.perf_counter()
                progress_fraction = min(1.0, self.iteration / max(cfg.max_iterations, 1))
                if cfg.learner.lr_decay:
                    # the schedule spans the config's max_iterations, also when a call trains on a time budget
                    self.learner.set_lr_fraction(max(0.1, 1.0 - progress_fraction))
                if cfg.learner.action_noise_final_std >= 0:
                    start_std, final_std = cfg.learner.action_noise_std, cfg.learner.action_noise_final_std
                    self.learner.action_noise_std = start_std + (final_std - start_std) * progress_fraction
                stats = self.learner.iterate(update_actor=self.iteration >= cfg.learner.critic_warmup_iterations)
                dt = time.perf_counter() - t0
                self.iteration += 1
                self.env_steps += steps_per_iter
                self.wall_s += dt
                sps = steps_per_iter / dt
                row = {
                    "iteration": self.iteration,
                    "env_steps": self.env_steps,
                    "wall_s": round(self.wall_s, 3),
                    "steps_per_s": round(sps, 1),
                    "reward": stats.reward,
                    "lin_vel_error": stats.lin_vel_error,
                    "yaw_rate_error": stats.yaw_rate_error,
                    "fall_rate": stats.fall_rate,
                    "actor_loss": stats.actor_loss,
                    "critic_loss": stats.critic_loss,
                    "grad_norm": stats.grad_norm,
                    "update_skipped": int(stats.update_skipped),
                    "gradient_decay": round(stats.gradient_decay, 4),
                    "mirror_error_rad": round(stats.mirror_error_rad, 5),
                    **{f"r_{k}": v for k, v in stats.terms.items()},
                    **{f"terrain_{k}": v for k, v in stats.terrain_difficulty.items()},
                }
                if csv_writer is None:
                    # appended rows keep the file's own columns (a run resumed by a newer trainer may log more;
                    # TensorBoard has those)
                    fieldnames = list(row) if new_csv else csv_header(csv_path)
                    csv_writer = csv.DictWriter(csv_file, fieldnames=fieldnames, extrasaction="ignore", restval="")
                    if new_csv:
                        csv_writer.writeheader()
                csv_writer.writerow(row)
                csv_file.flush()
                for k, v in row.items():
                    if k != "iteration":
                        writer.add_scalar(f"train/{k}", v, self.iteration)
                bar.update(min(dt, bar.total - bar.n) if budget_s else 1)
                bar.set_postfix(
                    it=self.iteration, reward=f"{stats.reward:.3f}", vel_err=f"{stats.lin_vel_error:.3f}",
                    steps_s=f"{sps:.0f}", falls=f"{stats.fall_rate:.3f}",
                )  # fmt: skip
                if self.iteration % cfg.checkpoint_every == 0:
                    self.save_checkpoint()
                if callback is not None and callback(self, stats):
                    break
        finally:
            bar.close()
            writer.close()
            csv_file.close()
        self.save_checkpoint()
        return stats


# What a fine-tune may change in the residual's reference: its balance step's feedback gains, its swing apex and
# path. The network's inputs and outputs mean the same (a residual on the same clock-driven steps, raised, reshaped
# or shifted), so a trot may start a higher-stepping one for stairs.
TUNABLE_REFERENCE_KEYS = {*BALANCE_STEP_KEYS, PITCH_GAITS_KEY, "swing_height_m", "swing_profile"}


def _tunable_part_removed(reference: dict | None) -> dict | None:
    """A reference's description less what a fine-tune may change (`reference.GaitReference.describe`)."""
    if reference is None:
        return None
    return {k: v for k, v in reference.items() if k not in TUNABLE_REFERENCE_KEYS}


def _reference_changes(file_reference: dict | None, run_reference: dict | None) -> list[str]:
    """What this run changes in the file's reference, in words (the fine-tune's note)."""
    file_ref, run_ref = file_reference or {}, run_reference or {}
    changes = []
    if file_ref.get("swing_height_m") != run_ref.get("swing_height_m"):
        changes.append(f"reference swing apex ({run_ref.get('swing_height_m')} m, the file's "
                       f"{file_ref.get('swing_height_m')})")
    if file_ref.get("swing_profile", "sine") != run_ref.get("swing_profile", "sine"):
        changes.append(f"reference swing path ({run_ref.get('swing_profile', 'sine')}, the file's "
                       f"{file_ref.get('swing_profile', 'sine')})")
    if any(file_ref.get(k) != run_ref.get(k) for k in (*BALANCE_STEP_KEYS, PITCH_GAITS_KEY)):
        changes.append("reference balance step")
    return changes


def _actor_kind(reference: dict | None) -> str:
    return "a plain MLP" if reference is None else f"a residual on the gait reference {reference}"


def trainer_from_checkpoint(path: Path | str, run_dir: Path | str | None = None) -> Trainer:
    path = Path(path)
    ckpt = torch.load(path, weights_only=False, map_location="cpu")
    trainer = Trainer(from_dict(ckpt["config"]), run_dir or path.parent)
    trainer.load_checkpoint(path)
    return trainer
