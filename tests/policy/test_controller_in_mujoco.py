"""The policy node's decision logic driving MuJoCo in lockstep (no processes, no DDS timing):
PASSIVE → STAND_UP from lying → READY → WALK with the shipped policy, through the same LowState
message and decoder the node uses. It isolates the controller and the policy from the timing of
a rehearsal on a busy machine; the rehearsal test (test_rehearsal_walk.py) runs the real processes."""

import numpy as np
import pytest

from surrogait_core.policy.onnx_policy import OnnxPolicy
from surrogait_core.policy.policy_controller import ControllerConfig, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.policy.policy_runner import PolicyRunner
from surrogait_core.wire.go2_wire import MotorCommands, decode_lowstate
from surrogait_rehearsal.harness.nodes import shipped_policy_path
from surrogait_rehearsal.sim.lowstate_writer import LowStateWriter
from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig

DT = 0.02
SUBSTEPS = 10  # physics at 500 Hz, as the simulator's motor drivers


def roll_pitch(q):
    w, x, y, z = q
    return np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)), np.arcsin(np.clip(2 * (w * y - z * x), -1, 1))


def test_stand_up_then_walk_at_half_a_metre_per_second():
    sim = Go2Sim(SimConfig(initial_pose="lying"))
    ctrl = PolicyController(PolicyRunner(OnnxPolicy(shipped_policy_path(), robot="go2")),
                            ControllerConfig(stand_up_duration_s=2.0))
    writer = LowStateWriter()
    log = []  # t, state, height, roll, pitch, vx

    def cycle(t):
        msg = writer.fill(sim.readout(), int(round(sim.time_s * 1000)), [0] * 40)
        ctrl.on_lowstate(decode_lowstate(msg), t)
        out = ctrl.cycle(t)
        m = out.targets
        cmd = MotorCommands(mode=np.ones(12), q=m.q, dq=m.dq, kp=m.kp, kd=m.kd, tau=m.tau)
        for _ in range(SUBSTEPS):
            sim.step(cmd)
        gt = sim.ground_truth()
        log.append((t, out.state, gt.base_pos_w[2], *roll_pitch(gt.base_quat_wxyz), gt.base_lin_vel_b[0]))

    t = 0.0
    for _ in range(10):
        cycle(t)
        t += DT
    assert ctrl.state is PolicyState.PASSIVE and log[-1][2] < 0.15, "starts lying, damping"
    assert ctrl.request("stand_up", t).accepted
    while ctrl.state is not PolicyState.READY:
        cycle(t)
        t += DT
        assert t < 5.0
    for _ in range(25):
        cycle(t)
        t += DT
    standing = log[-1]
    assert standing[2] > 0.25, f"stands at {standing[2]:.3f} m"
    assert max(abs(r[3]) + abs(r[4]) for r in log) < 0.3, "no tilt while standing up"

    assert ctrl.request("walk", t).accepted
    walk_start = t
    while t - walk_start < 6.0:
        ctrl.on_cmd_vel(0.5, 0.0, 0.0, t)
        cycle(t)
        t += DT
    walking = [r for r in log if r[0] >= walk_start + 1.0]
    assert all(r[1] is PolicyState.WALK for r in walking)
    assert min(r[2] for r in walking) > 0.15 and max(max(abs(r[3]), abs(r[4])) for r in walking) < 1.0, "no fall"
    vx = np.array([r[5] for r in walking])
    rmse = float(np.sqrt(np.mean((vx - 0.5) ** 2)))
    assert rmse <= 0.2, f"vx RMSE {rmse:.3f} m/s at a 0.5 m/s command (mean vx {vx.mean():.3f})"
    assert vx.mean() == pytest.approx(0.5, abs=0.15)
