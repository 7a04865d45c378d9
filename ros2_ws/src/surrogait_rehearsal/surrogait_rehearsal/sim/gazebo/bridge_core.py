"""What the Gazebo bridge does between Gazebo's topics and the Go2's wire, without ROS or DDS.

- `JointOrder`: Gazebo's joint names (any order, optionally scoped `model::joint`) to SDK motor slots.
- `FootFrames`: the foot frames' orientation in the world from the IMU attitude and the joint angles
  (MuJoCo kinematics of the robot's MJCF, the one description), to turn each foot's force_torque
  reading into the normal contact force the Go2's `foot_force` reports.
- `GazeboState`: the newest sample of each input, its freshness, and the robot readout a LowState
  carries.
- `CyclePacer`: when the bridge's loop runs: on each new Gazebo joint state, at most `control_rate_hz`.

All arrays handed out are in SDK order (FR, FL, RR, RL × hip, thigh, calf; legs FR, FL, RR, RL).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import re
import time
from collections.abc import Callable, Sequence

import mujoco
import numpy as np

from surrogait_core.robot_spec import SDK_LEG_ORDER, RobotSpec
from surrogait_rehearsal.sim.gazebo.topics import gazebo_joint_name
from surrogait_rehearsal.sim.mujoco.core import RobotReadout


class GazeboInputError(ValueError):
    """A Gazebo message the bridge cannot use (missing joints, arrays of the wrong length)."""


class JointOrder:
    """Maps a JointState's names to SDK motor slots by name; the mapping is cached per name list."""

    def __init__(self, spec: RobotSpec) -> None:
        self.sdk_names = tuple(gazebo_joint_name(n) for n in spec.joint_names)
        self._cache: dict[tuple[str, ...], np.ndarray] = {}

    def index(self, names: Sequence[str]) -> np.ndarray:
        """For each SDK slot, the position of its joint in `names` (GazeboInputError if one is missing)."""
        key = tuple(names)
        found = self._cache.get(key)
        if found is None:
            # gz may scope names (model::joint); the joint's own name is what the MJCF calls it.
            bare = [n.rsplit("::", 1)[-1] for n in key]
            missing = [n for n in self.sdk_names if n not in bare]
            if missing:
                raise GazeboInputError(f"joint state without {', '.join(missing)} (it has {', '.join(key) or 'none'})")
            found = np.array([bare.index(n) for n in self.sdk_names])
            self._cache[key] = found
        return found

    def to_sdk(self, names: Sequence[str], values: Sequence[float]) -> np.ndarray:
        if len(values) != len(names):
            raise GazeboInputError(f"joint state with {len(names)} names and {len(values)} values")
        return np.asarray(values, dtype=np.float64)[self.index(names)]


class FootFrames:
    """World orientation of each foot frame: the MJCF's foot geom frame (the calf's orientation), computed
    from the base attitude and the joint angles with MuJoCo's kinematics on the robot's MJCF."""

    def __init__(self, spec: RobotSpec) -> None:
        self.model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
        self.data = mujoco.MjData(self.model)
        joints = [self.model.joint(gazebo_joint_name(n)) for n in spec.joint_names]  # SDK order
        self._qpos_adr = np.array([j.qposadr[0] for j in joints])
        self._feet = np.array([self.model.geom(name).id for name in spec.foot_names])

    def rotations(self, quat_wxyz: np.ndarray, joint_pos: np.ndarray) -> np.ndarray:
        """(4, 3, 3): world from foot frame, legs in SDK order."""
        d = self.data
        d.qpos[3:7] = quat_wxyz
        d.qpos[self._qpos_adr] = joint_pos
        mujoco.mj_kinematics(self.model, d)
        return d.geom_xmat[self._feet].reshape(-1, 3, 3).copy()


def normal_foot_forces(rotations: np.ndarray, forces_foot: np.ndarray, sign: float) -> np.ndarray:
    """The ground's normal force on each foot (N, >= 0) from the force_torque readings.

    `forces_foot` (4, 3) is each sensor's force in its foot frame; `sign` is +1 when the sensor measures
    the wrench the foot applies on the calf (SDFormat's child_to_parent: the ground reaction passed up the
    leg), -1 for parent_to_child. Rotated into the world, its vertical component is the normal force on
    flat, level ground (the world go2_flat.sdf); on a slope it is the vertical part of the contact force.
    The force also carries the foot link's own weight and inertia (the SDF foot's mass, grams), so a foot
    in the air reads about zero, as the Go2's sensor; negative values (a pulled foot) read 0.
    """
    world = np.einsum("lij,lj->li", rotations, forces_foot)
    return np.maximum(sign * world[:, 2], 0.0)


