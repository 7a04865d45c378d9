"""The policy node's link to the robot: LowCmds out, the newest LowState in, whatever wire the robot speaks.

The control loop sees one small interface (`RobotLink`); `open_link` opens the robot's wire: the Go2's
unitree_sdk2 DDS (`Go2Link`, here) or the Go1's unitree_legged_sdk UDP (`go1_link.Go1Link`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from surrogait_core.policy.policy_controller import MotorTargets, PolicyController
from surrogait_core.policy.policy_fsm import PolicyState
from surrogait_core.robot_links import UDP, robot_link
from surrogait_core.wire.latest_lowstate import LatestLowState, LowStateSample
from surrogait_policy.lowcmd_writer import LowCmdWriter
from surrogait_policy.sport_mode import make_motion_switcher, release_sport_mode

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


class Go2Link:
    """rt/lowcmd and rt/lowstate on unitree_sdk2 DDS, the built-in sport controller released first if asked."""

    def __init__(self, params: PolicyNodeParams, log: Callable[[str], None]):
        from cyclonedds.domain import DomainParticipant
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize

        # Configures the DDS domain (interface included) that the participant below joins.
        ChannelFactoryInitialize(params.dds_domain, params.network_interface)
        if params.release_sport_mode:
            release_sport_mode(make_motion_switcher(), log=log)
        self._participant = DomainParticipant(params.dds_domain)
        self._lowcmd = LowCmdWriter(self._participant)
        self._lowstate = LatestLowState(self._participant)
        log(f"unitree_sdk2 DDS domain {params.dds_domain} on {params.network_interface}")

    def write(self, targets: MotorTargets) -> None:
        self._lowcmd.write(targets)

    def take(self) -> LowStateSample | None:
        return self._lowstate.take()

    def protection_trip(self) -> str | None:
        return None  # the Go2's SDK has no protection layer of this kind

    def close(self) -> None:
        pass  # DDS entities go with the process


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
