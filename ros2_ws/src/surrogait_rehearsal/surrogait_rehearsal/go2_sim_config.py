"""The simulator process's parameters: names, defaults, and the checks that give clear errors.

ROS-free: the node declares exactly these parameters (name, default, description) and hands the
values to `SimNodeConfig.from_params`, which the tests also use directly.
"""

from __future__ import annotations

import dataclasses

from surrogait_core.network_interface import interface_problem
from surrogait_core.robot_spec import ROBOTS
from surrogait_rehearsal.go2_sim_core import SimConfig, SimConfigError

# name: (default, description). The default's type is the parameter's type.
PARAMETERS: dict[str, tuple[object, str]] = {
    "robot": ("go2", "robot model; only go2 speaks unitree_sdk2 DDS"),
    "dds_domain": (1, "DDS domain of rt/lowstate and rt/lowcmd (the robot uses 0; simulators conventionally 1)"),
    "network_interface": ("lo", "network interface for unitree_sdk2 DDS, e.g. lo or eth0"),
    "physics_dt": (0.002, "physics and motor-PD step, s (<= 0.002: the drivers run PD at >= 500 Hz)"),
    "lowstate_rate_hz": (500.0, "rt/lowstate rate, Hz (the Go2 publishes at 500 Hz; >= 200)"),
    "ground_truth_rate_hz": (100.0, "ground-truth odometry rate, Hz"),
    "initial_pose": ("lying", "lying (on the floor, motors passive, as powered on) or stand (keyframe)"),
    "motor_model": ("driver", "when the motor PD runs: driver (every physics step, as the robot's drivers) or "
                              "on_command (once per valid LowCmd, torque held until the next, as some simulator "
                              "bridges; a 50 Hz stream then makes a 50 Hz PD loop)"),
    "imu_quat_noise_std": (0.0, "IMU orientation noise, rad (random small rotation)"),
    "imu_gyro_noise_std": (0.01, "gyroscope noise, rad/s"),
    "imu_acc_noise_std": (0.05, "accelerometer noise, m/s^2"),
    "seed": (0, "seed of the sensor noise"),
    "realtime_factor": (1.0, "simulated seconds per wall second; 0 = as fast as possible"),
    "sched_fifo_priority": (0, "0 = normal scheduling; 1-99 = run under SCHED_FIFO at that priority, as robot "
                               "control processes do, so a busy machine does not slow the simulation (needs root "
                               "or CAP_SYS_NICE)"),
    "duration_s": (0.0, "stop after this much simulated time, s; 0 = run until SIGINT/SIGTERM"),
    "video_path": ("", "offscreen video (.mp4 or .gif); empty = no video"),
    "video_fps": (20.0, "video frame rate, Hz (low, so rendering does not cost real time)"),
    "video_width": (320, "video width, px"),
    "video_height": (240, "video height, px"),
    "log_path": ("", "recording of ground truth and torques (.npz); empty = none"),
    "log_rate_hz": (50.0, "recording rate, Hz"),
}


class ParamError(ValueError):
    """A parameter value the simulator cannot run with; the message says what to change."""


def check_interface(name: str) -> None:
    if (problem := interface_problem(name)) is not None:
        raise ParamError(problem)


@dataclasses.dataclass
class SimNodeConfig:
    sim: SimConfig
    dds_domain: int
    network_interface: str
    lowstate_rate_hz: float
    ground_truth_rate_hz: float
    realtime_factor: float
    sched_fifo_priority: int
    duration_s: float
    video_path: str
    video_fps: float
    video_width: int
    video_height: int
    log_path: str
    log_rate_hz: float

    @classmethod
    def from_params(cls, p: dict[str, object]) -> SimNodeConfig:
        p = {**{k: v for k, (v, _) in PARAMETERS.items()}, **p}
        unknown = set(p) - set(PARAMETERS)
        if unknown:
            raise ParamError(f"unknown parameters {sorted(unknown)}; known: {', '.join(PARAMETERS)}")
        if p["robot"] != "go2":
            hint = "" if p["robot"] not in ROBOTS else " (the Go1 speaks a UDP protocol, not unitree_sdk2 DDS)"
            raise ParamError(f"robot {p['robot']!r}: this simulator is a Go2{hint}")
        if not 0 <= int(p["dds_domain"]) <= 232:
            raise ParamError(f"dds_domain {p['dds_domain']} must be in 0..232")
        sim = SimConfig(
            robot=str(p["robot"]),
            physics_dt_s=float(p["physics_dt"]),
            initial_pose=str(p["initial_pose"]),
            motor_model=str(p["motor_model"]),
            imu_quat_noise_std_rad=float(p["imu_quat_noise_std"]),
            imu_gyro_noise_std=float(p["imu_gyro_noise_std"]),
            imu_acc_noise_std=float(p["imu_acc_noise_std"]),
            seed=int(p["seed"]),
        )
        try:
            sim.validate()
        except SimConfigError as e:
            raise ParamError(str(e)) from e
        physics_rate = 1.0 / sim.physics_dt_s
        if not 200.0 <= float(p["lowstate_rate_hz"]) <= physics_rate + 1e-6:
            raise ParamError(f"lowstate_rate_hz {p['lowstate_rate_hz']} must be in [200, {physics_rate:g}] "
                             "(at least 200 Hz, at most the physics rate)")
        for name in ("ground_truth_rate_hz", "log_rate_hz", "video_fps"):
            if not 0.0 < float(p[name]) <= physics_rate:
                raise ParamError(f"{name} {p[name]} must be in (0, {physics_rate:g}]")
        if float(p["realtime_factor"]) < 0.0:
            raise ParamError(f"realtime_factor {p['realtime_factor']} must be >= 0 (0 = as fast as possible)")
        if not 0 <= int(p["sched_fifo_priority"]) <= 99:
            raise ParamError(f"sched_fifo_priority {p['sched_fifo_priority']} must be in 0..99 (0 = normal)")
        if int(p["sched_fifo_priority"]) and float(p["realtime_factor"]) == 0.0:
            raise ParamError("sched_fifo_priority with realtime_factor 0 would let a never-sleeping loop "
                             "monopolise a core: use normal scheduling to run as fast as possible")
        if float(p["duration_s"]) < 0.0:
            raise ParamError(f"duration_s {p['duration_s']} must be >= 0 (0 = until stopped)")
        video_path, log_path = str(p["video_path"]), str(p["log_path"])
        if video_path and not video_path.endswith((".mp4", ".gif")):
            raise ParamError(f"video_path {video_path!r}: name it *.mp4 or *.gif")
        if log_path and not log_path.endswith(".npz"):
            raise ParamError(f"log_path {log_path!r}: the recording is an .npz file, name it *.npz")
        if int(p["video_width"]) < 16 or int(p["video_height"]) < 16:
            raise ParamError(f"video size {p['video_width']}x{p['video_height']} is too small")
        check_interface(str(p["network_interface"]))
        return cls(
            sim=sim,
            dds_domain=int(p["dds_domain"]),
            network_interface=str(p["network_interface"]),
            lowstate_rate_hz=float(p["lowstate_rate_hz"]),
            ground_truth_rate_hz=float(p["ground_truth_rate_hz"]),
            realtime_factor=float(p["realtime_factor"]),
            sched_fifo_priority=int(p["sched_fifo_priority"]),
            duration_s=float(p["duration_s"]),
            video_path=video_path,
            video_fps=float(p["video_fps"]),
            video_width=int(p["video_width"]),
            video_height=int(p["video_height"]),
            log_path=log_path,
            log_rate_hz=float(p["log_rate_hz"]),
        )
