"""The simulator process's parameters: one table (`SimNodeConfig`), read and checked without ROS.

The node declares exactly these parameters (`surrogait_core.runtime.ros_node.declare_params`); the tests
build the same table from a dict with `SimNodeConfig.from_params`. `go1_sim` declares the same table
with the Go1 as its default robot (`Go1SimNodeConfig`).

The robot decides the wire: a Go2 speaks unitree_sdk2 DDS (`dds_domain`, `network_interface`,
`lowstate_rate_hz`), a Go1 unitree_legged_sdk UDP (`udp_host`, `udp_port`, `udp_tap_port`); the
other robot's parameters are ignored and not checked.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
from collections.abc import Mapping

from surrogait_core.robot_spec import ROBOTS
from surrogait_core.runtime.node_params import ParamError, check_interface, param, parameter_table, read_params
from surrogait_core.wire import go1_wire
from surrogait_rehearsal.sim.mujoco.core import SimConfig, SimConfigError


@dataclasses.dataclass(frozen=True)
class SimNodeConfig:
    robot: str = param("go2", "robot model and its wire: go2 (unitree_sdk2 DDS) or go1 (unitree_legged_sdk UDP)")
    dds_domain: int = param(1, "go2 only: DDS domain of rt/lowstate and rt/lowcmd (the robot uses 0; simulators "
                               "conventionally 1)")
    network_interface: str = param("lo", "go2 only: network interface for unitree_sdk2 DDS, e.g. lo or eth0")
    udp_host: str = param("127.0.0.1", "go1 only: IPv4 address the robot's UDP socket binds (the real Go1 is "
                                       f"{go1_wire.ROBOT_IP})")
    udp_port: int = param(go1_wire.ROBOT_PORT, "go1 only: UDP port of the robot's socket (the Go1's low-level "
                                               f"port is {go1_wire.ROBOT_PORT})")
    udp_tap_port: int = param(0, "go1 only: copy every accepted LowCmd and every LowState sent, raw, to "
                                 "127.0.0.1:<this port> for scoring (0 = off)")
    physics_dt: float = param(0.002, "physics and motor-PD step, s (<= 0.002: the drivers run PD at >= 500 Hz)")
    lowstate_rate_hz: float = param(500.0, "go2 only: rt/lowstate rate, Hz (the Go2 publishes at 500 Hz; >= 200); "
                                           "a Go1 answers each accepted LowCmd with one LowState instead")
    ground_truth_rate_hz: float = param(100.0, "ground-truth odometry rate, Hz")
    initial_pose: str = param("lying", "lying (on the floor, motors passive, as powered on) or stand (keyframe)")
    terrain: str = param("flat", "the ground: flat, or a course of surrogait_core.terrain the trainer uses (rough, "
                                 "slope, stairs: 4 m along +x from x = 0.5 m; the robot starts at the origin)")
    motor_model: str = param("driver", "when the motor PD runs: driver (every physics step, as the robot's "
                                       "drivers) or on_command (once per valid LowCmd, torque held until the "
                                       "next, as some simulator bridges; a 50 Hz stream then makes a 50 Hz PD "
                                       "loop)")
    imu_quat_noise_std: float = param(0.0, "IMU orientation noise, rad (random small rotation)")
    imu_gyro_noise_std: float = param(0.01, "gyroscope noise, rad/s")
    imu_acc_noise_std: float = param(0.05, "accelerometer noise, m/s^2")
    seed: int = param(0, "seed of the sensor noise")
    realtime_factor: float = param(1.0, "simulated seconds per wall second; 0 = as fast as possible")
    sched_fifo_priority: int = param(0, "0 = normal scheduling; 1-99 = run under SCHED_FIFO at that priority, as "
                                        "robot control processes do, so a busy machine does not slow the "
                                        "simulation (needs root or CAP_SYS_NICE)")
    duration_s: float = param(0.0, "stop after this much simulated time, s; 0 = run until SIGINT/SIGTERM")
    video_path: str = param("", "offscreen video (.mp4 or .gif); empty = no video")
    video_fps: float = param(20.0, "video frame rate, Hz (low, so rendering does not cost real time)")
    video_width: int = param(320, "video width, px")
    video_height: int = param(240, "video height, px")
    log_path: str = param("", "recording of ground truth and torques (.npz); empty = none")
    log_rate_hz: float = param(50.0, "recording rate, Hz")

    @classmethod
    def from_params(cls, values: Mapping[str, object]) -> SimNodeConfig:
        """The checked table from {name: value}; missing names take their defaults (ParamError if refused)."""
        return read_params(cls, values)

    def validate(self) -> None:
        """Values the simulator cannot run with raise ParamError (run by `read_params`)."""
        if self.robot not in ROBOTS:
            raise ParamError(f"robot {self.robot!r}: expected go2 (unitree_sdk2 DDS) or go1 (unitree_legged_sdk UDP)")
        if self.robot == "go2" and not 0 <= self.dds_domain <= 232:
            raise ParamError(f"dds_domain {self.dds_domain} must be in 0..232")
        if self.robot == "go1":
            self._validate_udp()
        try:
            self.sim.validate()
        except SimConfigError as e:
            raise ParamError(str(e)) from e
        physics_rate = 1.0 / self.sim.physics_dt_s
        if self.robot == "go2" and not 200.0 <= self.lowstate_rate_hz <= physics_rate + 1e-6:
            raise ParamError(f"lowstate_rate_hz {self.lowstate_rate_hz} must be in [200, {physics_rate:g}] "
                             "(at least 200 Hz, at most the physics rate)")
        for name in ("ground_truth_rate_hz", "log_rate_hz", "video_fps"):
            if not 0.0 < getattr(self, name) <= physics_rate:
                raise ParamError(f"{name} {getattr(self, name)} must be in (0, {physics_rate:g}]")
        if self.realtime_factor < 0.0:
            raise ParamError(f"realtime_factor {self.realtime_factor} must be >= 0 (0 = as fast as possible)")
        if not 0 <= self.sched_fifo_priority <= 99:
            raise ParamError(f"sched_fifo_priority {self.sched_fifo_priority} must be in 0..99 (0 = normal)")
        if self.sched_fifo_priority and self.realtime_factor == 0.0:
            raise ParamError("sched_fifo_priority with realtime_factor 0 would let a never-sleeping loop "
                             "monopolise a core: use normal scheduling to run as fast as possible")
        if self.duration_s < 0.0:
            raise ParamError(f"duration_s {self.duration_s} must be >= 0 (0 = until stopped)")
        if self.video_path and not self.video_path.endswith((".mp4", ".gif")):
            raise ParamError(f"video_path {self.video_path!r}: name it *.mp4 or *.gif")
        if self.log_path and not self.log_path.endswith(".npz"):
            raise ParamError(f"log_path {self.log_path!r}: the recording is an .npz file, name it *.npz")
        if self.video_width < 16 or self.video_height < 16:
            raise ParamError(f"video size {self.video_width}x{self.video_height} is too small")
        if self.robot == "go2":
            check_interface(self.network_interface)

    def _validate_udp(self) -> None:
        try:
            ipaddress.IPv4Address(self.udp_host)
        except ValueError:
            raise ParamError(f"udp_host {self.udp_host!r} must be an IPv4 address such as 127.0.0.1 (rehearsal) or "
                             f"{go1_wire.ROBOT_IP} (the robot's)") from None
        if not 1 <= self.udp_port <= 65535:
            raise ParamError(f"udp_port {self.udp_port} must be in 1..65535 (the Go1's is {go1_wire.ROBOT_PORT})")
        if not 0 <= self.udp_tap_port <= 65535:
            raise ParamError(f"udp_tap_port {self.udp_tap_port} must be in 0..65535 (0 = no tap)")
        if self.udp_tap_port == self.udp_port:
            raise ParamError(f"udp_tap_port {self.udp_tap_port} is udp_port: the tap's copies would come back to "
                             "the robot's own socket; choose another port (or 0 = no tap)")

    @functools.cached_property
    def sim(self) -> SimConfig:
        """The ROS-free simulator's configuration (robot, physics step, start pose, motor model, sensor noise)."""
        return SimConfig(
            robot=self.robot,
            physics_dt_s=self.physics_dt,
            initial_pose=self.initial_pose,
            motor_model=self.motor_model,
            terrain=self.terrain,
            imu_quat_noise_std_rad=self.imu_quat_noise_std,
            imu_gyro_noise_std=self.imu_gyro_noise_std,
            imu_acc_noise_std=self.imu_acc_noise_std,
            seed=self.seed,
        )


@dataclasses.dataclass(frozen=True)
class Go1SimNodeConfig(SimNodeConfig):
    """`go1_sim`'s table: the same parameters, a Go1 unless told otherwise."""

    robot: str = param("go1", "robot model and its wire: go1 (unitree_legged_sdk UDP) or go2 (unitree_sdk2 DDS)")


PARAMETERS = parameter_table(SimNodeConfig)  # name: (default, description)
