"""A node's participant goes on UDP alone, discovery unchanged, only where that changes nothing else: Fast DDS,
no profile or static peers of the user's, discovery on this host or the subnet."""

import pytest

from surrogait_core.runtime.dds_transport import (
    ANNOUNCEMENTS_PROFILE,
    LOCALHOST_PROFILE,
    SUBNET_PROFILE,
    fast_dds_2,
    frequent_announcements,
    library_dirs,
    use_udp_alone,
)


def profile_env(profile) -> dict[str, str]:
    return {"FASTDDS_DEFAULT_PROFILES_FILE": str(profile)}  # Fast DDS 3's variable


def test_on_localhost_it_becomes_the_same_discovery_over_udp_alone():
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    assert "UDP alone" in use_udp_alone(env, dirs=[])
    assert env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT", **profile_env(LOCALHOST_PROFILE)}
    text = LOCALHOST_PROFILE.read_text()
    assert "<useBuiltinTransports>false</useBuiltinTransports>" in text and "<type>UDPv4</type>" in text
    assert "127.0.0.1" in text and "SHM" not in text.split("-->")[1]


@pytest.mark.parametrize("env", [{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, {}])
def test_on_the_subnet_the_range_stays_and_shared_memory_goes(env):
    """SUBNET is Jazzy's default, the robot's case: rmw_fastrtps honours a default profile there."""
    before = dict(env)
    assert "UDP alone" in use_udp_alone(env, dirs=[])
    assert env == {**before, **profile_env(SUBNET_PROFILE)}
    text = SUBNET_PROFILE.read_text()
    assert "<useBuiltinTransports>false</useBuiltinTransports>" in text and "<type>UDPv4</type>" in text
    assert "127.0.0.1" not in text and "initialPeersList" not in text


@pytest.mark.parametrize("env", [
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "FASTDDS_DEFAULT_PROFILES_FILE": "/home/me/mine.xml"},
    {"FASTRTPS_DEFAULT_PROFILES_FILE": "/home/me/mine.xml"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_STATIC_PEERS": "192.168.1.20"},
])
def test_anything_else_is_left_as_the_user_set_it(env):
    before = dict(env)
    assert "left" in use_udp_alone(env)
    assert env == before


def test_fast_dds_2_gets_its_own_variable_and_fast_dds_3_is_not_warned_about_it(tmp_path):
    """Jazzy's Fast DDS 2.14 reads FASTRTPS_DEFAULT_PROFILES_FILE only; Kilted's Fast DDS 3 warns at every start
    that it is deprecated, so it is set only where Fast DDS 2 is installed."""
    jazzy, kilted = tmp_path / "jazzy" / "lib", tmp_path / "kilted" / "lib"
    jazzy.mkdir(parents=True), kilted.mkdir(parents=True)
    (jazzy / "libfastrtps.so.2.14").touch(), (kilted / "libfastdds.so.3.2").touch()
    assert fast_dds_2([jazzy]) and not fast_dds_2([kilted]) and not fast_dds_2([tmp_path / "nowhere"])
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    use_udp_alone(env, dirs=[jazzy])
    assert env["FASTRTPS_DEFAULT_PROFILES_FILE"] == env["FASTDDS_DEFAULT_PROFILES_FILE"] == str(LOCALHOST_PROFILE)
    # found where apt installs ROS (AMENT_PREFIX_PATH's lib/) or on LD_LIBRARY_PATH
    dirs = library_dirs({"AMENT_PREFIX_PATH": str(tmp_path / "jazzy"), "LD_LIBRARY_PATH": "/x"})
    assert jazzy in dirs and fast_dds_2(dirs)


def announcement_period_s(profile) -> float:
    """The participant's announcement period in a Fast DDS profile (builtin/discovery_config/leaseAnnouncement)."""
    import xml.etree.ElementTree as ET

    ns = {"f": "http://www.eprosima.com"}
    lease = ET.parse(profile).getroot().find(".//f:builtin/f:discovery_config/f:leaseAnnouncement", ns)
    return int(lease.find("f:sec", ns).text) + 1e-9 * int(lease.find("f:nanosec", ns).text)


def test_on_localhost_the_nodes_and_the_operator_announce_themselves_every_half_second():
    """A newcomer misses a settled peer's one answer now and then (it is sent before the newcomer listens) and then
    finds the peer only at the peer's next periodic announcement: Fast DDS's 3 s put the simulator's ground truth
    at the operator 3.6 s after a rehearsal's start in 11 of 20 start-ups (dds_transport's docstring)."""
    assert announcement_period_s(LOCALHOST_PROFILE) == announcement_period_s(ANNOUNCEMENTS_PROFILE) == 0.5
    # the operator's profile changes the period alone: its transports and discovery stay rmw_fastrtps's
    text = ANNOUNCEMENTS_PROFILE.read_text().split("-->")[1]
    assert "Transports" not in text and "initialPeersList" not in text and "Locator" not in text


def test_the_operator_gets_the_profile_while_its_participant_is_made_and_started_processes_do_not(tmp_path):
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    with frequent_announcements(env, dirs=[]) as applied:
        assert applied and env == {**env, **profile_env(ANNOUNCEMENTS_PROFILE)}
    assert env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}  # what child_env copies for the nodes
    jazzy = tmp_path / "lib"
    jazzy.mkdir()
    (jazzy / "libfastrtps.so.2.14").touch()
    with frequent_announcements(env, dirs=[jazzy]):
        assert env["FASTRTPS_DEFAULT_PROFILES_FILE"] == env["FASTDDS_DEFAULT_PROFILES_FILE"]
    assert env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


@pytest.mark.parametrize("env", [
    {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
    {"FASTDDS_DEFAULT_PROFILES_FILE": "/home/me/mine.xml"},
    {"FASTRTPS_DEFAULT_PROFILES_FILE": "/home/me/mine.xml"},
])
def test_the_operator_leaves_another_middleware_or_the_users_profile_alone(env):
    before = dict(env)
    with frequent_announcements(env, dirs=[]) as applied:
        assert not applied and env == before
    assert env == before
