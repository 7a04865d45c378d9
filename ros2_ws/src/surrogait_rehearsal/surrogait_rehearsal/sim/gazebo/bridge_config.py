"""The Gazebo bridge's parameters: one table (`GazeboBridgeConfig`), read and checked without ROS.

The node declares exactly these (`surrogait_core.runtime.ros_node.declare_params`); tests build the
same table from a dict with `GazeboBridgeConfig.from_params`. Go2 only: the bridge plays the Go2's
end of unitree_sdk2 DDS (the Go1's UDP wire has no Gazebo rehearsal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from surrogait_core.runtime.node_params import ParamError, check_interface, param, parameter_table, read_params
from surrogait_rehearsal.sim.gazebo.topics import TOPIC_PARAMETERS, GazeboTopics, TopicError

FOOT_FORCE_DIRECTIONS = {
    # SDFormat's <measure_direction> of the foot force_torque sensors -> sign of the vertical force that
    # means "the ground pushes the foot up".
    "child_to_parent": 1.0,  # the wrench the foot (child) applies on the calf (parent): SDFormat's default
    "parent_to_child": -1.0,  # the wrench the calf applies on the foot
}
# The rate. Measured on this 2-core machine (launch/README.md "Gazebo rehearsal"): a bridge cycle costs
# ~0.6-1 ms of CPU beside the rehearsal (12 Float64 publishes ~0.12-0.3 ms of it), so 1 kHz is the ceiling.
# Each cycle starts on a new Gazebo joint state, so a force acts one physics step after the state it comes from
# and is held until the next cycle. The floor is what walked: through the stand-in (all processes), the shipped
# policy's 1.0 m/s walk tripped the safety monitor's calf speed limit (20.4-20.8 > 20.06 rad/s) in 2 of 2 runs
# with the PD at 125 Hz, passed 4 of 7 at 250 Hz (some lost to 50 ms real-time stalls) and 6 of 6 at 500 Hz
# (the default, and the Go2 SDF's joint-state rate). In lockstep, without the processes' jitter, even 125 Hz walks
# (tests/rehearsal_sim/test_gazebo_bridge_core.py runs the floor).
MAX_CONTROL_RATE_HZ = 1000.0
MIN_CONTROL_RATE_HZ = 250.0
DEFAULT_CONTROL_RATE_HZ = 500.0
# The LowState stream costs the bridge (IMU, foot kinematics, CRC, DDS) and every node that reads it: at 500 Hz
# the real-time processes of the rehearsal used ~184 % of the 2 cores, and the kernel's real-time throttling
# (95 % of each CPU) stalled them all for 50 ms at a time, which the safety monitor rightly calls a silent
# robot; at 250 Hz ~140 %. The nodes' time rules count control periods (20 ms), not LowStates.
DEFAULT_LOWSTATE_RATE_HZ = 250.0
MIN_LOWSTATE_RATE_HZ = 100.0


def _topic(name: str):
    default, description = TOPIC_PARAMETERS[name]
    return param(default, description)


@dataclasses.dataclass(frozen=True)
class GazeboBridgeConfig:
    dds_domain: int = param(1, "DDS domain of rt/lowstate and rt/lowcmd (the robot uses 0; rehearsals 1)")
    network_interface: str = param("lo", "network interface for unitree_sdk2 DDS, e.g. lo")
    control_rate_hz: float = param(DEFAULT_CONTROL_RATE_HZ, "the most cycles per second: each cycle (started by a "
                                                             "new Gazebo joint state) runs the motor PD from the "
                                                             "latest valid LowCmd and sends 12 joint forces, which "
                                                             "Gazebo holds until the next, Hz "
                                                             f"({MIN_CONTROL_RATE_HZ:g}-{MAX_CONTROL_RATE_HZ:g})")
    lowstate_rate_hz: float = param(DEFAULT_LOWSTATE_RATE_HZ, "rt/lowstate, at most, Hz of Gazebo's time: one per new "
                                                               "joint state, no closer than this (the Go2 sends 500 "
                                                               f"Hz; {MIN_LOWSTATE_RATE_HZ:g} to control_rate_hz)")
    state_timeout_s: float = param(0.1, "no new Gazebo joint state or IMU sample for this long: rt/lowstate stops "
                                        "(the safety monitor sees a silent robot) and zero forces are sent once, s")
    foot_force_measure_direction: str = param("child_to_parent", "the foot force_torque sensors' SDF "
                                                                 "<measure_direction>: child_to_parent (SDFormat's "
                                                                 "default) or parent_to_child")
    joint_states_topic: str = _topic("joint_states_topic")
    imu_topic: str = _topic("imu_topic")
    foot_force_topic: str = _topic("foot_force_topic")
    odometry_topic: str = _topic("odometry_topic")
    joint_force_topic: str = _topic("joint_force_topic")
    sched_fifo_priority: int = param(0, "0 = normal scheduling; 1-99 = SCHED_FIFO at that priority (the bridge plays "
                                        "the robot's motor drivers; needs root or CAP_SYS_NICE, else a warning)")

    @classmethod
    def from_params(cls, values: Mapping[str, object]) -> GazeboBridgeConfig:
        """The checked table from {name: value}; missing names take their defaults (ParamError if refused)."""
        return read_params(cls, values)

    def validate(self) -> None:
        if not 0 <= self.dds_domain <= 232:
            raise ParamError(f"dds_domain {self.dds_domain} must be in 0..232")
        if not MIN_CONTROL_RATE_HZ <= self.control_rate_hz <= MAX_CONTROL_RATE_HZ:
            raise ParamError(f"control_rate_hz {self.control_rate_hz} must be in [{MIN_CONTROL_RATE_HZ:g}, "
                             f"{MAX_CONTROL_RATE_HZ:g}] (see the node's docstring for what was measured)")
        if not MIN_LOWSTATE_RATE_HZ <= self.lowstate_rate_hz <= self.control_rate_hz:
            raise ParamError(f"lowstate_rate_hz {self.lowstate_rate_hz} must be in [{MIN_LOWSTATE_RATE_HZ:g}, "
                             f"control_rate_hz {self.control_rate_hz:g}]")
        if not 2.0 / self.control_rate_hz <= self.state_timeout_s <= 1.0:
            raise ParamError(f"state_timeout_s {self.state_timeout_s} must be in [2 control periods "
                             f"({2.0 / self.control_rate_hz:g} s), 1 s]")
        if self.foot_force_measure_direction not in FOOT_FORCE_DIRECTIONS:
            raise ParamError(f"foot_force_measure_direction {self.foot_force_measure_direction!r}: expected one of "
                             f"{', '.join(FOOT_FORCE_DIRECTIONS)} (the SDF sensors' <measure_direction>)")
        if not 0 <= self.sched_fifo_priority <= 99:
            raise ParamError(f"sched_fifo_priority {self.sched_fifo_priority} must be in 0..99 (0 = normal)")
        try:
            GazeboTopics.from_params(self)
        except TopicError as e:
            raise ParamError(str(e)) from e
        check_interface(self.network_interface)

    @property
    def topics(self) -> GazeboTopics:
        return GazeboTopics.from_params(self)

    @property
    def foot_force_sign(self) -> float:
        return FOOT_FORCE_DIRECTIONS[self.foot_force_measure_direction]


PARAMETERS = parameter_table(GazeboBridgeConfig)  # name: (default, description)
