"""The estimator node's parameters: names, defaults, checks with clear errors (ROS-free).

The node declares exactly these parameters and hands their values to
`EstimatorNodeConfig.from_params`, which the tests also call directly.
"""

from __future__ import annotations

import dataclasses

from surrogait_core.estimator import ContactConfig, EstimatorConfig, KalmanConfig, TrustConfig
from surrogait_core.network_interface import interface_problem
from surrogait_core.robot_spec import ROBOTS

# name: (default, description). The default's type is the parameter's type.
PARAMETERS: dict[str, tuple[object, str]] = {
    "robot": ("go2", "robot model (its MJCF gives the leg kinematics); rt/lowstate is the Go2's"),
    "dds_domain": (1, "unitree_sdk2 DDS domain of rt/lowstate (robot 0, simulators 1)"),
    "network_interface": ("lo", "network interface for unitree_sdk2 DDS, e.g. lo or eth0"),
    "odom_frame": ("odom", "frame of the pose (REP 105)"),
    "base_frame": ("base_link", "frame of the twist (REP 105)"),
    "publish_decimation": (2, "publish odometry and contacts every N-th accepted sample (500 Hz / 2 = 250 Hz)"),
    "diagnostics_rate_hz": (10.0, "diagnostics rate, Hz (also published at once on every new rejection reason)"),
    "lowstate_timeout_s": (0.1, "no rt/lowstate for this long: diagnostics ERROR"),
    "realtime_priority": (0, "SCHED_FIFO priority of the process, 1..99 (0 = normal scheduling; needs root or "
                             "CAP_SYS_NICE)"),
    "catch_up_budget_s": (0.01, "after a stall, process only the newest samples that fit in this much time, s "
                                "(older ones are skipped and counted)"),
    "nominal_dt_s": (0.002, "rt/lowstate period, s; longer steps count as dropped samples"),
    "max_gap_s": (0.05, "a longer silence re-learns the velocity from the legs"),
    "gravity_mps2": (9.81, "gravity, m/s^2"),
    "imu_lever_arm": (True, "subtract the centripetal acceleration of the off-centre IMU"),
    "accel_noise": (0.5, "Kalman: acceleration process noise, m/s^2/sqrt(Hz)"),
    "position_noise": (0.002, "Kalman: base position process noise, m/sqrt(s)"),
    "stance_foot_noise": (0.005, "Kalman: stance-foot drift, m/sqrt(s)"),
    "swing_foot_noise": (5.0, "Kalman: swing-foot process noise, m/sqrt(s)"),
    "kin_position_noise": (0.005, "Kalman: leg-kinematics foot position noise, m"),
    "kin_velocity_noise": (0.15, "Kalman: leg-kinematics foot velocity noise, m/s"),
    "ground_height_noise": (0.01, "Kalman: flat-ground foot height noise, m; <= 0 disables (uneven ground)"),
    "slip_gate_chi2": (16.3, "Kalman: a stance foot whose velocity innovation exceeds this chi-square is left out "
                              "(slipping); <= 0 disables"),
    "contact_force_on": (60.0, "foot force above which a swing foot touches down (rt/lowstate foot_force units)"),
    "contact_force_off": (25.0, "foot force below which a stance foot lifts off"),
    "contact_settle_s": (0.1, "a foot loaded above contact_force_off this long also touches down, s"),
    "contact_touch_force": (10.0, "foot force above which a foot that is not a stance foot still gives its height "
                                  "(on the ground, perhaps sliding)"),
    "contact_trust_ramp_s": (0.02, "stance measurements reach full weight this long after touchdown, s"),
    "trust_min_samples": (100, "height trusted only after this many accepted samples since the filter started"),
    "trust_settle_s": (0.5, "height trusted only this long (robot time) after a reset, long gap or refused sample, s"),
    "trust_max_nis_per_dof": (5.0, "height not trusted while the recent innovation per measurement row exceeds this"),
    "trust_max_latency_s": (0.05, "height not trusted when published later than this after its sample, s"),
    "orientation_std_rad": (0.01, "reported orientation std (roll, pitch, yaw) in the odometry covariance"),
    "gyro_std_radps": (0.01, "reported angular velocity std in the odometry covariance"),
}


class ParamError(ValueError):
    """A parameter value the node cannot run with; the message says what to change."""


def check_interface(name: str) -> None:
    if (problem := interface_problem(name)) is not None:
        raise ParamError(problem)


