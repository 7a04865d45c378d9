"""A node's participant goes on UDP alone, discovery unchanged, only where that changes nothing else: Fast DDS,
no profile or static peers of the user's, discovery on this host or the subnet."""

import pytest

from surrogait_core.runtime.dds_transport import LOCALHOST_PROFILE, PROFILE_VARS, SUBNET_PROFILE, use_udp_alone


def profile_env(profile) -> dict[str, str]:
    return {var: str(profile) for var in PROFILE_VARS}  # Fast DDS 3 and Fast DDS 2 each read one


def test_on_localhost_it_becomes_the_same_discovery_over_udp_alone():
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    assert "UDP alone" in use_udp_alone(env)
    assert env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT", **profile_env(LOCALHOST_PROFILE)}
    text = LOCALHOST_PROFILE.read_text()
    assert "<useBuiltinTransports>false</useBuiltinTransports>" in text and "<type>UDPv4</type>" in text
    assert "127.0.0.1" in text and "SHM" not in text.split("-->")[1]


@pytest.mark.parametrize("env", [{"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"}, {}])
def test_on_the_subnet_the_range_stays_and_shared_memory_goes(env):
    """SUBNET is Jazzy's default, the robot's case: rmw_fastrtps honours a default profile there."""
    before = dict(env)
    assert "UDP alone" in use_udp_alone(env)
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
