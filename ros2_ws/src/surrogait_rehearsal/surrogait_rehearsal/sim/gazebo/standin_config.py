"""The Gazebo stand-in's parameters: one table (`GzStandinConfig`), read and checked without ROS."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from surrogait_core.runtime.node_params import ParamError, param, parameter_table, read_params
from surrogait_rehearsal.sim.gazebo.bridge_config import FOOT_FORCE_DIRECTIONS
from surrogait_rehearsal.sim.gazebo.topics import TOPIC_PARAMETERS, GazeboTopics, TopicError
from surrogait_rehearsal.sim.mujoco.core import SimConfig, SimConfigError


def _topic(name: str):
    default, description = TOPIC_PARAMETERS[name]
    return param(default, description)


@dataclasses.dataclass(frozen=True)
class GzStandinConfig:
    physics_dt: float = param(0.002, "physics step, s (<= 0.002)")
    joint_state_rate_hz: float = param(500.0, "joint states, Hz of simulated time (the Go2 SDF's joint state "
                                              "publisher sends at 500 Hz)")
    sensor_rate_hz: float = param(250.0, "IMU and foot wrenches, Hz of simulated time (the SDF's sensors send at 500 "
                                         "Hz; the bridge reads them for each LowState, 250 Hz by default, so the "
                                         "stand-in saves this machine the rest)")
    odometry_rate_hz: float = param(100.0, "odometry (ground truth), Hz (the Go2 SDF's odometry publisher sends at "
                                           "100 Hz; gz-sim's default is 50)")
    initial_pose: str = param("lying", "lying (on the floor, passive, as go2_sim starts) or stand (keyframe)")
    imu_quat_noise_std: float = param(0.0, "IMU orientation noise, rad")
    imu_gyro_noise_std: float = param(0.01, "gyroscope noise, rad/s")
    imu_acc_noise_std: float = param(0.05, "accelerometer noise, m/s^2")
    seed: int = param(0, "seed of the sensor noise")
    foot_force_measure_direction: str = param("child_to_parent", "which wrench the foot sensors report, as SDF's "
                                                                 "<measure_direction>: child_to_parent (the foot on "
                                                                 "the calf) or parent_to_child")
    joint_states_topic: str = _topic("joint_states_topic")
    imu_topic: str = _topic("imu_topic")
    foot_force_topic: str = _topic("foot_force_topic")
    odometry_topic: str = _topic("odometry_topic")
    joint_force_topic: str = _topic("joint_force_topic")
    realtime_factor: float = param(1.0, "simulated seconds per wall second (> 0: the bridge and the nodes run on "
                                        "wall-clock time)")
    sched_fifo_priority: int = param(0, "0 = normal scheduling; 1-99 = SCHED_FIFO at that priority (needs root or "
                                        "CAP_SYS_NICE, else a warning)")
    duration_s: float = param(0.0, "stop after this much simulated time, s; 0 = run until SIGINT/SIGTERM")
    video_path: str = param("", "offscreen video (.mp4 or .gif); empty = no video")
    video_fps: float = param(20.0, "video frame rate, Hz")
    video_width: int = param(320, "video width, px")
    video_height: int = param(240, "video height, px")
    log_path: str = param("", "recording of ground truth and applied forces (.npz, go2_sim's fields); empty = none")
    log_rate_hz: float = param(50.0, "recording rate, Hz")

    @classmethod
    def from_params(cls, values: Mapping[str, object]) -> GzStandinConfig:
        return read_params(cls, values)

    def validate(self) -> None:
        try:
            self.sim.validate()
        except SimConfigError as e:
            raise ParamError(str(e)) from e
        physics_rate = 1.0 / self.physics_dt
        for name in ("joint_state_rate_hz", "sensor_rate_hz", "odometry_rate_hz", "log_rate_hz", "video_fps"):
            if not 0.0 < getattr(self, name) <= physics_rate + 1e-6:
                raise ParamError(f"{name} {getattr(self, name)} must be in (0, {physics_rate:g}] (the physics rate)")
        if self.foot_force_measure_direction not in FOOT_FORCE_DIRECTIONS:
            raise ParamError(f"foot_force_measure_direction {self.foot_force_measure_direction!r}: expected one of "
                             f"{', '.join(FOOT_FORCE_DIRECTIONS)}")
        if not self.realtime_factor > 0.0:
            raise ParamError(f"realtime_factor {self.realtime_factor} must be > 0: the bridge and the nodes keep "
                             "wall-clock time")
        if not 0 <= self.sched_fifo_priority <= 99:
            raise ParamError(f"sched_fifo_priority {self.sched_fifo_priority} must be in 0..99 (0 = normal)")
        if self.duration_s < 0.0:
            raise ParamError(f"duration_s {self.duration_s} must be >= 0 (0 = until stopped)")
        if self.video_path and not self.video_path.endswith((".mp4", ".gif")):
            raise ParamError(f"video_path {self.video_path!r}: name it *.mp4 or *.gif")
        if self.log_path and not self.log_path.endswith(".npz"):
            raise ParamError(f"log_path {self.log_path!r}: the recording is an .npz file, name it *.npz")
        try:
            GazeboTopics.from_params(self)
        except TopicError as e:
            raise ParamError(str(e)) from e

    @property
    def topics(self) -> GazeboTopics:
        return GazeboTopics.from_params(self)

    @property
    def foot_force_sign(self) -> float:
        return FOOT_FORCE_DIRECTIONS[self.foot_force_measure_direction]

    @functools.cached_property
    def sim(self) -> SimConfig:
        """go2_sim's core configuration: the same scene, start pose and IMU noise (its motor model is unused)."""
        return SimConfig(robot="go2", physics_dt_s=self.physics_dt, initial_pose=self.initial_pose,
                         imu_quat_noise_std_rad=self.imu_quat_noise_std, imu_gyro_noise_std=self.imu_gyro_noise_std,
                         imu_acc_noise_std=self.imu_acc_noise_std, seed=self.seed)


PARAMETERS = parameter_table(GzStandinConfig)  # name: (default, description)
