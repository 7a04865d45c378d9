"""The node's parameters, checked without ROS."""

import pytest

from surrogait_core.runtime.node_params import ParamError
from surrogait_estimator.params import PARAMETERS, EstimatorNodeConfig


def test_defaults_make_a_valid_config():
    cfg = EstimatorNodeConfig.from_params({})
    assert (cfg.dds_domain, cfg.network_interface, cfg.publish_decimation) == (1, "lo", 5)
    assert cfg.estimator.contact.force_on > cfg.estimator.contact.force_off


def test_yaml_in_config_lists_every_parameter():
    from pathlib import Path

    import yaml

    path = Path(__file__).parents[2] / "ros2_ws/src/surrogait_estimator/config/estimator.yaml"
    params = yaml.safe_load(path.read_text())["estimator_node"]["ros__parameters"]
    assert set(params) == set(PARAMETERS)
    EstimatorNodeConfig.from_params(params)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"dds_domain": 300}, "0..232"),
        ({"publish_decimation": 0}, ">= 1"),
        ({"odom_frame": "base_link"}, "two different"),
        ({"max_gap_s": 0.001}, "max_gap_s"),
        ({"no_such_param": 1}, "unknown parameters"),
    ],
)
def test_malformed_parameters_are_refused(params, match):
    with pytest.raises(ParamError, match=match):
        EstimatorNodeConfig.from_params(params)
