"""Releasing the Go2's sport controller. The motion-switcher service exists only on the robot, so
the SDK client is replaced by a stand-in with the same two calls (the only mock in these tests)."""

import pytest

from surrogait_policy.sport_mode import SportModeError, release_sport_mode


class FakeMotionSwitcher:
    def __init__(self, modes, code=0):
        self.modes = list(modes)  # what CheckMode reports, call after call
        self.code = code
        self.releases = 0

    def CheckMode(self):  # noqa: N802 (the SDK's names)
        if self.code != 0:
            return self.code, None
        return 0, {"name": self.modes[min(self.releases, len(self.modes) - 1)], "form": "0"}

    def ReleaseMode(self):  # noqa: N802
        self.releases += 1
        return 0, None


def test_releases_until_no_mode_is_active():
    client = FakeMotionSwitcher(["normal", "normal", ""])
    messages = []
    release_sport_mode(client, sleep=lambda s: None, log=messages.append)
    assert client.releases == 2
    assert "released" in messages[-1]


def test_nothing_to_release():
    client = FakeMotionSwitcher([""])
    release_sport_mode(client, sleep=lambda s: None, log=lambda m: None)
    assert client.releases == 0


def test_a_controller_that_never_lets_go_is_an_error():
    client = FakeMotionSwitcher(["normal"])
    with pytest.raises(SportModeError, match="still active after 3"):
        release_sport_mode(client, attempts=3, sleep=lambda s: None, log=lambda m: None)


def test_no_answer_from_the_service_says_what_to_check():
    with pytest.raises(SportModeError, match="release_sport_mode: false"):
        release_sport_mode(FakeMotionSwitcher([""], code=3104), sleep=lambda s: None, log=lambda m: None)
