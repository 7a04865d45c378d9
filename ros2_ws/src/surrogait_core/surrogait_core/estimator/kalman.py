"""Linear Kalman filter for legged odometry (Bloesch et al. 2013; MIT Cheetah's linear form).

State, world (odom) frame, 18 values:

    x = [ p (3)  base position,  v (3)  base velocity,  f_1..f_4 (4 x 3)  foot positions ]

Orientation is *not* a state: the IMU's own attitude filter gives it, and taking it as known
keeps every model below linear (the classic "linear KF" variant; an EKF with attitude states
would mostly re-estimate what the IMU already reports well in roll/pitch and cannot observe
yaw anyway). With the rotation known:

  prediction   p += v dt + a dt^2 / 2,   v += a dt,   f_i unchanged (random walk)
               a = R a_imu + g  (the IMU's specific force rotated to the world, gravity added back)
  measurements for every foot in stance (swing feet are left out: the limit of infinite noise)
    relative position   f_i - p          = R r_i                        (leg kinematics)
    no-slip velocity    v                = -R (omega x r_i + dr_i/dt)   (the foot does not move)
    ground height       f_i.z            = ground_z                     (flat ground, optional)
  and for a foot that touches the ground too lightly to be trusted not to slide ("touching"):
    relative height     f_i.z - p.z      = (R r_i).z                    (it may slide, it cannot sink)
    ground height       f_i.z            = ground_z

Foot states are what make the position observable with a drift-free velocity: between
touchdown and lift-off a foot is a fixed landmark. The process noise of a swing foot is huge,
so at touchdown its state snaps to wherever kinematics put it. The height measurement ties the
base height to the ground plane; without it height random-walks a little at every step.
"""

from __future__ import annotations

import dataclasses

import numpy as np

NUM_FEET = 4
STATE_DIM = 6 + 3 * NUM_FEET


@dataclasses.dataclass(frozen=True)
class UpdateResult:
    nis: float  # normalised innovation squared: chi-square with m dof if the noise model is right
    m: int  # measurement rows used
    slipping: tuple[int, ...]  # stance feet left out by the slip gate


def _foot(i: int) -> slice:
    return slice(6 + 3 * i, 9 + 3 * i)


@dataclasses.dataclass
class KalmanConfig:
    """Noise levels. Continuous-time densities are per sqrt(s); measurement stds per sample."""

    accel_noise: float = 0.5  # m/s^2/sqrt(Hz): IMU noise plus unmodelled lever-arm/vibration terms
    position_noise: float = 0.002  # m/sqrt(s): keeps P_pp from collapsing
    stance_foot_noise: float = 0.005  # m/sqrt(s): small stance-foot creep (soft ground, rolling sphere)
    swing_foot_noise: float = 5.0  # m/sqrt(s): a swing foot can be anywhere after a step
    kin_position_noise: float = 0.005  # m: encoder noise and link-length error through the leg
    kin_velocity_noise: float = 0.15  # m/s: joint-velocity noise through the leg Jacobian, and foot slip
    ground_height_noise: float = 0.01  # m: unevenness of the "flat" ground; <= 0 disables the measurement
    # A stance foot whose no-slip velocity disagrees with the others beyond this chi-square (3 dof;
    # 16.3 = 99.9 %) is slipping or still bouncing after touchdown: left out of this update. <= 0: off.
    slip_gate_chi2: float = 16.3
    init_velocity_std: float = 0.5  # m/s at start and after a long gap
    init_height_std: float = 0.05  # m

    def __post_init__(self) -> None:
        positive = ("accel_noise", "position_noise", "stance_foot_noise", "swing_foot_noise",
                    "kin_position_noise", "kin_velocity_noise", "init_velocity_std", "init_height_std")
        bad = [f"{n}={getattr(self, n)}" for n in positive if not (getattr(self, n) > 0.0)]
        if bad:
            raise ValueError(f"Kalman noise parameters must be > 0: {', '.join(bad)}")


