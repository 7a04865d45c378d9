"""The spherical feet roll: checked against MuJoCo's physics, not against the estimator's own algebra."""

import mujoco
import numpy as np

from surrogait_core.estimator.estimator import foot_roll_velocity_w, rotation_from_quat_wxyz
from surrogait_core.estimator.leg_kinematics import LegKinematics
from surrogait_core.robot_spec import load_robot_spec
from surrogait_core.wire import go2_wire


def test_stance_foot_centres_move_as_rolling_spheres_in_mujoco():
    from surrogait_rehearsal.sim.mujoco.core import Go2Sim, SimConfig

    spec = load_robot_spec("go2")
    kin = LegKinematics(spec)
    sim = Go2Sim(SimConfig(initial_pose="stand", imu_gyro_noise_std=0.0, imu_acc_noise_std=0.0))
    sites = [mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_SITE, f) for f in spec.foot_names]
    zeros, kp, kd = np.zeros(12), np.full(12, spec.nominal_kp), np.full(12, spec.nominal_kd)
    thighs = np.tile([0.0, 1.0, 0.0], 4)
    vel6, centre, predicted = np.zeros(6), [], []
    for k in range(2000):
        t = k * sim.model.opt.timestep
        if t > 1.0:  # a slow fore-aft sway on four loaded feet: the calves tilt, the feet roll
            r = sim.readout()
            motion = kin.feet_motion(r.joint_pos, r.joint_vel)
            roll = foot_roll_velocity_w(motion.ang_vel_b, r.gyro_b, rotation_from_quat_wxyz(r.quat_wxyz),
                                        spec.foot_radius_m)
            for leg, site in enumerate(sites):
                mujoco.mj_objectVelocity(sim.model, sim.data, mujoco.mjtObj.mjOBJ_SITE, site, vel6, 0)
                centre.append(vel6[3:].copy())
                predicted.append(roll[leg])
        target = spec.default_joint_pos + 0.15 * np.sin(2 * np.pi * 0.5 * t) * min(1.0, t / 0.5) * thighs
        sim.step(go2_wire.MotorCommands(mode=np.ones(12), q=target, dq=zeros, kp=kp, kd=kd, tau=zeros))
    centre, predicted = np.array(centre), np.array(predicted)
    rms = lambda x: float(np.sqrt(np.mean(x**2)))  # noqa: E731
    assert rms(centre[:, 0]) > 0.005  # the centres do move (so a point-foot model would be wrong) ...
    assert rms(centre[:, 0] - predicted[:, 0]) < 0.4 * rms(centre[:, 0])  # ... as rolling predicts
    assert np.corrcoef(centre[:, 0], predicted[:, 0])[0, 1] > 0.9
