"""Fixtures for the simulator's process tests: one DDS domain (11-19) per test, processes always reaped."""

from __future__ import annotations

import itertools

import pytest
from sim_processes import SimProcess

_domains = itertools.cycle(range(11, 20))


@pytest.fixture
def dds_domain() -> int:
    return next(_domains)


@pytest.fixture
def start_sim(tmp_path, dds_domain):
    """start_sim(**params) -> a ready SimProcess on this test's domain; killed at teardown if still running."""
    started: list[SimProcess] = []

    def start(wait: bool = True, **params) -> SimProcess:
        sim = SimProcess(tmp_path, dds_domain, params)
        started.append(sim)
        if wait:
            sim.wait_ready()
        return sim

    yield start
    for sim in started:
        sim.kill()
