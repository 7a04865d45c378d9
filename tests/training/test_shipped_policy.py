"""The shipped Go2 policy, evaluated through the deployment path (PolicyRunner: ObservationBuilder + OnnxPolicy
+ the contract's soft joint range).

Full issue protocol: 32 held-out episodes x 10 s, commands vx in [0.3, 1.0], |vy| <= 0.3, |yaw| <= 0.5;
"walks" = no falls, vx RMSE <= 0.15 m/s, yaw-rate RMSE <= 0.2 rad/s (see surrogait_bringup/policies/README.md).
The shipped trot's walk is judged here on the full 32 episodes; every other cell on 16 (half the CPU of `make test`'s
pure half was these rollouts): each file's claims are measured in full by bench/skills.py and bench/robustness.py,
whose results pages say which file they judged, and these tests guard them against a file or an evaluation that
changed.
"""

from __future__ import annotations

import numpy as np
import pytest

from surrogait_bringup.policies import shipped_policy
from surrogait_core.policy.contract import SCHEMA_VERSION, read_contract
from surrogait_core.policy.provenance import read_provenance
from surrogait_core.robot_spec import load_robot_spec
from surrogait_train.conditions import condition_by_name
from surrogait_train.evaluate import STAND_RMSE_M_S, evaluate_policy
from surrogait_train.gait_pattern import GAIT_MATCH_MIN

SHIPPED = shipped_policy("go2_trot.onnx")


def test_shipped_policy_is_small_and_carries_its_contract():
    assert SHIPPED.stat().st_size < 400 * 1024
    contract = read_contract(SHIPPED, robot="go2")
    assert contract.schema_version == SCHEMA_VERSION
    assert contract.gait.name == "trot" and contract.control_dt_s == 0.02
    spec = load_robot_spec("go2")
    assert np.all(spec.joint_pos_lower < contract.soft_joint_pos_lower)
    assert np.all(np.asarray(contract.soft_joint_pos_upper) < spec.joint_pos_upper)
    np.testing.assert_allclose(contract.default_joint_pos, spec.default_joint_pos)


def test_shipped_policy_walks_and_keeps_its_joints_in_the_soft_range():
    result = evaluate_policy(SHIPPED, num_episodes=32, episode_s=10.0)
    assert result.fall_rate == 0.0, [c for c, f in zip(result.commands, result.fell, strict=True) if f]
    assert result.vx_rmse <= 0.15, result.vx_rmse
    assert result.yaw_rate_rmse <= 0.2, result.yaw_rate_rmse
    assert result.walks
    # trained with its targets clipped to the soft range and joints outside it penalised
    assert result.soft_range_excess_rad <= 0.01, (result.soft_range_excess_rad, result.soft_range_excess_joint)


def test_shipped_policy_keeps_walking_with_20_ms_of_delay_and_on_slippery_ground():
    # the two conditions that made the nominal-trained policy fall (bench/results/robustness.md)
    for name in ("delay 20 ms", "friction 0.25"):
        result = evaluate_policy(SHIPPED, num_episodes=16, episode_s=10.0, condition=condition_by_name(name))
        assert result.fall_rate == 0.0, (name, [c for c, f in zip(result.commands, result.fell, strict=True) if f])
        assert result.vx_rmse <= 0.2 and result.yaw_rate_rmse <= 0.3, (name, result.vx_rmse, result.yaw_rate_rmse)


SHIPPED_PLAIN = SHIPPED.with_name("go2_trot_plain.onnx")  # the trot shipped before, the PPO baselines' start
SHIPPED_ROUGH = SHIPPED.with_name("go2_trot_rough.onnx")


def test_shipped_policy_was_made_by_the_differentiable_trainer_alone():
    provenance = read_provenance(SHIPPED)
    assert provenance["learner"] == "differentiable"
    assert {stage["learner"] for stage in provenance["stages"]} == {"differentiable"}


