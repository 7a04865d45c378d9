"""`surrogait-train sweep`: a grid of seeds x configs, one Ray task per cell (docs/sweeps.md).

A cell is one seed and one value of every grid axis. Its run folder, OUT/<cell name>, holds what
`train` writes (`checkpoint.pt`, atomic; `metrics.csv`; `config.yaml`) plus `policy.onnx`,
`attempts.log` (one line per attempt: pid, iteration it started from) and `eval.json`, written
last and atomically: a cell with `eval.json` is finished. A task whose worker dies is retried by
Ray and resumes from the cell's checkpoint; running the command again skips finished cells, so
a sweep whose driver died resumes too. The driver collects every cell into `results.csv` and
`results.md`.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import itertools
import json
import logging
import os
import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from surrogait_train.config import ConfigError, TrainConfig, load_config, to_dict

EVAL_JSON = "eval.json"
ATTEMPTS_LOG = "attempts.log"
RESULTS_CSV, RESULTS_MD = "results.csv", "results.md"


class SweepError(ValueError):
    """The sweep cannot run as asked; the message says why and what to do."""


@dataclasses.dataclass
class Axis:
    """One config key of the grid and the values it takes (YAML scalars or lists)."""

    key: str
    values: list[Any]


@dataclasses.dataclass
class SweepSpec:
    out: Path
    config: Path | None = None  # None: the shipped go2_trot.yaml
    overrides: list[str] = dataclasses.field(default_factory=list)  # key=value, common to all cells
    grid: list[Axis] = dataclasses.field(default_factory=list)
    seeds: list[int] = dataclasses.field(default_factory=lambda: [0])
    eval_episodes: int = 8
    eval_seconds: float = 5.0
    address: str | None = None  # None: an embedded Ray on this machine
    num_cpus: int | None = None  # embedded Ray's CPUs (None: all of this machine's)
    cpus_per_run: float = 1.0  # Ray CPUs one cell reserves; match it to the cell's env.num_threads
    max_retries: int = 3  # Ray retries of a cell whose worker died


@dataclasses.dataclass(frozen=True)
class Cell:
    name: str  # its run folder's name
    index: int  # position in the grid's expansion: the results' order
    seed: int
    values: tuple[tuple[str, Any], ...]  # (key, value) per axis, in grid order


# ------------------------------------------------------------------ the grid


def parse_grid_arg(text: str) -> Axis:
    """`KEY=V1,V2,...` -> Axis; the values are YAML (a flow sequence), so `[0.3,1.0],[0.5,1.5]` are two lists."""
    if "=" not in text:
        raise SweepError(f"--grid {text!r} must look like KEY=V1,V2 (e.g. env.gait=trot,pace)")
    key, values = (s.strip() for s in text.split("=", 1))
    try:
        parsed = yaml.safe_load(f"[{values}]")
    except yaml.YAMLError as e:
        raise SweepError(f"--grid {text!r}: cannot parse the values as YAML ({getattr(e, 'problem', e)})") from None
    if not key or not parsed:
        raise SweepError(f"--grid {text!r}: needs a key and at least one value, e.g. {key or 'env.gait'}=trot,pace")
    return Axis(key, parsed)


def format_value(value: Any) -> str:
    """A value as YAML writes it inline: true, 0.001, pace, [0.3,1.0]."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    return str(value)


def _sanitise(name: str, limit: int = 200) -> str:
    # folder names: letters, digits and . _ = + - only (a list [0.3,1.0] reads 0.3_1.0); a very long name
    # keeps a hash of the whole
    safe = re.sub(r"[^A-Za-z0-9._=+-]", "_", re.sub(r"[\[\]]", "", name))
    if len(safe) > limit:
        safe = safe[: limit - 9] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return safe


def cell_name(values: tuple[tuple[str, Any], ...], seed: int) -> str:
    """`env.gait=pace__randomization.enabled=true__seed=1`, sanitised for a folder name."""
    return _sanitise("__".join([*(f"{k}={format_value(v)}" for k, v in values), f"seed={seed}"]))