class LegOdometryKF:
    """The filter over [p, v, f_1..f_4]; all vectors world frame, SDK leg order for feet."""

    def __init__(self, config: KalmanConfig | None = None):
        self.config = config or KalmanConfig()
        self.x = np.zeros(STATE_DIM)
        self.P = np.eye(STATE_DIM)
        self.initialized = False
        self._h_cache: dict[tuple[tuple[int, ...], bool], np.ndarray] = {}
        self._q_cache: dict[tuple[bool, ...], np.ndarray] = {}

    # -- state access ------------------------------------------------------------------------
    @property
    def position(self) -> np.ndarray:
        return self.x[0:3].copy()

    @property
    def velocity(self) -> np.ndarray:
        return self.x[3:6].copy()

    @property
    def feet(self) -> np.ndarray:
        return self.x[6:].reshape(NUM_FEET, 3).copy()

    @property
    def position_cov(self) -> np.ndarray:
        return self.P[0:3, 0:3].copy()

    @property
    def velocity_cov(self) -> np.ndarray:
        return self.P[3:6, 3:6].copy()

    def is_finite(self) -> bool:
        return bool(np.isfinite(self.x).all() and np.isfinite(self.P).all())

    # -- lifecycle -----------------------------------------------------------------------------
    def initialize(self, position: np.ndarray, foot_offsets_w: np.ndarray) -> None:
        """Start at `position` at rest; foot i at position + foot_offsets_w[i]."""
        cfg = self.config
        self.x[0:3] = position
        self.x[3:6] = 0.0
        self.x[6:] = (np.asarray(position) + np.asarray(foot_offsets_w)).reshape(-1)
        std = np.concatenate([[1e-3, 1e-3, cfg.init_height_std], np.full(3, cfg.init_velocity_std),
                              np.tile([1e-3, 1e-3, cfg.init_height_std], NUM_FEET)])
        self.P = np.diag(std**2)
        # Feet and base start with the same height uncertainty, fully correlated (one unknown ground).
        for i in range(NUM_FEET):
            self.P[2, 8 + 3 * i] = self.P[8 + 3 * i, 2] = cfg.init_height_std**2
        for i in range(NUM_FEET):
            for j in range(NUM_FEET):
                self.P[8 + 3 * i, 8 + 3 * j] = cfg.init_height_std**2
        self.initialized = True

    def forget_velocity(self) -> None:
        """After a long gap in the data the velocity is unknown again; the next stance
        measurements re-establish it within a few samples."""
        self.P[3:6, :] = 0.0
        self.P[:, 3:6] = 0.0
        self.P[3:6, 3:6] = np.eye(3) * self.config.init_velocity_std**2

    def update_zero_velocity(self, std_mps: float) -> None:
        """Pseudo-measurement v = 0 (std `std_mps`): bounds the IMU-only drift while no foot is on the ground
        for longer than any gait's flight phase (the robot lies on its side, is lifted, or fell)."""
        S = self.P[3:6, 3:6] + np.eye(3) * std_mps**2
        K = np.linalg.solve(S, self.P[3:6, :]).T  # P H^T S^-1 with H = [0 I 0]
        self.x -= K @ self.x[3:6]
        P = self.P - K @ self.P[3:6, :]
        self.P = 0.5 * (P + P.T)

    def _measurement_matrix(
        self, legs: tuple[int, ...], use_height: bool, touching: tuple[int, ...] = ()
    ) -> np.ndarray:
        """H for the stance legs `legs` and the touching-only feet `touching` (cached: it depends only on which
        feet are down)."""
        key = (legs, use_height, touching)
        H = self._h_cache.get(key)
        if H is None:
            n, m = len(legs), len(touching)
            H = np.zeros(((7 if use_height else 6) * n + 2 * m, STATE_DIM))
            eye = np.eye(3)
            for k, i in enumerate(legs):
                H[3 * k : 3 * k + 3, 0:3] = -eye
                H[3 * k : 3 * k + 3, _foot(i)] = eye
                H[3 * n + 3 * k : 3 * n + 3 * k + 3, 3:6] = eye
                if use_height:
                    H[6 * n + k, 8 + 3 * i] = 1.0
            first = H.shape[0] - 2 * m
            for k, i in enumerate(touching):
                H[first + k, 2], H[first + k, 8 + 3 * i] = -1.0, 1.0  # relative height
                H[first + m + k, 8 + 3 * i] = 1.0  # ground height
            self._h_cache[key] = H
        return H

    # -- filter --------------------------------------------------------------------------------
    def predict(
        self, accel_w: np.ndarray, dt: float, stance: np.ndarray, foot_roll_w: np.ndarray | None = None
    ) -> None:
        """`foot_roll_w[i]`: how fast foot i's sphere centre moves over the ground when it rolls without
        slipping (omega_foot x radius z); a stance foot's centre moves by that, not at all."""
        if foot_roll_w is not None:
            feet = self.x[6:].reshape(NUM_FEET, 3)
            feet += np.where(np.asarray(stance, dtype=bool)[:, None], foot_roll_w, 0.0) * dt
        accel_w = np.asarray(accel_w)
        self.x[0:3] = self.x[0:3] + self.x[3:6] * dt + 0.5 * accel_w * dt * dt
        self.x[3:6] += accel_w * dt
        # P <- F P F^T with F = [[I, dt I, 0], [0, I, 0], [0, 0, I]], done by blocks.
        P = self.P
        P[0:3, :] += dt * P[3:6, :]
        P[:, 0:3] += dt * P[:, 3:6]
        P.flat[:: STATE_DIM + 1] += self._noise_density(stance) * dt

    def _noise_density(self, stance: np.ndarray) -> np.ndarray:
        """The process noise's diagonal per second for this stance mask (16 masks: computed once each)."""
        key = tuple(bool(s) for s in stance)
        q = self._q_cache.get(key)
        if q is None:
            cfg = self.config
            feet = [cfg.stance_foot_noise**2 if down else cfg.swing_foot_noise**2 for down in key]
            q = np.concatenate([np.full(3, cfg.position_noise**2), np.full(3, cfg.accel_noise**2), np.repeat(feet, 3)])
            self._q_cache[key] = q
        return q

    def update(
        self,
        foot_rel_w: np.ndarray,
        foot_vel_rel_w: np.ndarray,
        trust: np.ndarray,
        ground_z: float,
        foot_roll_w: np.ndarray | None = None,
        touching: np.ndarray | None = None,
    ) -> UpdateResult:
        """Stance-foot kinematics. `foot_rel_w[i]` = R r_i, `foot_vel_rel_w[i]` = R(omega x r_i +
        dr_i/dt) (both from the legs, world-aligned), `foot_roll_w` the rolling velocity of the sphere
        centres (see `predict`; the *contact point* is what does not slip); `trust[i]` in [0, 1] scales each foot's
        weight (noise / sqrt(trust)), 0 leaves the foot out; so does the slip gate. `touching[i]`: foot i is on
        the ground, if perhaps too lightly loaded to hold still: a foot that is not a stance foot then gives its
        height only (flat ground)."""
        cfg = self.config
        trust = np.asarray(trust, dtype=np.float64)
        legs = tuple(np.flatnonzero(trust > 0.0).tolist())
        slipping: tuple[int, ...] = ()
        if foot_roll_w is not None:
            # v + R(omega x r + dr/dt) = roll  ->  the no-slip velocity measurement of v.
            foot_vel_rel_w = np.asarray(foot_vel_rel_w) - np.asarray(foot_roll_w)
        if len(legs) > 1 and cfg.slip_gate_chi2 > 0.0:
            legs, slipping = self._slip_gate(legs, foot_vel_rel_w, trust)
        use_height = cfg.ground_height_noise > 0.0
        touch: tuple[int, ...] = ()
        if touching is not None and use_height:
            touch = tuple(i for i in np.flatnonzero(touching).tolist() if trust[i] == 0.0)
        if not legs and not touch:
            return UpdateResult(0.0, 0, slipping)
        H = self._measurement_matrix(legs, use_height, touch)
        idx = np.array(legs, dtype=int)
        feet = self.x[6:].reshape(NUM_FEET, 3)[idx]
        scale = 1.0 / trust[idx]
        # Rows: relative positions (3n), then no-slip velocities (3n), then foot heights (n); then the touching
        # feet's relative heights and foot heights.
        y_parts = [(foot_rel_w[idx] - (feet - self.x[0:3])).reshape(-1),
                   (-foot_vel_rel_w[idx] - self.x[3:6]).reshape(-1)]
        r_parts = [np.repeat(cfg.kin_position_noise**2 * scale, 3), np.repeat(cfg.kin_velocity_noise**2 * scale, 3)]
        if use_height:
            y_parts.append(ground_z - feet[:, 2])
            r_parts.append(cfg.ground_height_noise**2 * scale)
        if touch:
            tidx = np.array(touch)
            touch_z = self.x[6:].reshape(NUM_FEET, 3)[tidx, 2]
            y_parts += [foot_rel_w[tidx, 2] - (touch_z - self.x[2]), ground_z - touch_z]
            r_parts += [np.full(len(touch), cfg.kin_position_noise**2), np.full(len(touch), cfg.ground_height_noise**2)]
        y = np.concatenate(y_parts)
        r = np.concatenate(r_parts)
        m = y.size
        PHt = self.P @ H.T
        S = H @ PHt
        S.flat[:: m + 1] += r
        # One solve for both the gain and the innovation's normalisation.
        Z = np.linalg.solve(S, np.column_stack([PHt.T, y]))
        K, s_inv_y = Z[:, :STATE_DIM].T, Z[:, STATE_DIM]
        self.x += K @ y
        # P - K S K^T = P - K (H P); symmetrised so rounding cannot make it drift asymmetric. (The Joseph
        # form costs three more 18x18 products per sample; with the optimal gain both are the same.)
        P = self.P - K @ PHt.T
        self.P = 0.5 * (P + P.T)
        return UpdateResult(float(y @ s_inv_y), m, slipping)

    def _slip_gate(self, legs: tuple[int, ...], foot_vel_rel_w: np.ndarray, trust: np.ndarray):
        """Split stance legs into (kept, slipping) by each foot's own velocity innovation. If every foot
        fails, the prior velocity is what is wrong (e.g. after a flight phase): keep them all."""
        idx = np.array(legs)
        y = -np.asarray(foot_vel_rel_w)[idx] - self.x[3:6]  # (n, 3)
        # Each foot's innovation covariance is P_vv plus its own measurement noise: one batched solve for all.
        s = self.P[3:6, 3:6] + (self.config.kin_velocity_noise**2 / trust[idx])[:, None, None] * np.eye(3)
        nis = np.einsum("ij,ij->i", y, np.linalg.solve(s, y[:, :, None])[:, :, 0])
        ok = nis <= self.config.slip_gate_chi2
        kept = [i for i, keep in zip(legs, ok.tolist(), strict=True) if keep]
        slipping = [i for i, keep in zip(legs, ok.tolist(), strict=True) if not keep]
        if not kept:
            return legs, ()
        return tuple(kept), tuple(slipping)
