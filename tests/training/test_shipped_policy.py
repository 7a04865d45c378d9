"""The shipped Go2 policy, evaluated through the deployment path (ObservationBuilder + OnnxPolicy).

Full issue protocol: 32 held-out episodes x 10 s, commands vx in [0.3, 1.0], |vy| <= 0.3, |yaw| <= 0.5;
"walks" = no falls, vx RMSE <= 0.15 m/s, yaw-rate RMSE <= 0.2 rad/s (see pretrained/README.md).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from surrogait_core.contract import read_contract
from surrogait_train.evaluate import evaluate_policy

SHIPPED = Path(str(resources.files("surrogait_train") / "pretrained" / "go2_trot.onnx"))


def test_shipped_policy_is_small_and_carries_its_contract():
    assert SHIPPED.stat().st_size < 400 * 1024
    contract = read_contract(SHIPPED, robot="go2")
    assert contract.gait.name == "trot" and contract.control_dt_s == 0.02


def test_shipped_policy_walks():
    result = evaluate_policy(SHIPPED, num_episodes=32, episode_s=10.0)
    assert result.fall_rate == 0.0, [c for c, f in zip(result.commands, result.fell, strict=True) if f]
    assert result.vx_rmse <= 0.15, result.vx_rmse
    assert result.yaw_rate_rmse <= 0.2, result.yaw_rate_rmse
    assert result.walks