@dataclasses.dataclass
class JointSample:
    pos: np.ndarray  # rad, SDK order
    vel: np.ndarray  # rad/s
    stamp_s: float  # Gazebo's simulation time of the sample (its header stamp)
    arrival_s: float  # monotonic time the bridge took it
    seq: int  # numbers the joint states taken, from 1


@dataclasses.dataclass
class ImuSample:
    quat_wxyz: np.ndarray
    gyro_b: np.ndarray  # rad/s
    accel_b: np.ndarray  # m/s², specific force (+9.81 z at rest), as the Go2's IMU and Gazebo's report it
    arrival_s: float


class GazeboState:
    """The newest Gazebo joint state, IMU sample and foot forces, and what they make of a LowState."""

    def __init__(self, spec: RobotSpec, foot_force_sign: float, timeout_s: float) -> None:
        self.spec = spec
        self.order = JointOrder(spec)
        self.feet = FootFrames(spec)
        self.foot_force_sign = foot_force_sign
        self.timeout_s = timeout_s
        self.joints: JointSample | None = None
        self.imu: ImuSample | None = None
        self.foot_forces_foot = np.zeros((len(SDK_LEG_ORDER), 3))  # each leg's newest sensor force, foot frame
        self.foot_samples = np.zeros(len(SDK_LEG_ORDER), dtype=np.int64)
        self._seq = 0

    # --- inputs ------------------------------------------------------------------------------------
    def set_joints(self, names: Sequence[str], pos: Sequence[float], vel: Sequence[float], stamp_s: float,
                   arrival_s: float) -> None:
        q, dq = self.order.to_sdk(names, pos), self.order.to_sdk(names, vel)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(dq))):
            raise GazeboInputError("joint state with non-finite values")
        self._seq += 1
        self.joints = JointSample(q, dq, stamp_s, arrival_s, self._seq)

    def set_imu(self, quat_wxyz: np.ndarray, gyro_b: np.ndarray, accel_b: np.ndarray, arrival_s: float) -> None:
        norm = float(np.linalg.norm(quat_wxyz))
        if not (np.isfinite(norm) and norm > 0.5):
            raise GazeboInputError(f"IMU orientation is not a rotation (|q| = {norm:g})")
        q = np.asarray(quat_wxyz, dtype=np.float64) / norm
        self.imu = ImuSample(q if q[0] >= 0.0 else -q, np.asarray(gyro_b, float), np.asarray(accel_b, float),
                             arrival_s)

    def set_foot_force(self, leg: int, force_foot: np.ndarray) -> None:
        self.foot_forces_foot[leg] = force_foot
        self.foot_samples[leg] += 1

    # --- judgement ---------------------------------------------------------------------------------
    def stale_reason(self, now_s: float) -> str | None:
        """Why the state cannot be used now (None: fresh). Joint states and the IMU must both be recent."""
        if self.joints is None:
            return "no joint state from Gazebo yet"
        if self.imu is None:
            return "no IMU sample from Gazebo yet"
        for what, arrival in (("joint state", self.joints.arrival_s), ("IMU sample", self.imu.arrival_s)):
            age = now_s - arrival
            if age > self.timeout_s:
                return f"no {what} from Gazebo for {age * 1e3:.0f} ms (state_timeout_s {self.timeout_s:g})"
        return None

    def foot_force_n(self) -> np.ndarray:
        assert self.joints is not None and self.imu is not None
        rotations = self.feet.rotations(self.imu.quat_wxyz, self.joints.pos)
        return normal_foot_forces(rotations, self.foot_forces_foot, self.foot_force_sign)

    def readout(self, applied_tau: np.ndarray) -> RobotReadout:
        """The LowState content: IMU and joints as Gazebo reported them; `tau_est` is the torque the bridge
        commanded (what the Go2's drivers report is the torque they apply)."""
        assert self.joints is not None and self.imu is not None
        return RobotReadout(quat_wxyz=self.imu.quat_wxyz, gyro_b=self.imu.gyro_b, accel_b=self.imu.accel_b,
                            joint_pos=self.joints.pos, joint_vel=self.joints.vel, joint_tau_est=applied_tau,
                            foot_force_n=self.foot_force_n())