def test_shipped_policy_stands_still_when_told_to():
    # issue 34: at a zero command |vx| and |vy| RMSE <= 0.05 m/s with no fall (the plain trot crept at 0.18 m/s)
    result = evaluate_policy(SHIPPED, num_episodes=16, episode_s=8.0, commands=np.zeros((16, 3)))
    assert result.fall_rate == 0.0
    assert result.vx_rmse <= STAND_RMSE_M_S and result.vy_rmse <= STAND_RMSE_M_S, (result.vx_rmse, result.vy_rmse)


def test_shipped_policy_crosses_the_rough_course_where_the_plain_trot_falls():
    # surrogait_bringup/policies/README.md, "go2_trot.onnx" (bench/skills.py's cell: crossed 100 %, 0/32 fell;
    # the plain trot: 47 %, 16/32 fell; on the 16 episodes here, 7 fell and 50 % crossed)
    shipped = evaluate_policy(SHIPPED, num_episodes=16, episode_s=12.0, terrain="rough")
    plain = evaluate_policy(SHIPPED_PLAIN, num_episodes=16, episode_s=12.0, terrain="rough")
    assert sum(shipped.fell) <= 1 < 4 <= sum(plain.fell), (sum(shipped.fell), sum(plain.fell))
    assert shipped.crossed_rate >= 0.95 > plain.crossed_rate, (shipped.crossed_rate, plain.crossed_rate)


SHIPPED_SLOPE = SHIPPED.with_name("go2_trot_slope.onnx")  # go2_trot.onnx plus a stage on tilted gravity


def test_the_slope_trot_crosses_the_15_degree_slope_where_the_shipped_trot_falls():
    # bench/skills.py's cells: crossed 97 %, 0/32 fell (91 % at two other eval seeds); go2_trot.onnx 3 %, 25/32.
    # The 95 % is judged by bench/skills.py; this guards the skill a robot or two below it
    slope = evaluate_policy(SHIPPED_SLOPE, num_episodes=16, episode_s=12.0, terrain="slope")
    level = evaluate_policy(SHIPPED, num_episodes=16, episode_s=12.0, terrain="slope")
    assert sum(slope.fell) <= 2 and 8 <= sum(level.fell), (sum(slope.fell), sum(level.fell))
    assert slope.crossed_rate >= 0.9 > 0.1 >= level.crossed_rate, (slope.crossed_rate, level.crossed_rate)
    provenance = read_provenance(SHIPPED_SLOPE)
    assert provenance["learner"] == "differentiable"
    assert provenance["stages"][:-1] == read_provenance(SHIPPED)["stages"]


def test_the_ppo_rough_ground_baseline_does_not_fall_where_its_start_does_and_still_walks_on_flat_ground():
    rough = evaluate_policy(SHIPPED_ROUGH, num_episodes=16, episode_s=12.0, terrain="rough")
    assert sum(rough.fell) <= 3 and rough.crossed_rate >= 0.85, (sum(rough.fell), rough.crossed_rate)
    flat = evaluate_policy(SHIPPED_ROUGH, num_episodes=16, episode_s=10.0)
    assert flat.walks, (flat.fall_rate, flat.vx_rmse, flat.yaw_rate_rmse)
    assert read_contract(SHIPPED_ROUGH, robot="go2") == read_contract(SHIPPED_PLAIN, robot="go2")
    assert read_provenance(SHIPPED_ROUGH)["learner"] == "mixed"



SHIPPED_VELOCITY = SHIPPED.with_name("go2_trot_velocity.onnx")  # go2_trot.onnx that also sees its base velocity


