"""Simulator parameters (clear errors) and the absolute-deadline clock (no drift), without ROS."""

import math

import numpy as np
import pytest

from surrogait_core.runtime.control_loop import DeadlineScheduler
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.wire.network_interface import available_interfaces
from surrogait_rehearsal.sim.mujoco.config import PARAMETERS, SimNodeConfig
from surrogait_rehearsal.sim.sim_time import SimTimeEvery


def test_defaults_are_the_documented_ones():
    cfg = SimNodeConfig.from_params({})
    assert (cfg.dds_domain, cfg.network_interface, cfg.lowstate_rate_hz) == (1, "lo", 500.0)
    assert cfg.sim.physics_dt_s == 0.002 and cfg.sim.initial_pose == "lying" and cfg.sim.motor_model == "driver"


def test_sample_yaml_sets_only_declared_parameters():
    from pathlib import Path

    import yaml

    path = Path(__file__).parents[2] / "ros2_ws/src/surrogait_rehearsal/config/go2_sim.yaml"
    params = yaml.safe_load(path.read_text())["go2_sim"]["ros__parameters"]
    assert set(params) <= set(PARAMETERS)
    for name, value in params.items():  # same types as the declared defaults, or ROS refuses the file
        assert type(value) is type(PARAMETERS[name][0]), name
    SimNodeConfig.from_params(params)


def test_a_missing_interface_is_refused_with_the_list_of_real_ones():
    assert "lo" in available_interfaces()
    with pytest.raises(ParamError, match=r"network_interface 'enp99s0' does not exist.*available: .*lo"):
        SimNodeConfig.from_params({"network_interface": "enp99s0"})


@pytest.mark.parametrize(("params", "match"), [
    ({"robot": "go3"}, "robot 'go3': expected go2"),
    ({"physics_dt": 0.01}, "physics_dt"),
    ({"lowstate_rate_hz": 100.0}, "lowstate_rate_hz"),
    ({"lowstate_rate_hz": 1000.0}, "lowstate_rate_hz"),
    ({"initial_pose": "sitting"}, "initial_pose"),
    ({"motor_model": "bridge"}, "motor_model 'bridge': expected one of driver, on_command"),
    ({"realtime_factor": -1.0}, "realtime_factor"),
    ({"video_path": "robot.avi"}, "mp4"),
    ({"log_path": "log.csv"}, "npz"),
    ({"dds_domain": 300}, "dds_domain"),
    ({"sched_fifo_priority": 120}, "sched_fifo_priority"),
    ({"sched_fifo_priority": 10, "realtime_factor": 0.0}, "monopolise"),
    ({"no_such_param": 1}, "unknown parameters"),
])
def test_bad_values_say_what_is_wrong(params, match):
    with pytest.raises(ParamError, match=match):
        SimNodeConfig.from_params(params)


class FakeTime:
    def __init__(self, step_cost_s: float = 0.0):
        self.now = 100.0
        self.step_cost_s = step_cost_s
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, s):
        self.sleeps.append(s)
        self.now += s


def test_deadlines_are_absolute_so_jitter_does_not_accumulate():
    t = FakeTime()
    clock = DeadlineScheduler(0.002, realtime_factor=1.0, max_lag_s=0.1, clock=t.clock, sleep=t.sleep)
    start = t.now
    for k in range(1, 1001):
        t.now += 0.0013 if k % 3 else 0.0004  # uneven work per step, always under the period
        clock.wait()
        assert t.now == pytest.approx(start + k * 0.002, abs=1e-9)
    assert clock.late_steps == 0 and clock.resyncs == 0
    assert clock.measured_realtime_factor() == pytest.approx(1.0, rel=1e-3)


def test_realtime_factor_scales_the_period_and_zero_runs_free():
    t = FakeTime()
    clock = DeadlineScheduler(0.002, realtime_factor=2.0, max_lag_s=0.1, clock=t.clock, sleep=t.sleep)
    start = t.now
    for _ in range(100):
        clock.wait()
    assert t.now == pytest.approx(start + 100 * 0.001)
    free = DeadlineScheduler(0.002, realtime_factor=0.0, max_lag_s=0.1, clock=t.clock, sleep=t.sleep)
    n_sleeps = len(t.sleeps)
    for _ in range(100):
        t.now += 1e-5
        free.wait()
    assert len(t.sleeps) == n_sleeps and free.free_running
    assert free.measured_realtime_factor() == pytest.approx(0.002 / 1e-5, rel=1e-6)


def test_a_long_stall_reanchors_instead_of_bursting():
    t = FakeTime()
    clock = DeadlineScheduler(0.002, realtime_factor=1.0, max_lag_s=0.1, clock=t.clock, sleep=t.sleep)
    clock.wait()
    t.now += 1.0  # suspended for a second
    clock.wait()
    assert clock.resyncs == 1
    before = t.now
    clock.wait()
    assert t.now == pytest.approx(before + 0.002)  # back to one step per period


def test_bad_clock_arguments():
    with pytest.raises(ValueError):
        DeadlineScheduler(0.0)
    with pytest.raises(ValueError):
        DeadlineScheduler(0.002, realtime_factor=-1.0)
    assert DeadlineScheduler(0.002, realtime_factor=math.inf).free_running


@pytest.mark.parametrize(("rate_hz", "dt_s", "expected"), [(500.0, 0.002, 1000), (500.0, 0.001, 1000),
                                                           (300.0, 0.002, 600), (50.0, 0.002, 100)])
def test_sim_time_rates(rate_hz, dt_s, expected):
    every = SimTimeEvery(rate_hz, dt_s)
    steps = int(round(2.0 / dt_s))
    fired = [k for k in range(1, steps + 1) if every.due(k * dt_s)]
    assert len(fired) == expected  # 2 s of simulated time
    gaps = np.diff(fired) * dt_s
    assert gaps.max() <= 1.0 / rate_hz + dt_s + 1e-9
