"""The motor model says when the PD law runs, without DDS or ROS.

`driver` (the robot's motor drivers): at every physics step, from the state of that step.
`on_command` (some simulator bridges): once when a valid LowCmd arrives — a new sequence number —
from the state measured then; the torque is held until the next LowCmd.
"""

import numpy as np
import pytest

from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.runtime.node_params import ParamError
from surrogait_core.wire import go2_wire
from surrogait_core.wire.go2_wire import POS_STOP_F, VEL_STOP_F, MotorCommands
from surrogait_rehearsal.sim.motor_driver import MOTOR_MODELS, MotorTorques, pd_torques
from surrogait_rehearsal.sim.mujoco.config import SimNodeConfig
from surrogait_rehearsal.sim.mujoco.core import LYING_JOINT_POS, Go2Sim, SimConfig, SimConfigError

SPEC = load_robot_spec("go2")
LIMIT = SPEC.joint_torque_limit
N = 12
PHYSICS_DT_S = 0.002
# 0.3 rad from the lying pose at kp 40: 12 N·m, under every motor's limit, so no torque is clipped
# and each joint visibly moves.
NEAR_LYING_TARGET = LYING_JOINT_POS + 0.3


def servo(q, dq=0.0, kp=None, kd=None, tau=0.0, mode=go2_wire.MODE_SERVO) -> MotorCommands:
    full = lambda v: np.broadcast_to(np.asarray(v, dtype=np.float64), (N,)).copy()  # noqa: E731
    kp = SPEC.nominal_kp if kp is None else kp
    kd = SPEC.nominal_kd if kd is None else kd
    return MotorCommands(mode=np.full(N, mode), q=full(q), dq=full(dq), kp=full(kp), kd=full(kd), tau=full(tau))


def lying_sim(motor_model: str) -> Go2Sim:
    return Go2Sim(SimConfig(initial_pose="lying", motor_model=motor_model))


def test_the_robot_drivers_model_is_the_default():
    assert SimConfig().motor_model == "driver"
    assert SimNodeConfig.from_params({}).sim.motor_model == "driver"
    assert set(MOTOR_MODELS) == {"driver", "on_command"}


def test_driver_recomputes_the_torque_from_the_state_of_every_physics_step():
    sim = lying_sim("driver")
    cmd = servo(NEAR_LYING_TARGET)
    applied = []
    for _ in range(10):  # 20 ms: one period of a 50 Hz LowCmd stream, one command
        expected = pd_torques(cmd, sim.joint_pos(), sim.joint_vel(), LIMIT)
        sim.step(cmd, cmd_seq=1)
        np.testing.assert_array_equal(sim.applied_tau, expected)
        applied.append(sim.applied_tau.copy())
    changed_per_step = np.any(np.diff(applied, axis=0) != 0.0, axis=1)
    assert np.all(changed_per_step), "the torque changes at every step as the joints move"


def test_driver_needs_no_command_numbers():
    sim = lying_sim("driver")
    sim.step(servo(NEAR_LYING_TARGET))  # the simple call of the tests and benches that drive the core
    assert np.abs(sim.applied_tau).max() > 1.0


def test_on_command_holds_the_torque_between_commands_while_the_joints_move():
    sim = lying_sim("on_command")
    cmd = servo(NEAR_LYING_TARGET)
    q_at_command = sim.joint_pos()
    at_command = pd_torques(cmd, q_at_command, sim.joint_vel(), LIMIT)
    for _ in range(10):  # 20 ms without a new LowCmd
        sim.step(cmd, cmd_seq=1)
        np.testing.assert_array_equal(sim.applied_tau, at_command)
    assert np.abs(sim.joint_pos() - q_at_command).max() > 0.05, "the joints moved under the held torque"
    driver_now = pd_torques(cmd, sim.joint_pos(), sim.joint_vel(), LIMIT)
    assert np.abs(driver_now - at_command).max() > 0.5, "a driver would apply a different torque by now"


def test_on_command_recomputes_the_torque_when_the_next_command_arrives():
    sim = lying_sim("on_command")
    cmd = servo(NEAR_LYING_TARGET)
    for _ in range(10):
        sim.step(cmd, cmd_seq=1)
    first = sim.applied_tau.copy()
    # The same values again, but a new LowCmd (the next number): computed from the state now.
    expected = pd_torques(cmd, sim.joint_pos(), sim.joint_vel(), LIMIT)
    sim.step(cmd, cmd_seq=2)
    np.testing.assert_array_equal(sim.applied_tau, expected)
    assert np.abs(sim.applied_tau - first).max() > 0.5
    held = sim.applied_tau.copy()
    sim.step(cmd, cmd_seq=2)
    np.testing.assert_array_equal(sim.applied_tau, held)


