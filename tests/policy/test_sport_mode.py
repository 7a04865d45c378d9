"""Handing the Go2 over from its sport controller as the vendor does: StandDown, wait until lying, ReleaseMode.

The motion-switcher and sport services exist only on the robot, so the SDK clients are replaced by stand-ins
that record the order of every call (the only mocks in these tests: what cannot exist here). The robot's
lying is what the policy node reads from rt/lowstate (`robot_link.lying_folded`), driven here by a stand-in
robot that lies down a few polls after StandDown.
"""

import numpy as np
import pytest

from surrogait_core.inputs.preflight import FOLDED_JOINT_POS
from surrogait_core.robot_spec import load_robot_spec
from surrogait_policy.robot_link import lying_folded
from surrogait_policy.sport_mode import SportModeError, hand_over, restore_sport_mode

STANDING = load_robot_spec("go2").default_joint_pos


class StandInRobot:
    """The robot's services as the node calls them, and its joints as rt/lowstate would report them."""

    def __init__(self, mode="normal", polls_to_lie=3, stand_down_code=0, lies_down=True, check_code=0):
        self.calls: list[str] = []
        self.mode = mode
        self.polls_to_lie = polls_to_lie
        self.stand_down_code = stand_down_code
        self.lies_down = lies_down
        self.check_code = check_code
        self.joint_pos = STANDING.copy()
        self._standing_down = False

    # MotionSwitcherClient
    def CheckMode(self):  # noqa: N802 (the SDK's names)
        self.calls.append("CheckMode")
        return (self.check_code, None) if self.check_code else (0, {"name": self.mode, "form": "0"})

    def ReleaseMode(self):  # noqa: N802
        self.calls.append("ReleaseMode")
        assert lying_folded(self.joint_pos, np.zeros(12)), "ReleaseMode while the robot is not lying"
        self.mode = ""
        return 0, None

    def SelectMode(self, name):  # noqa: N802
        self.calls.append(f"SelectMode({name})")
        self.mode = name
        return 0, None

    # SportClient
    def StandDown(self):  # noqa: N802
        self.calls.append("StandDown")
        self._standing_down = self.stand_down_code == 0 and self.lies_down
        return self.stand_down_code

    # rt/lowstate, as the node reads it
    def lying(self) -> bool:
        self.calls.append("lying?")
        if self._standing_down:
            self.polls_to_lie -= 1
            if self.polls_to_lie <= 0:
                self.joint_pos = FOLDED_JOINT_POS + 0.05
        return lying_folded(self.joint_pos, np.zeros(12))


def over(robot, **kw):
    return hand_over(robot, robot, robot.lying, sleep=lambda s: None, log=lambda m: None, **kw)


def test_stand_down_first_then_release_only_once_the_robot_lies():
    robot = StandInRobot(polls_to_lie=3)
    assert over(robot) == "normal"
    calls = robot.calls
    assert calls[:2] == ["CheckMode", "StandDown"]
    release = calls.index("ReleaseMode")
    assert calls[release - 1] == "lying?" and calls[2:release].count("lying?") == 3, calls
    assert calls[release + 1:] == ["CheckMode"]  # released: no mode active any more


def test_restored_on_shutdown_after_release():
    robot = StandInRobot()
    released = over(robot)
    restore_sport_mode(robot, released, log=lambda m: None)
    assert robot.calls[-1] == "SelectMode(normal)" and robot.mode == "normal"


def test_nothing_active_nothing_touched():
    robot = StandInRobot(mode="")
    assert over(robot) == ""
    assert robot.calls == ["CheckMode"]


def test_a_robot_that_does_not_lie_down_is_never_released():
    robot = StandInRobot(lies_down=False)
    clock = iter(np.arange(0.0, 100.0, 0.5))
    with pytest.raises(SportModeError, match="did not lie down within 2 s.*NOT released"):
        hand_over(robot, robot, robot.lying, lying_timeout_s=2.0, sleep=lambda s: None,
                  monotonic=lambda: float(next(clock)), log=lambda m: None)
    assert "ReleaseMode" not in robot.calls


def test_a_refused_stand_down_is_an_error_and_nothing_is_released():
    robot = StandInRobot(stand_down_code=3104)
    with pytest.raises(SportModeError, match="refused StandDown"):
        over(robot)
    assert "ReleaseMode" not in robot.calls


def test_no_answer_from_the_service_says_what_to_check():
    with pytest.raises(SportModeError, match="release_sport_mode: false"):
        over(StandInRobot(check_code=3104))


def test_a_controller_that_never_lets_go_is_an_error():
    robot = StandInRobot()
    robot.ReleaseMode = lambda: (robot.calls.append("ReleaseMode"), (0, None))[1]  # releases nothing
    with pytest.raises(SportModeError, match="still active after 3"):
        over(robot, attempts=3)
    assert robot.calls.index("StandDown") < robot.calls.index("ReleaseMode")
