"""What a rehearsal's robot side (go2_sim, go1_sim, gazebo_bridge) takes from the ROS side for its
LowState: the operator's gamepad (sim/gamepad) and the fault-injection switch (sim/lowstate_enabled).

ROS callbacks set them on the executor thread; the physics or control loop reads them under `lock`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from surrogait_core.wire import go2_wire

NO_GAMEPAD = [0] * 40


class RobotSideInputs:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lowstate_enabled = True
        self.wireless_remote = list(NO_GAMEPAD)

    def set_gamepad(self, axes: Sequence[float], buttons: Sequence[int]) -> None:
        """A sensor_msgs/Joy's axes and buttons as the gamepad bytes of the next LowStates."""
        raw = go2_wire.wireless_remote_from_joy(axes, buttons)
        with self.lock:
            self.wireless_remote = raw

    def set_lowstate_enabled(self, enabled: bool, stream: str) -> str:
        """Start or stop the LowState stream (`stream` names it); the message for the caller."""
        with self.lock:
            self.lowstate_enabled = bool(enabled)
        return f"{stream} {'enabled' if enabled else 'stopped'}"