def expand_grid(grid: list[Axis], seeds: list[int]) -> list[Cell]:
    """Every combination of axis values, times every seed (the last axis, then the seed, varies fastest)."""
    if not seeds:
        raise SweepError("no seeds: pass at least one, e.g. --seeds 0")
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"--seeds {seeds}: a seed appears twice")
    keys = [a.key for a in grid]
    for axis in grid:
        if axis.key == "seed":
            raise SweepError("the seed is not a grid axis; pass the seeds with --seeds")
        if keys.count(axis.key) > 1:
            raise SweepError(f"--grid {axis.key} appears twice; give all its values in one --grid {axis.key}=V1,V2")
        if not axis.values:
            raise SweepError(f"--grid {axis.key}: no values; give at least one, e.g. {axis.key}=V1,V2")
        shown = [format_value(v) for v in axis.values]
        if len(set(shown)) != len(shown):
            raise SweepError(f"--grid {axis.key}: a value appears twice ({', '.join(shown)})")
    cells, seen = [], {}
    combos = itertools.product(*(a.values for a in grid))
    for index, (combo, seed) in enumerate(itertools.product(combos, seeds)):
        values = tuple(zip(keys, combo, strict=True))
        name = cell_name(values, seed)
        if name in seen:  # two values that differ only in characters a folder name cannot hold
            raise SweepError(f"cells {seen[name]!r} and {values!r} would share the run folder {name!r}")
        seen[name] = values
        cells.append(Cell(name, index, seed, values))
    return cells


def cell_config(spec: SweepSpec, cell: Cell) -> TrainConfig:
    """The cell's config: base file, common overrides, the cell's axis values, its seed (in that order)."""
    own = [f"{k}={json.dumps(v, default=str)}" for k, v in cell.values]  # JSON is YAML: types survive
    try:
        cfg = load_config(spec.config, [*spec.overrides, *own, f"seed={cell.seed}"])
    except ConfigError as e:
        raise SweepError(f"cell {cell.name}: {e}") from None
    _check_names(cfg, cell)
    return cfg


def _check_names(cfg: TrainConfig, cell: Cell) -> None:
    # names the config loader takes as any string; otherwise they would fail only inside a worker
    from surrogait_core.terrain import TERRAINS
    from surrogait_train.gaits import GAITS

    for gait in [cfg.env.gait, *cfg.env.gaits]:
        if gait not in GAITS:
            raise SweepError(f"cell {cell.name}: unknown gait {gait!r}; gaits are {', '.join(GAITS)}")
    if cfg.env.terrain not in (*TERRAINS, "mixed"):
        raise SweepError(f"cell {cell.name}: unknown terrain {cfg.env.terrain!r}; terrains are "
                         f"{', '.join(TERRAINS)} or mixed")  # fmt: skip


# ------------------------------------------------------------------ one cell (runs in a Ray worker)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_attempts(run_dir: Path) -> list[dict[str, str]]:
    """The cell's attempts, oldest first: dicts of pid, host, start_iteration, time."""
    path = Path(run_dir) / ATTEMPTS_LOG
    if not path.exists():
        return []
    return [dict(f.split("=", 1) for f in line.split()) for line in path.read_text().splitlines() if line.strip()]


def _log_attempt(run_dir: Path, start_iteration: int) -> None:
    line = f"pid={os.getpid()} host={socket.gethostname()} start_iteration={start_iteration} time={time.time():.3f}\n"
    with open(run_dir / ATTEMPTS_LOG, "a") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


BUDGETS = ("max_iterations", "budget_s", "checkpoint_every")  # may change between attempts of one cell


