"""The estimator node's parameters: one table (`EstimatorNodeConfig`), read and checked without ROS.

The node declares exactly these parameters (`surrogait_core.runtime.ros_node.declare_params`); the tests
build the same table from a dict with `EstimatorNodeConfig.from_params`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from surrogait_core.estimator import ContactConfig, EstimatorConfig, KalmanConfig, TrustConfig
from surrogait_core.inputs.foot_force import DEFAULT_CALIBRATION_DIR, FOOT_FORCE_UNITS, RAW
from surrogait_core.robot_links import DDS, robot_link
from surrogait_core.robot_spec import ROBOTS
from surrogait_core.runtime.node_params import (
    ParamError,
    check_interface,
    check_realtime_priority,
    param,
    parameter_table,
    read_params,
)
from surrogait_core.wire import go1_wire


@dataclasses.dataclass(frozen=True)
class EstimatorNodeConfig:
    robot: str = param("go2", "robot model (its MJCF gives the leg kinematics): go2 reads rt/lowstate on "
                              "unitree_sdk2 DDS, go1 the LowState the safety monitor forwards over UDP")
    dds_domain: int = param(1, "go2: unitree_sdk2 DDS domain of rt/lowstate (robot 0, simulators 1)")
    network_interface: str = param("lo", "go2: network interface for unitree_sdk2 DDS, e.g. lo or eth0")
    udp_lowstate_port: int = param(go1_wire.ESTIMATOR_LOWSTATE_PORT, "go1: UDP port on 127.0.0.1 where the safety "
                                                                     "monitor forwards every LowState")
    allow_lowstate_without_crc: bool = param(False, "go2: use rt/lowstate samples whose CRC fails: ONLY for a "
                                                    "simulator that leaves LowState's crc unset; never on the robot")
    foot_force_units: str = param(RAW, "what foot_force carries: raw (a real Go2's sensor counts: newtons through "
                                       "this robot's calibration, estimator/calibrate_feet_*), newtons (the "
                                       "rehearsal simulator), none; without usable forces contacts come from leg "
                                       "kinematics and the gait schedule")
    foot_force_calibration_dir: str = param(DEFAULT_CALIBRATION_DIR, "where each robot's foot-force calibration is "
                                                                     "kept (<robot>-<serial>.json)")
    gait_schedule_timeout_s: float = param(0.1, "the policy's gait schedule (policy/gait_stance) is used for contacts "
                                                "only this long after it arrived, s")
    odom_frame: str = param("odom", "frame of the pose (REP 105)")
    base_frame: str = param("base_link", "frame of the twist (REP 105)")
    # 100 Hz is twice the control rate, and the odometry's subscribers (the safety monitor; a policy that reads
    # the estimated velocity) each pay for every message in Python: at 250 Hz, most of the monitor's executor.
    publish_decimation: int = param(5, "publish odometry and contacts every N-th accepted sample "
                                       "(500 Hz / 5 = 100 Hz)")
    diagnostics_rate_hz: float = param(10.0, "diagnostics rate, Hz (also published at once on every new "
                                             "rejection reason)")
    lowstate_timeout_s: float = param(0.1, "no rt/lowstate for this long: diagnostics ERROR")
    realtime_priority: int = param(0, "SCHED_FIFO priority of the process, 1..99 (0 = normal scheduling; needs "
                                      "root or CAP_SYS_NICE)")
    catch_up_budget_s: float = param(0.01, "after a stall, process only the newest samples that fit in this much "
                                           "time, s (older ones are skipped and counted)")
    nominal_dt_s: float = param(0.002, "rt/lowstate period, s; longer steps count as dropped samples")
    max_gap_s: float = param(0.05, "a longer silence re-learns the velocity from the legs")
    gravity_mps2: float = param(9.81, "gravity, m/s^2")
    imu_lever_arm: bool = param(True, "subtract the centripetal acceleration of the off-centre IMU")
    accel_noise: float = param(0.5, "Kalman: acceleration process noise, m/s^2/sqrt(Hz)")
    position_noise: float = param(0.002, "Kalman: base position process noise, m/sqrt(s)")
    stance_foot_noise: float = param(0.005, "Kalman: stance-foot drift, m/sqrt(s)")
    swing_foot_noise: float = param(5.0, "Kalman: swing-foot process noise, m/sqrt(s)")
    kin_position_noise: float = param(0.005, "Kalman: leg-kinematics foot position noise, m")
    kin_velocity_noise: float = param(0.15, "Kalman: leg-kinematics foot velocity noise, m/s")
    ground_height_noise: float = param(0.01, "Kalman: flat-ground foot height noise, m; <= 0 disables "
                                             "(uneven ground)")
    slip_gate_chi2: float = param(16.3, "Kalman: a stance foot whose velocity innovation exceeds this chi-square "
                                        "is left out (slipping); <= 0 disables")
    contact_force_on: float = param(60.0, "foot force above which a swing foot touches down (rt/lowstate "
                                          "foot_force units)")
    contact_force_off: float = param(25.0, "foot force below which a stance foot lifts off")
    contact_settle_s: float = param(0.1, "a foot loaded above contact_force_off this long also touches down, s")
    contact_touch_force: float = param(10.0, "foot force above which a foot that is not a stance foot still gives "
                                             "its height (on the ground, perhaps sliding)")
    contact_trust_ramp_s: float = param(0.02, "stance measurements reach full weight this long after touchdown, s")
    trust_min_samples: int = param(100, "height trusted only after this many accepted samples since the filter "
                                        "started")
    trust_settle_s: float = param(0.5, "height trusted only this long (robot time) after a reset, long gap or "
                                       "refused sample, s")
    trust_max_nis_per_dof: float = param(5.0, "height not trusted while the recent innovation per measurement row "
                                              "exceeds this")
    trust_max_latency_s: float = param(0.05, "height not trusted when published later than this after its "
                                             "sample, s")
    orientation_std_rad: float = param(0.01, "reported orientation std (roll, pitch, yaw) in the odometry "
                                             "covariance")
    gyro_std_radps: float = param(0.01, "reported angular velocity std in the odometry covariance")

    @classmethod
    def from_params(cls, values: Mapping[str, object]) -> EstimatorNodeConfig:
        """The checked table from {name: value}; missing names take their defaults (ParamError if refused)."""
        return read_params(cls, values)

    def validate(self) -> None:
        """Values the node cannot run with raise ParamError (run by `read_params`)."""
        if self.robot not in ROBOTS:
            raise ParamError(f"robot {self.robot!r} is not one of {', '.join(ROBOTS)}")
        if not 1 <= self.udp_lowstate_port <= 65535:
            raise ParamError(f"udp_lowstate_port {self.udp_lowstate_port} must be in 1..65535")
        if not 0 <= self.dds_domain <= 232:
            raise ParamError(f"dds_domain {self.dds_domain} must be in 0..232")
        if self.foot_force_units not in FOOT_FORCE_UNITS:
            raise ParamError(f"foot_force_units {self.foot_force_units!r} is not one of {', '.join(FOOT_FORCE_UNITS)}")
        if self.gait_schedule_timeout_s <= 0:
            raise ParamError(f"gait_schedule_timeout_s {self.gait_schedule_timeout_s} must be > 0")
        if self.publish_decimation < 1:
            raise ParamError(f"publish_decimation {self.publish_decimation} must be >= 1")
        check_realtime_priority(self.realtime_priority)
        for name in ("diagnostics_rate_hz", "lowstate_timeout_s", "catch_up_budget_s", "orientation_std_rad",
                     "gyro_std_radps"):
            if not getattr(self, name) > 0.0:
                raise ParamError(f"{name} {getattr(self, name)} must be > 0")
        if not (self.odom_frame and self.base_frame) or self.odom_frame == self.base_frame:
            raise ParamError(f"odom_frame {self.odom_frame!r} and base_frame {self.base_frame!r} must be "
                             "two different non-empty names")
        try:
            self.estimator  # noqa: B018  (built once here, so that its own checks run at start)
        except ValueError as e:
            raise ParamError(str(e)) from e
        if robot_link(self.robot).protocol == DDS:  # a UDP link's LowState comes over loopback, from the gateway
            check_interface(self.network_interface)

    @functools.cached_property
    def estimator(self) -> EstimatorConfig:
        """The ROS-free estimator's configuration, from the Kalman, contact, trust and timing parameters."""
        return EstimatorConfig(
            kalman=KalmanConfig(
                accel_noise=self.accel_noise,
                position_noise=self.position_noise,
                stance_foot_noise=self.stance_foot_noise,
                swing_foot_noise=self.swing_foot_noise,
                kin_position_noise=self.kin_position_noise,
                kin_velocity_noise=self.kin_velocity_noise,
                ground_height_noise=self.ground_height_noise,
                slip_gate_chi2=self.slip_gate_chi2,
            ),
            contact=ContactConfig(
                force_on=self.contact_force_on,
                force_off=self.contact_force_off,
                trust_ramp_s=self.contact_trust_ramp_s,
                settle_s=self.contact_settle_s,
                touch_force=self.contact_touch_force,
            ),
            trust=TrustConfig(
                min_samples_since_reset=self.trust_min_samples,
                settle_s=self.trust_settle_s,
                max_nis_per_dof=self.trust_max_nis_per_dof,
                max_latency_s=self.trust_max_latency_s,
            ),
            gravity_mps2=self.gravity_mps2,
            nominal_dt_s=self.nominal_dt_s,
            max_gap_s=self.max_gap_s,
            imu_lever_arm=self.imu_lever_arm,
        )


PARAMETERS = parameter_table(EstimatorNodeConfig)  # name: (default, description)