@dataclasses.dataclass
class EstimatorNodeConfig:
    robot: str
    dds_domain: int
    network_interface: str
    odom_frame: str
    base_frame: str
    publish_decimation: int
    diagnostics_rate_hz: float
    lowstate_timeout_s: float
    realtime_priority: int
    catch_up_budget_s: float
    orientation_std_rad: float
    gyro_std_radps: float
    estimator: EstimatorConfig

    @classmethod
    def from_params(cls, p: dict[str, object]) -> EstimatorNodeConfig:
        unknown = set(p) - set(PARAMETERS)
        if unknown:
            raise ParamError(f"unknown parameters {sorted(unknown)}; known: {', '.join(PARAMETERS)}")
        p = {**{k: v for k, (v, _) in PARAMETERS.items()}, **p}
        if p["robot"] != "go2":
            hint = " (the Go1 speaks UDP, not unitree_sdk2 DDS)" if p["robot"] in ROBOTS else ""
            raise ParamError(f"robot {p['robot']!r}: this node reads the Go2's rt/lowstate{hint}")
        if not 0 <= int(p["dds_domain"]) <= 232:
            raise ParamError(f"dds_domain {p['dds_domain']} must be in 0..232")
        if int(p["publish_decimation"]) < 1:
            raise ParamError(f"publish_decimation {p['publish_decimation']} must be >= 1")
        if not 0 <= int(p["realtime_priority"]) <= 99:
            raise ParamError(f"realtime_priority {p['realtime_priority']} must be in 0..99")
        for name in ("diagnostics_rate_hz", "lowstate_timeout_s", "catch_up_budget_s", "orientation_std_rad",
                     "gyro_std_radps"):
            if not float(p[name]) > 0.0:
                raise ParamError(f"{name} {p[name]} must be > 0")
        if not (str(p["odom_frame"]) and str(p["base_frame"])) or p["odom_frame"] == p["base_frame"]:
            raise ParamError(f"odom_frame {p['odom_frame']!r} and base_frame {p['base_frame']!r} must be "
                             "two different non-empty names")
        try:
            estimator = EstimatorConfig(
                kalman=KalmanConfig(
                    accel_noise=float(p["accel_noise"]),
                    position_noise=float(p["position_noise"]),
                    stance_foot_noise=float(p["stance_foot_noise"]),
                    swing_foot_noise=float(p["swing_foot_noise"]),
                    kin_position_noise=float(p["kin_position_noise"]),
                    kin_velocity_noise=float(p["kin_velocity_noise"]),
                    ground_height_noise=float(p["ground_height_noise"]),
                    slip_gate_chi2=float(p["slip_gate_chi2"]),
                ),
                contact=ContactConfig(
                    force_on=float(p["contact_force_on"]),
                    force_off=float(p["contact_force_off"]),
                    trust_ramp_s=float(p["contact_trust_ramp_s"]),
                    settle_s=float(p["contact_settle_s"]),
                    touch_force=float(p["contact_touch_force"]),
                ),
                trust=TrustConfig(
                    min_samples_since_reset=int(p["trust_min_samples"]),
                    settle_s=float(p["trust_settle_s"]),
                    max_nis_per_dof=float(p["trust_max_nis_per_dof"]),
                    max_latency_s=float(p["trust_max_latency_s"]),
                ),
                gravity_mps2=float(p["gravity_mps2"]),
                nominal_dt_s=float(p["nominal_dt_s"]),
                max_gap_s=float(p["max_gap_s"]),
                imu_lever_arm=bool(p["imu_lever_arm"]),
            )
        except ValueError as e:
            raise ParamError(str(e)) from e
        check_interface(str(p["network_interface"]))
        return cls(
            robot=str(p["robot"]),
            dds_domain=int(p["dds_domain"]),
            network_interface=str(p["network_interface"]),
            odom_frame=str(p["odom_frame"]),
            base_frame=str(p["base_frame"]),
            publish_decimation=int(p["publish_decimation"]),
            diagnostics_rate_hz=float(p["diagnostics_rate_hz"]),
            lowstate_timeout_s=float(p["lowstate_timeout_s"]),
            realtime_priority=int(p["realtime_priority"]),
            catch_up_budget_s=float(p["catch_up_budget_s"]),
            orientation_std_rad=float(p["orientation_std_rad"]),
            gyro_std_radps=float(p["gyro_std_radps"]),
            estimator=estimator,
        )
