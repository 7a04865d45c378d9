"""The Kalman filter's slip gate: a stance foot whose no-slip velocity disagrees with the filter is left out."""

import numpy as np

from surrogait_core.estimator.kalman import KalmanConfig, LegOdometryKF

FEET_REL_W = np.array([[0.2, -0.15, -0.28], [0.2, 0.15, -0.28], [-0.2, -0.15, -0.28], [-0.2, 0.15, -0.28]])


def filter_with_velocity_covariance(chi2: float, seed: int = 0) -> LegOdometryKF:
    kf = LegOdometryKF(KalmanConfig(slip_gate_chi2=chi2))
    kf.initialize(np.array([0.0, 0.0, 0.3]), FEET_REL_W)
    a = np.random.default_rng(seed).normal(0.0, 0.1, (3, 3))
    kf.P[3:6, 3:6] = a @ a.T + 0.01 * np.eye(3)  # correlated, as after walking
    kf.x[3:6] = [0.4, -0.1, 0.02]
    return kf


def velocity_nis(kf: LegOdometryKF, foot_vel_rel_w: np.ndarray, trust: np.ndarray) -> np.ndarray:
    """Each foot's own chi-square: y^T (P_vv + R_v / trust) y, y its no-slip velocity innovation."""
    r_v = kf.config.kin_velocity_noise**2
    out = []
    for i in range(4):
        y = -foot_vel_rel_w[i] - kf.x[3:6]
        out.append(y @ np.linalg.solve(kf.P[3:6, 3:6] + np.eye(3) * r_v / trust[i], y))
    return np.array(out)


def test_a_foot_whose_velocity_disagrees_beyond_the_chi_square_gate_is_left_out():
    rng = np.random.default_rng(1)
    foot_vel = -np.array([0.4, -0.1, 0.02]) + rng.normal(0.0, 0.05, (4, 3))
    foot_vel[2] += [0.9, -0.4, 0.1]  # RR slides
    trust = np.array([1.0, 0.5, 1.0, 0.1])
    probe = filter_with_velocity_covariance(chi2=1.0)
    nis = velocity_nis(probe, foot_vel, trust)
    assert nis[2] == nis.max()
    gate = 0.5 * (nis[2] + np.sort(nis)[-2])  # between the sliding foot and the worst of the others
    kf = filter_with_velocity_covariance(chi2=gate)
    result = kf.update(FEET_REL_W, foot_vel, trust, ground_z=0.02)
    assert result.slipping == (2,)
    # The gate is exactly the chi-square above: moved just past the second-worst foot, that one goes too.
    second = int(np.argsort(nis)[-2])
    kf = filter_with_velocity_covariance(chi2=np.sort(nis)[-2] * (1 - 1e-9))
    assert set(kf.update(FEET_REL_W, foot_vel, trust, ground_z=0.02).slipping) == {2, second}


def test_when_every_foot_fails_the_gate_the_prior_velocity_is_wrong_and_all_are_kept():
    foot_vel = np.tile([-1.5, 0.0, 0.0], (4, 1))  # all agree on 1.5 m/s; the filter believes 0.4 m/s
    kf = filter_with_velocity_covariance(chi2=1.0)
    result = kf.update(FEET_REL_W, foot_vel, np.ones(4), ground_z=0.02)
    assert result.slipping == ()
    assert result.m == 4 * 7  # every foot's position, velocity and height rows
