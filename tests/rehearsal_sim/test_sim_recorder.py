"""The ground-truth and torque recording the demo report reads."""

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire import MotorCommands
from surrogait_rehearsal.go2_sim_core import Go2Sim, SimConfig
from surrogait_rehearsal.sim_recorder import SimRecorder

SPEC = load_robot_spec("go2")


def test_rows_at_the_record_rate_with_commands_torques_and_ground_truth(tmp_path):
    sim = Go2Sim(SimConfig(initial_pose="stand"))
    rec = SimRecorder(tmp_path / "run" / "sim.npz", sim, rate_hz=50.0)
    cmd = MotorCommands(mode=np.full(12, go2_wire.MODE_SERVO), q=SPEC.default_joint_pos.copy(), dq=np.zeros(12),
                        kp=np.full(12, 40.0), kd=np.full(12, 1.0), tau=np.zeros(12))
    for k in range(500):  # 1 s; the first 0.1 s without a command
        c = cmd if k >= 50 else None
        sim.step(c)
        rec.maybe_record(c, lambda: (7, 3), lowstate_enabled=True)
    rec.flush()
    log = np.load(tmp_path / "run" / "sim.npz")
    assert rec.num_rows == 50 and log["time_s"].shape == (50,)
    np.testing.assert_allclose(log["time_s"], 0.02 * np.arange(1, 51), atol=1e-9)
    assert log["joint_tau"].shape == (50, 12) and log["base_pos_w"].shape == (50, 3)
    assert np.all(np.isnan(log["cmd_q"][:4])) and np.all(log["joint_tau"][:4] == 0.0)
    np.testing.assert_allclose(log["cmd_q"][-1], SPEC.default_joint_pos)
    assert np.abs(log["joint_tau"][-1]).max() > 1.0
    assert log["base_pos_w"][-1, 2] == pytest.approx(SPEC.standing_base_height_m, abs=0.03)
    assert log["foot_force_n"][-1].sum() == pytest.approx(SPEC.total_mass_kg * 9.81, rel=0.15)
    assert log["lowcmd_dropped"][-1] == 3 and list(log["joint_names"]) == list(SPEC.joint_names)
    assert float(log["physics_dt_s"]) == 0.002 and str(log["robot"]) == "go2"
    assert np.all(np.diff(log["stamp_unix_s"]) >= 0)
    assert not list(tmp_path.glob("run/*.tmp*"))  # written atomically: no leftovers


def test_recording_must_be_an_npz(tmp_path):
    with pytest.raises(ValueError, match="npz"):
        SimRecorder(tmp_path / "sim.csv", Go2Sim(SimConfig()))
