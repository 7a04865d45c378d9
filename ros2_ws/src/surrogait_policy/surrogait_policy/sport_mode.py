"""Handing the Go2 over from its built-in sport controller to the policy node, and back, as the vendor does.

On the robot, the vendor's locomotion service also writes motor commands; two writers on rt/lowcmd fight,
so the motion-switcher service must report no active mode before the policy node commands. Releasing it
while the robot stands drops the robot (its motors go passive under the body's weight), so the hand-over
is the vendor's: the sport controller lies the robot down first (SportClient.StandDown), the node waits
until rt/lowstate shows it lying folded and still, and only then ReleaseMode. On shutdown, after the
node's damping, the released mode can be selected again (`restore_sport_mode`): the robot is the sport
controller's again, lying.

The rehearsal simulator has no such services, so this runs only on the robot (`release_sport_mode`);
its order of calls is tested against stand-ins that record them (tests/policy/test_sport_mode.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class SportModeError(RuntimeError):
    pass


class MotionSwitcher(Protocol):
    """The part of unitree_sdk2py's MotionSwitcherClient used here."""

    def CheckMode(self) -> tuple[int, dict | None]: ...  # noqa: N802 (the SDK's names)

    def ReleaseMode(self) -> tuple[int, None]: ...  # noqa: N802

    def SelectMode(self, nameOrAlias: str) -> tuple[int, None]: ...  # noqa: N802, N803


class SportClient(Protocol):
    """The part of unitree_sdk2py's go2 SportClient used here."""

    def StandDown(self) -> int: ...  # noqa: N802


def make_motion_switcher(timeout_s: float = 5.0) -> MotionSwitcher:
    """The SDK's client (needs ChannelFactoryInitialize on the robot's interface first)."""
    from unitree_sdk2py.comm.motion_switcher.motion_switcher_client import MotionSwitcherClient

    client = MotionSwitcherClient()
    client.SetTimeout(timeout_s)
    client.Init()
    return client


def make_sport_client(timeout_s: float = 10.0) -> SportClient:
    """The SDK's sport client (needs ChannelFactoryInitialize on the robot's interface first)."""
    from unitree_sdk2py.go2.sport.sport_client import SportClient as SdkSportClient

    client = SdkSportClient()
    client.SetTimeout(timeout_s)
    client.Init()
    return client


def _active_mode(switcher: MotionSwitcher) -> str:
    code, mode = switcher.CheckMode()
    if code != 0 or mode is None:
        raise SportModeError(
            f"the motion-switcher service did not answer (code {code}); is the robot on and connected "
            "to network_interface? (in rehearsal, set release_sport_mode: false)"
        )
    return str(mode.get("name", ""))


def hand_over(switcher: MotionSwitcher, sport: SportClient, lying: Callable[[], bool], *,
              lying_timeout_s: float = 10.0, poll_s: float = 0.1, attempts: int = 10, wait_s: float = 1.0,
              sleep: Callable[[float], None] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
              log: Callable[[str], None] = print) -> str:
    """StandDown, wait until `lying()` (rt/lowstate: folded and still), then ReleaseMode until no mode is active.
    Returns the mode released ("" if none was active). SportModeError, without releasing, if the robot does
    not lie down within `lying_timeout_s`."""
    name = _active_mode(switcher)
    if not name:
        log("no sport mode active: low-level control is ours")
        return ""
    log(f"sport mode {name!r} active: lying the robot down first (StandDown)")
    code = sport.StandDown()
    if code != 0:
        raise SportModeError(f"the sport controller refused StandDown (code {code}); lie the robot down with the "
                             "remote or the app, then start again")
    deadline = monotonic() + lying_timeout_s
    while not lying():
        if monotonic() >= deadline:
            raise SportModeError(f"the robot did not lie down within {lying_timeout_s:g} s of StandDown (rt/lowstate "
                                 "does not show it folded and still); the sport mode is NOT released: check that "
                                 "nothing blocks its legs, lie it down with the remote, then start again")
        sleep(poll_s)
    log("the robot lies folded and still: releasing the sport controller")
    for _ in range(attempts):
        switcher.ReleaseMode()
        sleep(wait_s)
        if not _active_mode(switcher):
            log("sport controller released: low-level control is ours")
            return name
    raise SportModeError(f"the sport controller is still active after {attempts} release attempts; "
                         "stop it from the app and retry")


def restore_sport_mode(switcher: MotionSwitcher, name: str, log: Callable[[str], None] = print) -> None:
    """Give the robot back to the sport controller (mode `name`), after the node's damping."""
    code, _ = switcher.SelectMode(name)
    if code != 0:
        log(f"could not restore sport mode {name!r} (code {code}): select it in the app")
    else:
        log(f"sport mode {name!r} restored: the robot is the sport controller's again")