def test_the_trot_that_sees_its_velocity_keeps_pace_on_damped_joints_where_the_shipped_trot_falls_behind():
    # bench/results/robustness.md: 11/11, damped joints vx RMSE 0.189 where go2_trot.onnx's is 0.248 (the target 0.2)
    damped = condition_by_name("damped joints")
    seeing = evaluate_policy(SHIPPED_VELOCITY, num_episodes=16, episode_s=10.0, condition=damped)
    blind = evaluate_policy(SHIPPED, num_episodes=16, episode_s=10.0, condition=damped)
    assert not any(seeing.fell) and seeing.vx_rmse <= 0.2 < 0.23 <= blind.vx_rmse, (seeing.vx_rmse, blind.vx_rmse)
    nominal = evaluate_policy(SHIPPED_VELOCITY, num_episodes=16, episode_s=10.0)
    assert nominal.walks, (nominal.fall_rate, nominal.vx_rmse, nominal.yaw_rate_rmse)
    contract = read_contract(SHIPPED_VELOCITY, robot="go2")
    assert contract.observation[-1].name == "base_lin_vel_b" and "base_lin_vel_b" in contract.estimator_terms
    assert contract.observation[:-1] == read_contract(SHIPPED, robot="go2").observation
    provenance = read_provenance(SHIPPED_VELOCITY)
    assert provenance["learner"] == "differentiable"
    assert provenance["stages"][:3] == read_provenance(SHIPPED)["stages"]

SHIPPED_GAITS = SHIPPED.with_name("go2_gaits.onnx")
SHIPPED_GAITS_PPO = SHIPPED.with_name("go2_gaits_ppo.onnx")  # the PPO baseline it replaced
FOUR_GAITS = ("trot", "pace", "bound", "gallop")


def test_the_multi_gait_policy_lists_its_four_gaits_trot_first_and_the_trot_file_s_robot_settings():
    contract = read_contract(SHIPPED_GAITS, robot="go2")
    assert contract.gait_names == FOUR_GAITS and contract.gait.name == "trot"
    assert SHIPPED_GAITS.stat().st_size < 400 * 1024
    trot = read_contract(SHIPPED, robot="go2")
    assert contract.obs_size == trot.obs_size + 6  # + gait_params: period, duty factor, four phase offsets
    assert contract.default_joint_pos == trot.default_joint_pos and contract.control_dt_s == trot.control_dt_s


def test_the_multi_gait_policy_was_made_by_the_differentiable_trainer_alone_and_the_ppo_one_is_the_baseline():
    provenance = read_provenance(SHIPPED_GAITS)
    assert provenance["learner"] == "differentiable"
    assert {stage["learner"] for stage in provenance["stages"]} == {"differentiable"}
    assert all(stage["gaits"] == list(FOUR_GAITS) for stage in provenance["stages"])  # no trot-only start
    assert read_provenance(SHIPPED_GAITS_PPO)["learner"] == "mixed"


@pytest.mark.parametrize("gait", FOUR_GAITS)
def test_each_gait_of_the_multi_gait_policy_walks_on_flat_ground_in_its_own_gait_and_stands_still(gait):
    # bound and gallop over vx in [0.5, 1.5] m/s, trot and pace over [0.3, 1.0] (evaluate.GAIT_EVAL_VX); the feet
    # pair up as the gait's schedule says (bench/results/skills.md: gait match 0.89-0.98)
    walk = evaluate_policy(SHIPPED_GAITS, num_episodes=16, episode_s=10.0, gait=gait)
    assert walk.walks, (gait, sum(walk.fell), walk.vx_rmse, walk.yaw_rate_rmse)
    assert walk.gait_match >= GAIT_MATCH_MIN, (gait, walk.gait_match)
    stand = evaluate_policy(SHIPPED_GAITS, num_episodes=8, episode_s=8.0, gait=gait, commands=np.zeros((8, 3)))
    assert stand.fall_rate == 0.0
    assert stand.vx_rmse <= STAND_RMSE_M_S and stand.vy_rmse <= STAND_RMSE_M_S, (gait, stand.vx_rmse, stand.vy_rmse)


@pytest.mark.parametrize("gait", ("trot", "pace"))
def test_the_multi_gait_policy_trots_and_paces_across_the_rough_course(gait):
    # bench/results/skills.md: crossed 97 % in either gait, 1/32 fell (targets: trot >= 95 %, pace >= 90 %)
    rough = evaluate_policy(SHIPPED_GAITS, num_episodes=16, episode_s=12.0, gait=gait, terrain="rough")
    assert rough.crossed_rate >= 0.9 and sum(rough.fell) <= 2, (gait, rough.crossed_rate, sum(rough.fell))