_STALL_LINE = re.compile(r"the control loop stalled for (\d+) ms")


def logged_stalls_ms(log: str) -> list[int]:
    """The stalls (ms) a bridge's log reports (CyclePacer.stall_message), in order."""
    return [int(ms) for ms in _STALL_LINE.findall(log)]


def tick_ms(stamp_s: float) -> int:
    """The LowState tick: Gazebo's simulation time of the joint state in ms (the estimator and the policy's
    gait clock run on the tick, so it must be the time the physics went through, not the bridge's clock)."""
    return int(round(1000.0 * stamp_s)) & 0xFFFFFFFF


class CyclePacer:
    """When the bridge's cycles start: as soon as Gazebo has a new joint state, but never before the cycle's slot
    on a grid of one period (so `control_rate_hz` caps the rate) and, with no new state, one period after the
    slot (so LowCmds, freshness and diagnostics are still served while Gazebo is silent).

    A grid, not "one period after the previous start": Gazebo publishes at the control rate, so with the
    latter every late start pushed all later ones back, the loop could never catch up, and states went
    untaken (measured: 430-448 cycles/s against a 500 Hz stream on a busy 2-core machine, less PD than the
    walk needs). On the grid a late cycle is followed by an early one; a loop more than a period behind
    resumes from the current slot rather than running a burst.

    Started by the state rather than by a free-running clock, each cycle computes its forces from a joint state
    a fraction of a millisecond old; a free-running loop adds up to one of its periods of latency to the motor
    loop, and the walk measured here through the stand-in was not robust to that (README, "Gazebo rehearsal").
    `wait_for_state(timeout_s)` blocks until a joint state is ready (or the time-out); clock and sleep are
    injectable for tests.
    """

    RATE_WINDOW = 512
    STALL_PERIODS = 10  # a gap between cycle starts this many periods long is a stall, logged and diagnosed

    def __init__(self, period_s: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.period_s = period_s
        self._clock, self._sleep = clock, sleep
        self._prev: float | None = None
        self._slot = 0.0  # the grid slot of the last cycle
        self._starts: collections.deque[float] = collections.deque(maxlen=self.RATE_WINDOW)
        self.gap_max_s = 0.0  # the longest time between two cycle starts since `reset_gap`
        self.last_gap_s = 0.0  # the time between the last two cycle starts

    def wait(self, wait_for_state: Callable[[float], bool]) -> float:
        """Until the next cycle is due; returns its start time."""
        if self._prev is not None:
            slot = self._slot + self.period_s
            now = self._clock()
            if now - slot > self.period_s:
                slot += math.floor((now - slot) / self.period_s) * self.period_s
            if now < slot:
                self._sleep(slot - now)
            wait_for_state(max(0.0, slot + self.period_s - self._clock()))
            self._slot = slot
        start = self._clock()
        if self._prev is None:
            self._slot = start
        else:
            self.last_gap_s = start - self._prev
            self.gap_max_s = max(self.gap_max_s, self.last_gap_s)
        self._prev = start
        self._starts.append(start)
        return start

    def is_stall(self, gap_s: float) -> bool:
        return gap_s > self.STALL_PERIODS * self.period_s

    def stall_message(self, gap_s: float) -> str:
        """The bridge's log line for a stall (`logged_stalls_ms` reads it back)."""
        return f"the control loop stalled for {gap_s * 1e3:.0f} ms (period {self.period_s * 1e3:g} ms)"

    def reset_gap(self) -> float:
        gap, self.gap_max_s = self.gap_max_s, 0.0
        return gap

    def measured_rate_hz(self) -> float:
        """Cycles per second over the last RATE_WINDOW cycles (NaN before two)."""
        s = self._starts
        if len(s) < 2 or s[-1] <= s[0]:
            return math.nan
        return (len(s) - 1) / (s[-1] - s[0])
