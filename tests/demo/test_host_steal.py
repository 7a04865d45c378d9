"""The harness measures what the hypervisor took from the machine during a session (Linux "steal" time),
so a fault raised while the whole VM was paused can be told from one the stack caused."""

import json
import os
import time

import numpy as np
import pytest

from surrogait_rehearsal.harness.host_steal import StealSampler, read_steal_ticks, worst_window
from surrogait_rehearsal.report import RunFiles, build_report

STAT = """cpu  8996263 194921 915864 6062489 91493 0 62808 {steal} 0 0
cpu0 4105668 96369 397398 3521397 11965 0 25373 40496 0 0
cpu1 4890594 98552 518466 2541091 79528 0 37435 40912 0 0
intr 1 2 3
"""


def test_the_steal_count_is_the_aggregate_cpu_line_s_eighth_value():
    assert read_steal_ticks(STAT.format(steal=81408)) == 81408
    with pytest.raises(ValueError, match="no steal column"):
        read_steal_ticks("cpu  1 2 3 4\n")
    with pytest.raises(ValueError, match="no aggregate cpu line"):
        read_steal_ticks("cpu0 1 2 3 4 5 6 7 8\n")


def test_the_worst_burst_is_found_within_its_window():
    times = [0.00, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14]
    ticks = [100, 100, 101, 104, 108, 108, 108, 109]  # 8 ticks stolen between 0.02 s and 0.08 s
    assert worst_window(times, ticks, window_s=0.1) == (8, 0.08)
    assert worst_window(times, ticks, window_s=0.02) == (4, 0.08)  # one sample interval at most


def write_stat(path, text: str) -> None:
    """As the kernel answers a read of /proc/stat: whole (a sampler must never read a half-written file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_the_sampler_reads_the_count_while_a_session_runs(tmp_path):
    stat = tmp_path / "stat"
    write_stat(stat, STAT.format(steal=500))
    sampler = StealSampler(period_s=0.005, stat_path=stat).start()
    time.sleep(0.05)
    write_stat(stat, STAT.format(steal=503))  # the host takes 3 ticks
    time.sleep(0.05)
    summary = sampler.stop()
    assert summary.available and summary.samples >= 5
    assert summary.total_ms == pytest.approx(3 * sampler.tick_ms)
    assert summary.worst_ms == pytest.approx(3 * sampler.tick_ms)


def test_an_unreadable_sample_is_a_gap_not_the_end_of_the_measurement(tmp_path):
    stat = tmp_path / "stat"
    write_stat(stat, STAT.format(steal=500))
    sampler = StealSampler(period_s=0.005, stat_path=stat).start()
    time.sleep(0.03)
    write_stat(stat, "")  # a read that finds no cpu line (seen when a test rewrote the file mid-read)
    time.sleep(0.03)
    write_stat(stat, STAT.format(steal=502))
    time.sleep(0.03)
    summary = sampler.stop()
    assert summary.available and summary.total_ms == pytest.approx(2 * sampler.tick_ms)


def test_without_a_steal_count_it_says_it_measured_nothing(tmp_path):
    summary = StealSampler(stat_path=tmp_path / "missing").start().stop()
    assert not summary.available and summary.total_ms == 0.0


def test_the_report_says_what_the_hypervisor_took(tmp_path):
    t = np.arange(0.0, 2.0, 0.01)
    gt = np.zeros((len(t), 12))
    gt[:, 0], gt[:, 3] = t, 0.28
    np.savez(tmp_path / "session.npz", ground_truth=gt, odometry=np.column_stack([t, np.zeros((len(t), 3)), gt[:, 3]]),
             commands=np.column_stack([t, np.zeros((len(t), 3))]), policy_states=json.dumps([[0.0, "WALK"]]),
             safety_states=json.dumps([]), diagnostics=json.dumps([]), segments=json.dumps([]))  # fmt: skip
    steal = {"available": True, "total_ms": 120.0, "worst_ms": 60.0, "worst_at_unix_s": 1796206680.04,
             "window_ms": 100.0, "samples": 900}
    report, _ = build_report(tmp_path, RunFiles(session=tmp_path / "session.npz"),
                             {"policy_path": "p.onnx", "policy_source": "test", "processes": [], "host_steal": steal})
    text = report.read_text()
    assert "The hypervisor took 120 ms of CPU time" in text and "at most 60 ms within 100 ms" in text
    assert "10:18:00.040 UTC" in text
