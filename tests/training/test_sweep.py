"""`surrogait-train sweep`: a grid of seeds x configs as Ray tasks that survives a killed worker.

The grid's expansion, folder names and error messages need no Ray. The integration test runs a
2 x 2 sweep of tiny runs on an embedded Ray (2 CPUs), SIGKILLs the worker of one cell after its
first checkpoint, and checks that Ray's retry resumed that cell and the sweep finished every cell.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest
import ray

from surrogait_train.cli import main
from surrogait_train.config import dump_yaml, load_config
from surrogait_train.sweep import (
    ATTEMPTS_LOG,
    EVAL_JSON,
    Axis,
    SweepError,
    SweepSpec,
    expand_grid,
    parse_grid_arg,
    read_attempts,
    run_sweep,
)

BESIDE_REHEARSALS = "Ray's workers talk on ports of their own and need no real time"
TINY_RUN = [
    "env.num_envs=8",
    "env.num_threads=1",
    "learner.horizon=4",
    "learner.actor_hidden=[32,32]",
    "learner.critic_hidden=[32,32]",
    "learner.critic_iterations=1",
    "learner.critic_minibatches=1",
    "learner.update_threads=1",
    "checkpoint_every=1",
    "max_iterations=20",  # ~1.5 s of training: time to kill a worker between its first checkpoint and its end
]


def _spec(out: Path, **kw) -> SweepSpec:
    kw.setdefault("grid", [parse_grid_arg("randomization.enabled=false,true")])
    kw.setdefault("num_cpus", 2)
    return SweepSpec(out=out, overrides=list(TINY_RUN), seeds=[0, 1], eval_episodes=2, eval_seconds=1.5, **kw)


# ------------------------------------------------------------------ the grid, without Ray


def test_grid_is_every_value_of_every_axis_times_every_seed_in_a_stable_order():
    grid = [parse_grid_arg("env.gait=trot,pace"), parse_grid_arg("randomization.enabled=true,false")]
    cells = expand_grid(grid, seeds=[0, 1])
    assert len(cells) == 8
    assert [c.index for c in cells] == list(range(8))
    assert cells[0].name == "env.gait=trot__randomization.enabled=true__seed=0"
    assert cells[1].name == "env.gait=trot__randomization.enabled=true__seed=1"
    assert cells[-1].name == "env.gait=pace__randomization.enabled=false__seed=1"
    assert cells[-1].values == (("env.gait", "pace"), ("randomization.enabled", False))
    assert [c.name for c in expand_grid([], seeds=[3])] == ["seed=3"]  # seeds alone are a sweep too


def test_grid_values_are_yaml_and_folder_names_are_safe():
    assert parse_grid_arg("randomization.enabled=true,false").values == [True, False]
    assert parse_grid_arg("env.lin_vel_x=[0.3,1.0],[0.5,1.5]").values == [[0.3, 1.0], [0.5, 1.5]]
    assert parse_grid_arg("env.num_envs=64, 128").values == [64, 128]
    names = [c.name for c in expand_grid([parse_grid_arg("env.lin_vel_x=[0.3,1.0]"), Axis("env.robot", ["a b/c"])],
                                         seeds=[0])]  # fmt: skip
    assert names == ["env.lin_vel_x=0.3_1.0__env.robot=a_b_c__seed=0"]
    long = expand_grid([Axis("env.robot", ["x" * 300])], seeds=[0])[0].name
    assert len(long) <= 200


@pytest.mark.parametrize(
    ("grid", "seeds", "message"),
    [
        (["env.gait="], [0], "needs a key and at least one value"),
        (["env.gait"], [0], "must look like KEY=V1,V2"),
        (["seed=1,2"], [0], "pass the seeds with --seeds"),
        (["env.gait=trot,trot"], [0], "a value appears twice"),
        (["env.gait=trot", "env.gait=pace"], [0], "appears twice"),
        (["env.gait=trot"], [], "no seeds"),
        (["env.gait=trot"], [1, 1], "a seed appears twice"),
    ],
)
def test_malformed_grids_are_clear_errors(grid, seeds, message):
    with pytest.raises(SweepError, match=message):
        expand_grid([parse_grid_arg(g) for g in grid], seeds)


def test_an_axis_without_values_is_a_clear_error():
    with pytest.raises(SweepError, match="env.gait: no values; give at least one"):
        expand_grid([Axis("env.gait", [])], [0])


def test_every_cell_config_is_checked_before_ray_starts(tmp_path, capsys):
    out = tmp_path / "sweep"
    with pytest.raises(SweepError, match=r"learner.no_such_key=1__seed=0: .*unknown config key 'learner.no_such_key'"):
        run_sweep(_spec(out, grid=[parse_grid_arg("learner.no_such_key=1,2")]), progress=False)
    with pytest.raises(SweepError, match="unknown gait 'skip'; gaits are trot"):
        run_sweep(_spec(out, grid=[parse_grid_arg("env.gait=trot,skip")]), progress=False)
    with pytest.raises(SweepError, match="must be true or false"):
        run_sweep(_spec(out, grid=[parse_grid_arg("randomization.enabled=yes please")]), progress=False)
    assert not out.exists() and not ray.is_initialized()
    # the command line says the same, exit status 2
    assert main(["sweep", "--out", str(out), "--grid", "learner.no_such_key=1,2", "--no-progress"]) == 2
    assert "unknown config key 'learner.no_such_key'" in capsys.readouterr().err


def test_a_cell_folder_of_another_config_is_refused_before_ray_starts(tmp_path):
    out = tmp_path / "sweep"
    other = load_config(None, [*TINY_RUN, "randomization.enabled=false", "seed=0", "learner.actor_lr=1e-4"])
    (out / "randomization.enabled=false__seed=0").mkdir(parents=True)
    (out / "randomization.enabled=false__seed=0" / "config.yaml").write_text(dump_yaml(other))
    with pytest.raises(SweepError, match="enabled=false__seed=0 holds a run of another config"):
        run_sweep(_spec(out), progress=False)
    assert not ray.is_initialized()


def test_unreachable_cluster_address_says_what_to_do(tmp_path):
    with socket.socket() as closed:  # a port that is bound but not listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        t0 = time.monotonic()
        with pytest.raises(SweepError, match=rf"--address {address}: cannot reach a Ray cluster .*ray start --head"):
            run_sweep(_spec(tmp_path / "sweep", address=address, num_cpus=None), progress=False)
    assert time.monotonic() - t0 < 15  # not Ray's minutes of retries
    with pytest.raises(SweepError, match="--num-cpus sizes the embedded Ray only"):
        run_sweep(_spec(tmp_path / "sweep", address=address, num_cpus=2), progress=False)


# ------------------------------------------------------------------ a real sweep on an embedded Ray


def _kill_worker_after_first_checkpoint(cell_dir: Path, killed: list, stop: threading.Event) -> None:
    """Once the cell has a checkpoint and no result yet, SIGKILL the worker that attempts.log names."""
    while not stop.is_set():
        attempts = read_attempts(cell_dir)
        if attempts and (cell_dir / "checkpoint.pt").exists() and not (cell_dir / EVAL_JSON).exists():
            pid = int(attempts[0]["pid"])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sweep_of_2x2_tiny_runs_completes_every_cell_after_a_worker_is_killed(tmp_path):
    out = tmp_path / "sweep"
    spec = _spec(out)
    victim = out / "randomization.enabled=false__seed=0"  # the first cell: it starts at once
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_worker_after_first_checkpoint, args=(victim, killed, stop), daemon=True)
    killer.start()
    try:
        result = run_sweep(spec, progress=False)
    finally:
        stop.set()
        killer.join()
    assert killed, "the first cell finished before its worker could be killed"
    assert not ray.is_initialized()  # the sweep shut down the Ray it started

    # every cell finished: a result, a policy and a row each
    assert result.failed == {}
    cells = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert cells == [f"randomization.enabled={r}__seed={s}" for r in ("false", "true") for s in (0, 1)]
    for cell in cells:
        assert (out / cell / EVAL_JSON).is_file() and (out / cell / "policy.onnx").is_file()
        assert json.loads((out / cell / EVAL_JSON).read_text())["iterations"] == 20

    # the killed cell was retried by Ray on another worker and resumed from its checkpoint
    attempts = read_attempts(victim)
    assert len(attempts) == 2, (victim / ATTEMPTS_LOG).read_text()
    assert int(attempts[0]["pid"]) == killed[0] and int(attempts[1]["pid"]) != killed[0]
    assert int(attempts[0]["start_iteration"]) == 0 and int(attempts[1]["start_iteration"]) > 0
    assert all(len(read_attempts(out / c)) == 1 for c in cells if out / c != victim)

    # one table lists every cell, in grid order
    assert [(r["randomization.enabled"], r["seed"], r["status"]) for r in result.rows] == [
        ("false", 0, "done"), ("false", 1, "done"), ("true", 0, "done"), ("true", 1, "done")
    ]  # fmt: skip
    table = (out / "results.md").read_text().splitlines()
    assert table[0].startswith("| randomization.enabled | seed | iterations | env steps |") and "WALKS" in table[0]
    assert len(table) == 2 + 4 and all(line.endswith(("| yes |", "| no |")) for line in table[2:])
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 4

    # no worker outlives the sweep
    pids = {int(a["pid"]) for c in cells for a in read_attempts(out / c)}
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)

    # running the sweep again (as after the driver died) skips the finished cells and starts no Ray
    t0 = time.monotonic()
    again = run_sweep(spec, progress=False)
    assert sorted(again.skipped) == cells and again.rows == result.rows
    assert time.monotonic() - t0 < 10 and not ray.is_initialized()
