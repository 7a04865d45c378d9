"""The Gazebo bridge's participant goes on UDP alone only where that changes nothing else: Fast DDS, discovery
on this host, no profile or static peers of the user's."""

import pytest

from surrogait_rehearsal.sim.gazebo.udp_participant import PROFILE, use_udp_alone_on_localhost


def test_on_localhost_it_becomes_the_same_discovery_over_udp_alone():
    env = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    assert "UDP alone" in use_udp_alone_on_localhost(env)
    assert env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT", "FASTDDS_DEFAULT_PROFILES_FILE": str(PROFILE)}
    text = PROFILE.read_text()
    assert "<useBuiltinTransports>false</useBuiltinTransports>" in text and "<type>UDPv4</type>" in text
    assert "127.0.0.1" in text and "SHM" not in text.split("-->")[1]


@pytest.mark.parametrize("env", [
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"},
    {},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "FASTDDS_DEFAULT_PROFILES_FILE": "/home/me/mine.xml"},
    {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_STATIC_PEERS": "192.168.1.20"},
])
def test_anything_else_is_left_as_the_user_set_it(env):
    before = dict(env)
    assert "left" in use_udp_alone_on_localhost(env)
    assert env == before
