"""The Go1 link's power protection (go1_power_protect) behaves as unitree_legged_sdk 3.8's
`Safety.PowerProtect`: specified here, and compared with the SDK itself call by call where its wheel
installs (CPython 3.11 x86_64: the default `make test`)."""

from __future__ import annotations

import platform
import sys

import numpy as np
import pytest

from surrogait_core.wire.go1_power_protect import PowerProtect

SDK_INSTALLS = (sys.version_info[:2], platform.machine()) == ((3, 11), "x86_64")


def over(power_w: float = 400.0, motor: int = 0) -> tuple[np.ndarray, np.ndarray]:
    tau, dq = np.zeros(20), np.zeros(20)
    tau[motor], dq[motor] = power_w / 20.0, 20.0
    return tau, dq


UNDER = (np.zeros(20), np.zeros(20))


def answers(protect: PowerProtect, states) -> list[bool]:
    return [protect.over_limit(*s) for s in states]


def test_the_sixth_step_over_the_limit_trips_and_a_lone_spike_never_does():
    assert answers(PowerProtect(1), [over()] * 8) == [False] * 5 + [True] * 3
    assert not any(answers(PowerProtect(1), [over(), UNDER] * 20))


def test_after_a_long_overload_five_steps_under_the_limit_clear_it():
    protect = PowerProtect(1)
    answers(protect, [over()] * 30)  # the count stops at 10
    assert answers(protect, [UNDER] * 6) == [True] * 4 + [False] * 2


def test_the_legs_power_adds_up():
    two = (np.r_[6.0, 6.0, np.zeros(18)], np.r_[10.0, -10.0, np.zeros(18)])
    twelve = (np.r_[np.full(12, 0.8), np.zeros(8)], np.r_[np.full(12, 10.0), np.zeros(8)])
    assert answers(PowerProtect(1), [two] * 6)[-1], "60 W + 60 W (one braking) is over 100 W"
    assert not any(answers(PowerProtect(1), [twelve] * 8)), "12 x 8 W is under 100 W"


def test_the_limit_is_100_w_a_level_strictly_exceeded_on_the_12_leg_motors_either_sign():
    assert not any(answers(PowerProtect(1), [over(100.0)] * 8)), "exactly the limit is not over it"
    assert answers(PowerProtect(1), [over(100.5)] * 6)[-1]
    assert answers(PowerProtect(1), [over(-400.0)] * 6)[-1], "|power|: braking counts too"
    assert not any(answers(PowerProtect(3), [over(250.0)] * 8)) and answers(PowerProtect(3), [over(350.0)] * 6)[-1]
    assert answers(PowerProtect(1), [over(motor=11)] * 6)[-1]
    assert not any(answers(PowerProtect(1), [over(motor=12)] * 8)), "slots 12-19 are not legs"


def test_the_level_is_clamped_to_1_10_as_the_sdk_clamps_it():
    assert (PowerProtect(0).limit_w, PowerProtect(-3).limit_w, PowerProtect(11).limit_w) == (100.0, 100.0, 1000.0)


@pytest.mark.skipif(not SDK_INSTALLS, reason="the oracle, unitree_legged_sdk, has a cp311 x86_64 wheel only")
@pytest.mark.parametrize("seed", range(8))
def test_it_answers_as_the_sdks_power_protect_call_by_call(seed):
    from unitree_legged_sdk import robot_interface as ri

    rng = np.random.default_rng(seed)
    level = int(rng.integers(-1, 12))
    sdk, ours = ri.Safety(ri.LeggedType.Go1), PowerProtect(level)
    cmd, state = ri.LowCmd(), ri.LowState()
    sdk_answers, our_answers = [], []
    limit = 100.0 * min(max(level, 1), 10)

    def step(tau, dq) -> None:
        tau = np.round(tau * 256) / 256  # tauEst travels as N·m × 256
        motors = state.motorState
        for i in range(20):
            motors[i].tauEst, motors[i].dq = float(tau[i]), float(np.float32(dq[i]))
        state.motorState = motors
        sdk_answers.append(sdk.PowerProtect(cmd, state, level) < 0)
        our_answers.append(ours.over_limit(tau, np.float32(dq)))

    # Runs of 1-12 steps with one motor (a leg, or one of the spare slots) at 0.8-1.3 of the limit, or none
    # loaded, so that the count climbs, stops and falls.
    runs = [(int(rng.integers(0, 20)) if rng.random() < 0.6 else None, rng.uniform(0.8, 1.3), int(rng.integers(1, 13)))
            for _ in range(40)]
    for motor, factor, length in runs:
        for _ in range(length):
            tau, dq = rng.normal(0, 1, 20), rng.normal(0, 1, 20)
            if motor is not None:
                dq[motor] = 20.0 * rng.choice([-1.0, 1.0])
                tau[motor] = limit * factor / dq[motor]
            step(tau, dq)
    assert 0 < sum(sdk_answers) < len(sdk_answers), "the sequence must trip and clear"
    assert our_answers == sdk_answers
