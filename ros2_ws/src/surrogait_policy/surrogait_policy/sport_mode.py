"""Releasing the Go2's built-in sport controller before taking low-level control.

On the robot, the vendor's locomotion service also writes motor commands; two writers on
rt/lowcmd fight. The motion-switcher service must report no active mode before the policy node
starts commanding. The rehearsal simulator has no such service, so this runs only on the robot
(parameter `release_sport_mode`); its logic is unit-tested against a stand-in client.
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


def make_motion_switcher(timeout_s: float = 5.0) -> MotionSwitcher:
    """The SDK's client (needs ChannelFactoryInitialize on the robot's interface first)."""
    from unitree_sdk2py.comm.motion_switcher.motion_switcher_client import MotionSwitcherClient

    client = MotionSwitcherClient()
    client.SetTimeout(timeout_s)
    client.Init()
    return client


def release_sport_mode(client: MotionSwitcher, attempts: int = 10, wait_s: float = 1.0,
                       sleep: Callable[[float], None] = time.sleep, log: Callable[[str], None] = print) -> None:
    """Release whatever mode the motion switcher runs (e.g. "normal"), until it reports none."""
    for _ in range(attempts):
        code, mode = client.CheckMode()
        if code != 0 or mode is None:
            raise SportModeError(
                f"the motion-switcher service did not answer (code {code}); is the robot on and connected "
                "to network_interface? (in rehearsal, set release_sport_mode: false)"
            )
        name = mode.get("name", "")
        if not name:
            log("sport controller released: low-level control is ours")
            return
        log(f"releasing the built-in sport controller (mode {name!r})")
        client.ReleaseMode()
        sleep(wait_s)
    raise SportModeError(f"the sport controller is still active after {attempts} release attempts; "
                         "stop it from the app and retry")
