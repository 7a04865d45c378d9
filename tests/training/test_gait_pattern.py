"""Does a policy walk the gait it was asked for: the feet's pairing against the gait's schedule."""

from __future__ import annotations

import numpy as np
import pytest

from surrogait_bringup.policies import shipped_policy
from surrogait_train.evaluate import evaluate_policy
from surrogait_train.gait_pattern import (
    GAIT_MATCH_MIN,
    LEG_PAIRS,
    gait_match,
    pair_agreement,
    scheduled_agreement,
    scheduled_stance,
)
from surrogait_train.gaits import GAITS

PAIR = {("FR", "FL"): 0, ("FR", "RR"): 1, ("FR", "RL"): 2, ("FL", "RR"): 3, ("FL", "RL"): 4, ("RR", "RL"): 5}


def test_the_leg_pairs_are_named_in_the_sdk_order():
    names = ("FR", "FL", "RR", "RL")
    assert {(names[i], names[j]): k for k, (i, j) in enumerate(LEG_PAIRS)} == PAIR


def test_a_trot_pairs_its_diagonal_feet_and_a_pace_its_same_side_feet():
    trot, pace = scheduled_agreement(GAITS["trot"]), scheduled_agreement(GAITS["pace"])
    np.testing.assert_allclose(trot[[PAIR["FR", "RL"], PAIR["FL", "RR"]]], 1.0)
    np.testing.assert_allclose(trot[[PAIR["FR", "RR"], PAIR["FL", "RL"], PAIR["FR", "FL"]]], 0.0)
    np.testing.assert_allclose(pace[[PAIR["FR", "RR"], PAIR["FL", "RL"]]], 1.0)
    np.testing.assert_allclose(pace[[PAIR["FR", "RL"], PAIR["FL", "RR"], PAIR["RR", "RL"]]], 0.0)
    # the gallop's front feet land a tenth of a cycle apart: they agree 80 % of the time
    assert scheduled_agreement(GAITS["gallop"])[PAIR["FR", "FL"]] == pytest.approx(0.8, abs=0.01)


@pytest.mark.parametrize("gait", sorted(GAITS))
def test_feet_that_step_as_scheduled_match_their_gait_and_no_other_pair_up_gait(gait):
    # contacts sampled from the schedule at random times: the pairing does not depend on when the clock started
    phases = np.random.default_rng(0).uniform(size=(400, 8))
    measured = pair_agreement(scheduled_stance(GAITS[gait], phases))
    assert gait_match(measured, GAITS[gait]) > 0.97
    for other in ("trot", "pace"):
        if other != gait:
            assert gait_match(measured, GAITS[other]) < 0.45


def test_feet_that_step_independently_do_not_count_as_any_gait():
    phases = np.random.default_rng(1).uniform(size=(4000, 4))  # every foot its own clock
    stance = phases < 0.5
    for gait in GAITS:
        assert gait_match(pair_agreement(stance), GAITS[gait]) < GAIT_MATCH_MIN


def test_the_shipped_trot_trots_and_the_ppo_multi_gait_baseline_paces_with_a_trots_diagonal_pairs():
    # docs/training-log.md, 2026-12-05 (8): go2_gaits_ppo.onnx's pace WALKS by the eval's tracking, its feet in
    # diagonal pairs (gait match 0.39); the trot's 0.89. The shipped go2_gaits.onnx paces: test_shipped_policy.py
    trot = evaluate_policy(shipped_policy("go2_trot.onnx"), num_episodes=8, episode_s=5.0)
    assert trot.gait_match >= GAIT_MATCH_MIN, trot.gait_match
    pace = evaluate_policy(shipped_policy("go2_gaits_ppo.onnx"), num_episodes=8, episode_s=5.0, gait="pace")
    assert pace.gait_match < GAIT_MATCH_MIN, pace.gait_match