def test_on_command_before_the_first_command_leaves_the_motors_passive():
    sim = lying_sim("on_command")
    for _ in range(50):
        sim.step(None, cmd_seq=0)  # the gate's number before any valid LowCmd
    assert np.all(sim.applied_tau == 0.0)


@pytest.mark.parametrize("cmd", [
    None,
    servo(q=0.5, tau=3.0, mode=go2_wire.MODE_STOP),
    servo(q=POS_STOP_F, kp=40.0, kd=2.0, tau=0.5),  # damping: no position target
    servo(q=0.1, dq=VEL_STOP_F, kp=40.0, kd=2.0),  # no velocity target
    servo(q=10.0, kp=100.0),  # beyond the torque limits
], ids=["no_command", "stop_mode", "position_sentinel", "velocity_sentinel", "clipped"])
def test_on_command_applies_the_drivers_torque_law_at_the_command(cmd):
    rng = np.random.default_rng(0)
    q, dq = rng.normal(0.0, 0.3, N), rng.normal(0.0, 1.0, N)
    motors = MotorTorques("on_command", LIMIT)
    tau = motors.torques(cmd, 7, q, dq)
    np.testing.assert_array_equal(tau, pd_torques(cmd, q, dq, LIMIT))
    np.testing.assert_array_equal(motors.torques(cmd, 7, q + 0.4, dq - 2.0), tau)  # held while the joints move


def test_reset_forgets_the_held_torque():
    sim = lying_sim("on_command")
    sim.step(servo(NEAR_LYING_TARGET), cmd_seq=1)
    assert np.abs(sim.applied_tau).max() > 1.0
    sim.reset()
    sim.step(None, cmd_seq=1)  # same number as before the reset: still computed afresh
    assert np.all(sim.applied_tau == 0.0)


def stand_up(motor_model: str, command_period_steps: int) -> tuple[float, float]:
    """Stand up from lying with a 1 s ramp to the default pose, commands every `command_period_steps`.

    Returns (base height at the end, m; fastest joint speed in the last 0.5 s, rad/s).
    """
    sim = lying_sim(motor_model)
    q0 = sim.joint_pos()
    steps = int(round(2.0 / PHYSICS_DT_S))
    ramp_steps = int(round(1.0 / PHYSICS_DT_S))
    fastest = 0.0
    for k in range(steps):
        seq = k // command_period_steps + 1  # a new LowCmd every period, computed from its arrival time
        alpha = min(1.0, (seq - 1) * command_period_steps / ramp_steps)
        sim.step(servo((1.0 - alpha) * q0 + alpha * SPEC.default_joint_pos), cmd_seq=seq)
        if k >= steps - int(round(0.5 / PHYSICS_DT_S)):
            fastest = max(fastest, float(np.abs(sim.joint_vel()).max()))
    return float(sim.ground_truth().base_pos_w[2]), fastest


# Measured with the nominal gains (kp 40, kd 1): under on_command the stand-up survives a 25 Hz
# stream and diverges from 22.7 Hz down (joints at ~100 rad/s, the robot bouncing).
@pytest.mark.parametrize(("motor_model", "command_rate_hz", "stands"), [
    ("driver", 20.0, True),  # a slow stream: the robot's drivers still close the PD loop at the physics rate
    ("on_command", 500.0, True),  # a new torque every physics step: the driver model
    ("on_command", 50.0, True),  # a policy's rate: a 50 Hz PD loop still stands it up
    ("on_command", 20.0, False),  # a 20 Hz PD loop: unstable
])
def test_stand_up_with_a_command_stream(motor_model, command_rate_hz, stands):
    height_m, fastest_joint_rad_s = stand_up(motor_model, int(round(1.0 / (command_rate_hz * PHYSICS_DT_S))))
    standing = abs(height_m - SPEC.standing_base_height_m) < 0.03 and fastest_joint_rad_s < 1.0
    assert standing == stands, f"base height {height_m:.3f} m, fastest joint {fastest_joint_rad_s:.1f} rad/s"


def test_an_unknown_motor_model_is_refused_naming_the_parameter_and_the_choices():
    message = "motor_model 'bridge': expected one of driver, on_command"
    with pytest.raises(SimConfigError, match=message):
        SimConfig(motor_model="bridge").validate()
    with pytest.raises(SimConfigError, match=message):
        Go2Sim(SimConfig(motor_model="bridge"))
    with pytest.raises(ParamError, match=message):
        SimNodeConfig.from_params({"motor_model": "bridge"})
    with pytest.raises(ValueError, match=message):
        MotorTorques("bridge", LIMIT)


def test_on_command_refuses_to_guess_which_command_is_new():
    sim = lying_sim("on_command")
    with pytest.raises(ValueError, match="sequence number"):
        sim.step(servo(NEAR_LYING_TARGET))
