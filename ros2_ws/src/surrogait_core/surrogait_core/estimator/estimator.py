"""The state estimator: IMU + leg kinematics + contacts -> base velocity, position, height.

Per sample: validate (refuse and count bad ones) -> contacts from foot force -> predict with
the IMU acceleration rotated to the world -> update with stance-foot kinematics (and the height
of feet touching the ground too lightly to be stance feet). Samples may come with gaps (lost,
or skipped by a reader catching up: `note_skipped`): each step uses the true dt from the robot's
tick. `height_trust` says whether the height may be used (see `trust`). Orientation
is the IMU's quaternion (odom frame = the IMU's world frame; roll and pitch are observable from
gravity, yaw drifts on a real IMU and odometry inherits that, as REP 105 allows).

The IMU is not at the base origin (MJCF site `imu`, ~5 cm away): its accelerometer feels the
base acceleration plus omega x (omega x r) + alpha x r. The centripetal term is subtracted
exactly from the gyro. The tangential term alpha x r would need the gyro differentiated
(noise amplified by 1/dt: ~0.01 rad/s gyro noise at 500 Hz becomes ~7 rad/s^2, i.e. ~0.35 m/s^2
at 5 cm, more than the term itself when trotting); it is zero-mean over a stride and the
kinematic velocity update (which measures the base *origin* velocity directly) removes its
effect, so it is left in the process noise.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from surrogait_core.estimator import samples as S
from surrogait_core.estimator.contact import ContactConfig, ContactDetector
from surrogait_core.estimator.kalman import KalmanConfig, LegOdometryKF
from surrogait_core.estimator.kinematic_contact import KinematicContactConfig, kinematic_stance, pseudo_foot_force
from surrogait_core.estimator.leg_kinematics import LegKinematics
from surrogait_core.estimator.trust import FilterStatus, HeightTrust, TrustConfig, assess_height
from surrogait_core.robot_spec import RobotSpec

OK, WARN, ERROR = "OK", "WARN", "ERROR"


def rotation_from_quat_wxyz(q: np.ndarray) -> np.ndarray:
    """Body-to-world rotation matrix of a (normalised here) w, x, y, z quaternion."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def _skew(w: np.ndarray) -> np.ndarray:
    """The matrix of w x (.) (np.cross is ~30x slower on 3-vectors)."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def foot_roll_velocity_w(foot_ang_vel_b: np.ndarray, omega_b: np.ndarray, rot_wb: np.ndarray,
                         radius_m: float) -> np.ndarray:
    """Velocity (world, (4, 3)) of each spherical foot's centre when it rolls on the ground without
    slipping: omega_foot x (radius z_world), with omega_foot = the base's rate plus the foot link's rate
    relative to the base (from the legs)."""
    foot_omega_w = (np.asarray(foot_ang_vel_b) + omega_b) @ rot_wb.T
    # rows: omega_i x (r z) = -skew(r z) omega_i, i.e. omega_i^T skew(r z)
    return foot_omega_w @ _skew(np.array([0.0, 0.0, radius_m]))


@dataclasses.dataclass
class EstimatorConfig:
    kalman: KalmanConfig = dataclasses.field(default_factory=KalmanConfig)
    contact: ContactConfig = dataclasses.field(default_factory=ContactConfig)
    kinematic_contact: KinematicContactConfig = dataclasses.field(default_factory=KinematicContactConfig)
    trust: TrustConfig = dataclasses.field(default_factory=TrustConfig)
    gravity_mps2: float = 9.81
    nominal_dt_s: float = 0.002  # the robot's state rate (500 Hz); longer steps count as dropped samples
    max_gap_s: float = 0.05  # a longer silence: IMU integration over it is meaningless, velocity is re-learnt
    quat_norm_tolerance: float = 0.05
    imu_lever_arm: bool = True  # subtract omega x (omega x r_imu) from the accelerometer
    rolling_feet: bool = True  # stance feet roll (sphere centre moves), their contact point does not slip
    recovery_s: float = 0.2  # health stays WARN this long after a refusal or gap
    max_velocity_std_mps: float = 0.3  # larger: WARN (e.g. long without any stance foot)
    # No stance foot for longer than any gait's flight phase: the velocity is unobservable (IMU integration
    # alone drifts without bound); a weak zero-velocity pseudo-measurement keeps it bounded.
    max_flight_s: float = 0.3
    no_support_velocity_std_mps: float = 0.2

    def __post_init__(self) -> None:
        if not (self.nominal_dt_s > 0.0 and self.max_gap_s > self.nominal_dt_s):
            raise ValueError(f"need 0 < nominal_dt_s < max_gap_s, got {self.nominal_dt_s}, {self.max_gap_s}")
        if not self.gravity_mps2 > 0.0:
            raise ValueError(f"gravity_mps2 must be > 0, got {self.gravity_mps2}")


@dataclasses.dataclass
class Estimate:
    """What the estimator knows at `time_s`. World = odom frame (origin: xy where the estimator
    started, z on the ground plane), body = base_link."""

    time_s: float
    position_w: np.ndarray  # m; z is the base height above the ground
    velocity_w: np.ndarray  # m/s
    base_lin_vel_b: np.ndarray  # m/s
    base_ang_vel_b: np.ndarray  # rad/s (gyro)
    quat_wxyz: np.ndarray
    stance: np.ndarray  # bool (4,), SDK leg order
    position_cov_w: np.ndarray  # (3, 3) m^2
    base_lin_vel_cov_b: np.ndarray  # (3, 3) (m/s)^2

    @property
    def height_m(self) -> float:
        return float(self.position_w[2])


@dataclasses.dataclass
class EstimatorHealth:
    level: str  # OK | WARN | ERROR
    message: str
    accepted: int
    rejected: dict[str, int]
    dropped_samples: int  # never reached the estimator: inferred from gaps in time, skipped ones excluded
    skipped_samples: int  # reached the reader but deliberately not processed (it was catching up)
    long_gaps: int  # gaps > max_gap_s (velocity re-learnt)
    resets: int  # filter (re)initialisations
    last_rejection: str  # reason of the latest refused sample ("" if none)
    nis_per_dof: float  # mean normalised innovation per measurement row, recent (~1 when the noise model fits)
    slip_rejections: int  # stance-foot measurements left out as slipping (foot-samples)
    samples_since_reset: int  # accepted since the filter was last (re)initialised

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())


class StateEstimator:
    """ROS-free: feed `ProprioSample`s in time order, get `Estimate`s (None for refused samples)."""

    def __init__(self, spec: RobotSpec, config: EstimatorConfig | None = None):
        self.spec = spec
        self.config = config or EstimatorConfig()
        self.kinematics = LegKinematics(spec)
        self.contacts = ContactDetector(self.config.contact)
        self.kf = LegOdometryKF(self.config.kalman)
        self.ground_z = spec.foot_radius_m  # foot sphere centres rest one radius above the ground
        self._g_w = np.array([0.0, 0.0, -self.config.gravity_mps2])
        self._last_time_s: float | None = None
        self._last_trouble_s = -np.inf  # robot time of the latest refusal or long gap
        self._trouble = ""  # which of those it was
        self._last_reset_s = -np.inf  # robot time of the latest (re)initialisation
        self._accepted = 0
        self._since_reset = 0
        self._rejected = dict.fromkeys(S.REJECTION_REASONS, 0)
        self._dropped = 0
        self._skipped = 0
        self._unprocessed_since_accept = 0  # refused or skipped: accounted for, not lost
        self._long_gaps = 0
        self._slip_rejections = 0
        self._no_support_s = 0.0
        self._resets = 0
        self._last_rejection = ""
        self._nis_avg = 1.0
        self.last_estimate: Estimate | None = None

    # -- public --------------------------------------------------------------------------------
    def step(self, sample: S.ProprioSample, scheduled_stance: np.ndarray | None = None,
             contact_from_kinematics: bool = False) -> Estimate | None:
        """One sample. `scheduled_stance`: the gait schedule's stance mask while walking (None: none);
        `contact_from_kinematics`: the foot forces cannot be used (none, uncalibrated or stuck): contacts come
        from leg kinematics and the schedule (`kinematic_contact`) instead."""
        reason = S.check_sample(sample, self.spec.num_joints, self.config.quat_norm_tolerance)
        if reason is None and self._last_time_s is not None and not sample.time_s > self._last_time_s:
            reason = S.TIME_NOT_ADVANCING
        if reason is not None:
            self._rejected[reason] += 1
            self._last_rejection = reason
            self._unprocessed_since_accept += 1
            if np.isfinite(sample.time_s):
                self._note_trouble(sample.time_s, f"a refused sample ({reason})")
            return None
        self._accepted += 1
        self._since_reset += 1

        rot_wb = rotation_from_quat_wxyz(sample.quat_wxyz)
        omega_b = np.asarray(sample.gyro_b, dtype=np.float64)
        legs = self.kinematics.feet_motion(sample.joint_pos, sample.joint_vel)
        foot_pos_b = legs.pos_b
        # Velocity of each foot relative to the base origin, from the legs and the base's rotation.
        omega_x = _skew(omega_b)
        foot_vel_rel_b = foot_pos_b @ omega_x.T + legs.vel_b  # rows: omega x r_i + dr_i/dt
        foot_rel_w = foot_pos_b @ rot_wb.T
        foot_vel_rel_w = foot_vel_rel_b @ rot_wb.T
        # The foot is a sphere: in stance its contact point is at rest, its centre (the kinematic point) rolls
        # at omega_foot x (radius z). Ignoring that biases the walking speed by ~radius x calf rate (several cm/s).
        foot_roll_w = None
        if self.config.rolling_feet and self.spec.foot_radius_m > 0.0:
            foot_roll_w = foot_roll_velocity_w(legs.ang_vel_b, omega_b, rot_wb, self.spec.foot_radius_m)

        foot_force = sample.foot_force
        if contact_from_kinematics:
            stance_k = kinematic_stance(foot_rel_w, scheduled_stance, self.config.kinematic_contact)
            foot_force = pseudo_foot_force(stance_k, self.config.contact.force_on)
            scheduled_stance = None  # already fused
        if not self.kf.initialized or not self.kf.is_finite():
            dt = self.config.nominal_dt_s
            stance = self.contacts.update(foot_force, dt, scheduled_stance)
            self._initialize(foot_rel_w, stance)
            self._last_reset_s = sample.time_s
        else:
            dt = sample.time_s - self._last_time_s
            gap = dt > self.config.max_gap_s
            if dt > 1.5 * self.config.nominal_dt_s:
                # A few late or lost samples are normal on a loaded computer or network: counted, not a WARN.
                missed = int(round(dt / self.config.nominal_dt_s)) - 1
                self._dropped += max(0, missed - self._unprocessed_since_accept)  # those are counted already
            stance = self.contacts.update(foot_force, dt, scheduled_stance)
            if gap:
                self._note_trouble(sample.time_s, f"a {dt:.2f} s gap in the samples")
                # Feet may have moved and the IMU was not integrated: predict at constant velocity with
                # every foot free, then let the kinematics re-anchor feet and velocity.
                self._long_gaps += 1
                self.kf.predict(np.zeros(3), dt, np.zeros(4, dtype=bool))
                self.kf.forget_velocity()
            else:
                accel_b = np.asarray(sample.accel_b, dtype=np.float64)
                if self.config.imu_lever_arm:
                    accel_b = accel_b - omega_x @ (omega_x @ self.kinematics.imu_pos_b)
                self.kf.predict(rot_wb @ accel_b + self._g_w, dt, stance, foot_roll_w)
            result = self.kf.update(foot_rel_w, foot_vel_rel_w, self.contacts.stance_trust(), self.ground_z,
                                    foot_roll_w, self.contacts.touching)
            self._no_support_s = 0.0 if np.any(stance) else self._no_support_s + dt
            if self._no_support_s > self.config.max_flight_s:
                self.kf.update_zero_velocity(self.config.no_support_velocity_std_mps)
            if result.m:
                self._nis_avg += 0.01 * (result.nis / result.m - self._nis_avg)
            self._slip_rejections += len(result.slipping)
        self._last_time_s = sample.time_s
        self._unprocessed_since_accept = 0

        vel_w = self.kf.velocity
        self.last_estimate = Estimate(
            time_s=sample.time_s,
            position_w=self.kf.position,
            velocity_w=vel_w,
            base_lin_vel_b=rot_wb.T @ vel_w,
            base_ang_vel_b=omega_b.copy(),
            quat_wxyz=np.asarray(sample.quat_wxyz, dtype=np.float64) / np.linalg.norm(sample.quat_wxyz),
            stance=stance,
            position_cov_w=self.kf.position_cov,
            base_lin_vel_cov_b=rot_wb.T @ self.kf.velocity_cov @ rot_wb,
        )
        return self.last_estimate

    def note_skipped(self, count: int) -> None:
        """`count` samples arrived but were deliberately not processed (the reader was catching up): the
        next accepted sample bridges them with one longer step, and they are not counted as lost."""
        self._skipped += count
        self._unprocessed_since_accept += count

    def height_trust(self, latency_s: float = 0.0) -> HeightTrust:
        """May the latest estimate's height be used (published `latency_s` after its sample)? See `trust`."""
        kf = self.kf
        reset_last = self._last_reset_s >= self._last_trouble_s
        since = -np.inf if self._last_time_s is None else self._last_time_s - max(self._last_reset_s,
                                                                                    self._last_trouble_s)
        status = FilterStatus(
            initialized=kf.initialized and self._last_time_s is not None,
            finite=kf.is_finite(),
            samples_since_reset=self._since_reset,
            since_trouble_s=max(0.0, since),
            trouble="the filter (re)started" if reset_last else self._trouble,
            nis_per_dof=self._nis_avg,
            z_var_m2=float(kf.position_cov[2, 2]) if kf.initialized else np.inf,
            latency_s=latency_s,
        )
        return assess_height(status, self.config.trust)

    def health(self, now_s: float | None = None) -> EstimatorHealth:
        """Filter health at `now_s` (default: the latest sample's time)."""
        now = self._last_time_s if now_s is None else now_s
        if not self.kf.initialized:
            level, msg = ERROR, "no valid sample yet"
        elif not self.kf.is_finite():
            level, msg = ERROR, "filter state not finite; re-initialising on the next sample"
        elif now is not None and now - self._last_trouble_s < self.config.recovery_s:
            level, msg = WARN, f"recovering from {self._trouble}"
        elif self._no_support_s > self.config.max_flight_s:
            level, msg = WARN, f"no foot on the ground for {self._no_support_s:.1f} s: velocity unobservable"
        elif np.sqrt(np.max(np.diag(self.kf.velocity_cov))) > self.config.max_velocity_std_mps:
            level, msg = WARN, "velocity uncertain (no stance foot for a while?)"
        else:
            level, msg = OK, "tracking"
        return EstimatorHealth(
            level=level, message=msg, accepted=self._accepted, rejected=dict(self._rejected),
            dropped_samples=self._dropped, skipped_samples=self._skipped, long_gaps=self._long_gaps,
            resets=self._resets, last_rejection=self._last_rejection, nis_per_dof=self._nis_avg,
            slip_rejections=self._slip_rejections, samples_since_reset=self._since_reset,
        )

    # -- internals -----------------------------------------------------------------------------
    def _initialize(self, foot_rel_w: np.ndarray, stance: np.ndarray) -> None:
        """Odom origin under the robot: xy = 0, z from the feet assumed on the ground (stance feet
        if any, else all four: a lying or lifted robot still gets a finite start)."""
        support = stance if np.any(stance) else np.ones(4, dtype=bool)
        height = self.ground_z - float(np.mean(foot_rel_w[support, 2]))
        self.kf.initialize(np.array([0.0, 0.0, height]), foot_rel_w)
        self._resets += 1
        self._since_reset = 1
        self._nis_avg = 1.0

    def _note_trouble(self, time_s: float, what: str) -> None:
        self._last_trouble_s, self._trouble = time_s, what
