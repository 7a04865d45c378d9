"""The policy node's link to the robot: LowCmds out, the newest LowState in, whatever wire the robot speaks.

The control loop sees one small interface (`RobotLink`); `open_link` opens the robot's wire: the Go2's
unitree_sdk2 DDS (`Go2Link`, here) or the Go1's unitree_legged_sdk UDP (`go1_link.Go1Link`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np

from surrogait_core.inputs.preflight import FOLDED_JOINT_POS, FOLDED_TOLERANCE_RAD, PreflightCapture
from surrogait_core.policy.policy_controller import MotorTargets, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.robot_links import UDP, robot_link
from surrogait_core.wire.latest_lowstate import LatestLowState, LowStateSample
from surrogait_core.wire.lowstate_capture import LowStateCapture
from surrogait_policy.lowcmd_writer import LowCmdWriter
from surrogait_policy.sport_mode import hand_over, make_motion_switcher, make_sport_client, restore_sport_mode

if TYPE_CHECKING:
    from surrogait_policy.params import PolicyNodeParams


class LinkError(RuntimeError):
    """The robot (or the safety monitor in front of it) cannot be reached as configured; the message says
    what to check."""


class RobotLink(Protocol):
    def write(self, targets: MotorTargets) -> None:
        """Servo commands for the 12 motors (SDK order); the same targets object again re-sends them."""

    def take(self) -> LowStateSample | None:
        """The newest LowState not taken before, or None if none arrived since the last call."""

    def protection_trip(self) -> str | None:
        """Why the robot SDK's own protection wants the motors damped now (a cause for the log), or None."""

    def close(self) -> None:
        """Release the wire (after the last damping LowCmd)."""


LOWSTATE_DEPTH = 32  # samples DDS keeps between the control loop's takes (10 arrive per 20 ms at 500 Hz): counted
LYING_MAX_JOINT_VEL = 0.2  # rad/s: "still" for the sport-mode hand-over


def lying_folded(joint_pos: np.ndarray, joint_vel: np.ndarray) -> bool:
    """Does the robot lie folded and still (the pre-flight's envelope)?"""
    return bool(np.all(np.abs(joint_pos - FOLDED_JOINT_POS) <= FOLDED_TOLERANCE_RAD)
                and np.all(np.abs(joint_vel) <= LYING_MAX_JOINT_VEL))


class Go2Link:
    """rt/lowcmd and rt/lowstate on unitree_sdk2 DDS, the robot handed over from the sport controller first if asked."""

    def __init__(self, params: PolicyNodeParams, log: Callable[[str], None]):
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize

        # Configures the DDS domain (interface included) that the participant below joins.
        ChannelFactoryInitialize(params.dds_domain, params.network_interface)
        self._participant = DomainParticipant(params.dds_domain)
        self._lowstate = LatestLowState(self._participant, depth=LOWSTATE_DEPTH, check_crc=True)
        self._capture = LowStateCapture(self._participant)
        self._log = log
        self._switcher = None
        self._released_mode = ""
        self._restore = params.restore_sport_mode
        if params.release_sport_mode:
            self._switcher = make_motion_switcher()
            self._released_mode = hand_over(self._switcher, make_sport_client(), self._lying, log=log,
                                            lying_timeout_s=params.sport_mode_lying_timeout_s)
        self._lowcmd = LowCmdWriter(self._participant)
        log(f"unitree_sdk2 DDS domain {params.dds_domain} on {params.network_interface}")

    def _lying(self) -> bool:
        sample = self._lowstate.take()
        return sample is not None and lying_folded(sample.state.joint_pos, sample.state.joint_vel)

    def preflight_capture(self, duration_s: float) -> PreflightCapture:
        """Every rt/lowstate sample of the next `duration_s`, with its arrival, delay and CRC (its own reader)."""
        return self._capture.capture(duration_s)

    def write(self, targets: MotorTargets) -> None:
        self._lowcmd.write(targets)

    def take(self) -> LowStateSample | None:
        return self._lowstate.take()

    def protection_trip(self) -> str | None:
        return None  # the Go2's SDK has no protection layer of this kind

    def close(self) -> None:
        # DDS entities go with the process; the sport controller gets the robot back if asked (after damping).
        if self._restore and self._switcher is not None and self._released_mode:
            restore_sport_mode(self._switcher, self._released_mode, self._log)


def open_link(params: PolicyNodeParams, damping: MotorTargets, command_period_s: float,
              log: Callable[[str], None]) -> RobotLink:
    """The link to `params.robot`, up. The Go1's is up once the robot answers: until then it streams
    `damping` every `command_period_s` (LinkError if nothing answers within robot_reply_timeout_s)."""
    if robot_link(params.robot).protocol == UDP:
        from surrogait_policy.go1_link import open_go1_link

        return open_go1_link(params, damping, command_period_s, log)
    return Go2Link(params, log)


def damp_on_protection(link: RobotLink, controller: PolicyController, now_s: float) -> str | None:
    """One policy step's check of the robot SDK's protection: a trip asks the controller to damp. Returns the
    trip's cause, or None. Not checked in DAMP: it latches, and the SDK prints a line for every trip."""
    if controller.state is PolicyState.DAMP:
        return None
    cause = link.protection_trip()
    if cause is not None:
        controller.request("damp", now_s, source=cause)
    return cause