def same_experiment(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two configs (as dicts) that differ at most in their budgets."""
    return {k: v for k, v in a.items() if k not in BUDGETS} == {k: v for k, v in b.items() if k not in BUDGETS}


def _eval_choices(cfg: TrainConfig, gait_names: tuple[str, ...] | list[str]) -> tuple[str | None, str]:
    """Evaluate on the cell's own gait (if the policy has it) and terrain (if it is one course)."""
    from surrogait_core.terrain import TERRAINS

    gait = cfg.env.gait if cfg.env.gait in gait_names else None
    terrain = cfg.env.terrain if cfg.env.terrain in TERRAINS else "flat"  # "mixed" is no single course
    return gait, terrain


def run_cell(cell: Cell, run_dir: str, config: dict[str, Any], eval_episodes: int, eval_seconds: float) -> dict:
    """Train (or resume) one cell, export and evaluate it; returns its record (also written to eval.json)."""
    import fcntl

    run_dir_p = Path(run_dir)
    run_dir_p.mkdir(parents=True, exist_ok=True)
    # One attempt per cell at a time, also when two sweeps share an --out or a dead driver's worker is still
    # winding down: the second waits, then finds eval.json. The kernel drops the lock when its holder dies.
    with open(run_dir_p / ".lock", "w") as lock, open(run_dir_p / "worker.log", "a") as log:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = run_dir_p / EVAL_JSON
        if done.exists():
            return json.loads(done.read_text())
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            record = _train_export_eval(cell, run_dir_p, config, eval_episodes, eval_seconds)
        _write_atomic(done, json.dumps(record, indent=2))
        return record


def _train_export_eval(cell: Cell, run_dir: Path, config: dict, eval_episodes: int, eval_seconds: float) -> dict:
    from surrogait_train.config import from_dict
    from surrogait_train.evaluate import evaluate_policy
    from surrogait_train.export import export_onnx
    from surrogait_train.trainer import CHECKPOINT, Trainer, trainer_from_checkpoint

    cfg = from_dict(config)
    ckpt = run_dir / CHECKPOINT
    if ckpt.exists():
        trainer = trainer_from_checkpoint(ckpt, run_dir)
        if not same_experiment(to_dict(trainer.cfg), config):
            raise SweepError(f"{ckpt} holds a run of another config than cell {cell.name}'s; sweep into another "
                             "--out, or delete that run folder")  # fmt: skip
        trainer.cfg = cfg  # the sweep's budgets win
    else:
        trainer = Trainer(cfg, run_dir)
    try:
        _log_attempt(run_dir, trainer.iteration)
        t0 = time.perf_counter()
        trainer.train(max_iterations=cfg.max_iterations, progress=False)
        print(f"trained to iteration {trainer.iteration} in {time.perf_counter() - t0:.1f} s", flush=True)
        contract = trainer.env.contract
        policy = export_onnx(trainer.actor, contract, run_dir / "policy.onnx")
    finally:
        trainer.env.close()  # Ray reuses the worker process for other cells
    gait, terrain = _eval_choices(cfg, contract.gait_names)
    result = evaluate_policy(policy, num_episodes=eval_episodes, episode_s=eval_seconds,
                             num_threads=cfg.env.num_threads, gait=gait, terrain=terrain)  # fmt: skip
    return {
        "cell": cell.name,
        "seed": cell.seed,
        "axes": {k: v for k, v in cell.values},
        "iterations": trainer.iteration,
        "env_steps": trainer.env_steps,
        "train_s": round(trainer.wall_s, 3),
        "attempts": len(read_attempts(run_dir)),
        "eval": dataclasses.asdict(result),
    }


# ------------------------------------------------------------------ results


def result_row(cell: Cell, record: dict | None, error: str = "") -> dict[str, Any]:
    """One table row; a cell without a record (it failed) keeps its axes and seed, and says why."""
    row: dict[str, Any] = {k: format_value(v) for k, v in cell.values}
    row["seed"] = cell.seed
    ev = (record or {}).get("eval", {})
    row.update({
        "iterations": (record or {}).get("iterations"),
        "env_steps": (record or {}).get("env_steps"),
        "train_s": (record or {}).get("train_s"),
        "fall_rate": ev.get("fall_rate"),
        "vx_rmse": ev.get("vx_rmse"),
        "yaw_rate_rmse": ev.get("yaw_rate_rmse"),
        "crossed_rate": ev.get("crossed_rate"),
        "walks": None if record is None else bool(ev.get("walks")),
        "status": "done" if record is not None else f"failed: {error}",
        "cell": cell.name,
    })  # fmt: skip
    return row


def _fmt_cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(rows: list[dict[str, Any]], axis_keys: list[str]) -> str:
    cols = [*axis_keys, "seed", "iterations", "env_steps", "train_s", "fall_rate", "vx_rmse", "yaw_rate_rmse"]
    heads = [*axis_keys, "seed", "iterations", "env steps", "train s", "fall rate", "vx RMSE", "yaw-rate RMSE"]
    if any(r["crossed_rate"] is not None for r in rows):  # only terrain cells have it
        cols.append("crossed_rate")
        heads.append("crossed rate")
    lines = ["| " + " | ".join([*heads, "WALKS"]) + " |", "|" + "---|" * (len(heads) + 1)]
    for r in rows:
        walks = "FAILED" if r["walks"] is None else _fmt_cell(r["walks"])
        values = [_fmt_cell(r[c], 1 if c == "train_s" else 3) for c in cols]
        lines.append("| " + " | ".join([*values, walks]) + " |")
    return "\n".join(lines) + "\n"


def write_results(out: Path, rows: list[dict[str, Any]], axis_keys: list[str]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["cell"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    _write_atomic(out / RESULTS_CSV, buf.getvalue())
    failed = [r for r in rows if r["status"] != "done"]
    text = markdown_table(rows, axis_keys)
    if failed:
        text += "\nFailed cells:\n\n" + "".join(f"- `{r['cell']}`: {r['status'][len('failed: ') :]}\n" for r in failed)
    _write_atomic(out / RESULTS_MD, text)


# ------------------------------------------------------------------ the driver


@dataclasses.dataclass
class SweepResult:
    rows: list[dict[str, Any]]  # one per cell, in grid order
    failed: dict[str, str]  # cell name -> error
    skipped: list[str]  # cells finished before this call
    table: str  # results.md's text


def _check_earlier_run(run_dir: Path, config: dict[str, Any]) -> None:
    # a cell folder from an earlier call of another sweep: its results would be reported as this one's
    saved = run_dir / "config.yaml"  # the trainer writes it before the first checkpoint
    if saved.exists() and not same_experiment(yaml.safe_load(saved.read_text()) or {}, config):
        raise SweepError(f"{run_dir} holds a run of another config than this sweep's cell; sweep into another "
                         "--out, or delete that run folder")  # fmt: skip


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    # ray.init on an address nobody answers retries for minutes; a plain TCP connect says it in seconds
    if address == "auto":
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host:
        host, port = hostport, "10001" if address.startswith("ray://") else "6379"
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except (OSError, ValueError) as e:
        raise SweepError(
            f"--address {address}: cannot reach a Ray cluster there ({e}). Start one with `ray start --head` on "
            "the head node (it prints the address), check host, port and firewall, or leave out --address to "
            "run on an embedded Ray on this machine"
        ) from None


def _start_ray(spec: SweepSpec) -> bool:
    """Start or connect Ray; True if this call did (and so should shut it down)."""
    import ray

    if ray.is_initialized():  # a caller's Ray (e.g. a notebook): use it, leave it running
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False, "include_dashboard": False}
    if spec.address:
        if spec.num_cpus is not None:
            raise SweepError("--num-cpus sizes the embedded Ray only; a cluster's CPUs are its nodes'")
        _check_reachable(spec.address)
        try:
            ray.init(address=spec.address, **quiet)
        except Exception as e:  # Ray raises ConnectionError, RuntimeError or its own errors here
            raise SweepError(
                f"--address {spec.address}: could not join the Ray cluster ({e}); check that `ray status` works "
                "on that node and that this machine's Ray and Python versions match the cluster's"
            ) from None
    else:
        ray.init(num_cpus=spec.num_cpus or os.cpu_count(), **quiet)
    return True


def run_sweep(spec: SweepSpec, progress: bool = True) -> SweepResult:
    """Run every unfinished cell as a Ray task, then write OUT/results.csv and OUT/results.md.

    Every cell's config is validated before Ray starts. A cell that fails (its task raised, or its worker
    died more than max_retries times) is reported in the results, not raised: the other cells still finish.
    """
    from tqdm import tqdm

    if spec.eval_episodes < 1 or spec.eval_seconds <= 0:
        raise SweepError("--eval-episodes must be >= 1 and --eval-seconds > 0")
    cells = expand_grid(spec.grid, spec.seeds)
    configs = {c.name: to_dict(cell_config(spec, c)) for c in cells}
    threads = max(max(cfg["env"]["num_threads"], cfg["learner"]["update_threads"]) for cfg in configs.values())
    if threads > spec.cpus_per_run:
        print(
            f"note: cells run up to {threads} threads (env.num_threads, learner.update_threads) but reserve "
            f"{spec.cpus_per_run:g} CPU each (--cpus-per-run): Ray will oversubscribe the cores",
            file=sys.stderr,
        )
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    records: dict[str, dict] = {}
    for c in cells:
        _check_earlier_run(out / c.name, configs[c.name])
        done = out / c.name / EVAL_JSON
        if done.exists():
            records[c.name] = json.loads(done.read_text())
    skipped = list(records)
    todo = [c for c in cells if c.name not in records]
    failed: dict[str, str] = {}
    if todo:
        import ray
        from ray.exceptions import RayError

        started = _start_ray(spec)
        try:
            task = ray.remote(run_cell).options(
                num_cpus=spec.cpus_per_run, max_retries=spec.max_retries, retry_exceptions=False
            )
            pending = {
                task.remote(c, str((out / c.name).resolve()), configs[c.name], spec.eval_episodes,
                            spec.eval_seconds): c
                for c in todo
            }  # fmt: skip
            with tqdm(total=len(cells), initial=len(skipped), disable=not progress, unit="cell",
                      dynamic_ncols=True) as bar:  # fmt: skip
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    cell = pending.pop(ready[0])
                    try:
                        records[cell.name] = ray.get(ready[0])
                    except RayError as e:  # the task raised, or its worker died more than max_retries times
                        failed[cell.name] = _short_error(e)
                    bar.set_postfix_str(("FAILED " if cell.name in failed else "") + cell.name)
                    bar.update(1)
        finally:
            if started:
                ray.shutdown()
    rows = [result_row(c, records.get(c.name), failed.get(c.name, "")) for c in cells]
    axis_keys = [a.key for a in spec.grid]
    write_results(out, rows, axis_keys)
    return SweepResult(rows, failed, skipped, (out / RESULTS_MD).read_text())


def _short_error(e: Exception) -> str:
    # a task's error carries the worker's whole traceback; its last line says what went wrong
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else type(e).__name__
