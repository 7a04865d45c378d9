"""Which snapshots the demo's pre-flight flies: the six from iteration 20 on whose iterations tracked the command
best in training (the trainer's metrics.csv), because a small-batch run can slide and come back
(docs/training-log.md, 2026-12-05 (6)); without a training log, six spread over the run, the newest included."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "demo.py"
spec = importlib.util.spec_from_file_location("demo_script", SCRIPT)
demo_script = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = demo_script  # its dataclasses look their module up there
spec.loader.exec_module(demo_script)


def snapshots(*iterations: int) -> list[tuple[int, Path]]:
    return [(it, Path(f"it{it}.onnx")) for it in sorted(iterations, reverse=True)]


def test_six_snapshots_spread_from_the_newest_back_to_iteration_20():
    found = snapshots(*range(5, 165, 5))  # a 120 s run: iterations 5..160
    chosen = [it for it, _ in demo_script.spread_over_the_run(found)]
    assert len(chosen) == 6 and chosen[0] == 160 and chosen[-1] == 20
    assert chosen == sorted(chosen, reverse=True) and len(set(chosen)) == 6


def test_a_short_run_flies_what_it_has():
    assert [it for it, _ in demo_script.spread_over_the_run(snapshots(20, 25, 30))] == [30, 25, 20]
    assert [it for it, _ in demo_script.spread_over_the_run(snapshots(5, 10, 15))] == [15, 10, 5], "none that late"
    assert demo_script.spread_over_the_run([]) == []


def write_metrics(path: Path, rows: list[tuple[int, float, float, float]]) -> Path:
    """A trainer's metrics.csv with (iteration, lin_vel_error, yaw_rate_error, fall_rate) and nothing else."""
    lines = ["iteration,lin_vel_error,yaw_rate_error,fall_rate"]
    lines += [f"{it},{vel},{yaw},{falls}" for it, vel, yaw, falls in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_training_tracking_is_the_worse_error_against_the_walks_bounds_and_a_fall_disqualifies(tmp_path):
    rows = [(it, 0.075, 0.05, 0.0) for it in range(1, 11)] + [(11, 0.075, 0.05, 0.02)]
    tracking = demo_script.training_tracking(write_metrics(tmp_path / "metrics.csv", rows), window=10)
    assert tracking[10] == pytest.approx(0.5), "vx 0.075 of 0.15 is worse than yaw 0.05 of 0.2"
    assert tracking[11] == pytest.approx(1.5), "a fall in the window counts as not tracking"


def test_the_preflight_flies_the_snapshots_that_tracked_best_in_training_not_those_of_a_slide(tmp_path):
    # a run that walks by iteration 100, slides from 150 to 250 (falling), and comes back after
    rows = [(it, 0.4 - 0.003 * it if it < 100 else 0.1, 0.2, 0.0) for it in range(1, 150)]
    rows += [(it, 0.3, 0.4, 0.05) for it in range(150, 251)]
    rows += [(it, 0.12, 0.15, 0.0) for it in range(251, 301)]
    tracking = demo_script.training_tracking(write_metrics(tmp_path / "metrics.csv", rows))
    chosen = [it for it, _ in demo_script.best_tracked_in_training(snapshots(*range(5, 305, 5)), tracking)]
    assert len(chosen) == 6 and chosen == sorted(chosen, reverse=True)
    assert not any(150 <= it <= 260 for it in chosen), chosen
    assert all(it >= 20 for it in chosen)


def test_cleared_snapshots_are_told_apart_on_commands_of_their_own_never_the_evals():
    """The choice between cleared snapshots must not be made on the commands the verdict is then given on."""
    import numpy as np

    from surrogait_train.evaluate import DEFAULT_EVAL_VX, EVAL_VY, EVAL_YAW, command_set

    commands = demo_script.validation_commands()
    assert commands.shape == (demo_script.VALIDATION_EPISODES, 3)
    lo, hi = np.array([DEFAULT_EVAL_VX, EVAL_VY, EVAL_YAW]).T
    assert np.all(commands >= lo) and np.all(commands <= hi)
    held_out = command_set(demo_script.WALK_EPISODES)
    assert np.min(np.abs(commands[:, None, :] - held_out[None, :, :]).sum(-1)) > 1e-3
    np.testing.assert_array_equal(commands, demo_script.validation_commands())  # the same every demo


def test_the_shipped_walking_policy_validates_under_one():
    shipped = Path(__file__).resolve().parents[2] / "ros2_ws/src/surrogait_bringup/policies/go2_trot.onnx"
    assert demo_script.validation_score(shipped, episodes=4) < 1.0
