"""The parameter-table reader every node uses, without ROS."""

import dataclasses

import pytest

from surrogait_core.runtime.node_params import ParamError, check_interface, param, parameter_table, read_params


@dataclasses.dataclass(frozen=True)
class Table:
    name: str = param("go2", "a string")
    count: int = param(2, "an integer")
    rate_hz: float = param(10.0, "a number")
    enabled: bool = param(True, "a flag")

    def validate(self) -> None:
        if self.count < 1:
            raise ParamError(f"count {self.count} must be >= 1")


def test_the_table_gives_names_defaults_and_descriptions_in_order():
    assert parameter_table(Table) == {"name": ("go2", "a string"), "count": (2, "an integer"),
                                      "rate_hz": (10.0, "a number"), "enabled": (True, "a flag")}


def test_missing_names_take_their_defaults_and_an_int_is_accepted_for_a_float():
    table = read_params(Table, {"rate_hz": 5})
    assert table == Table(rate_hz=5.0) and isinstance(table.rate_hz, float)


@pytest.mark.parametrize("values, message", [
    ({"cuont": 3}, r"unknown parameter\(s\) cuont: check the spelling.*takes: name, count, rate_hz, enabled"),
    ({"count": "3"}, "parameter 'count' must be an integer, got '3'"),
    ({"count": True}, "parameter 'count' must be an integer, got True"),
    ({"enabled": 1}, "parameter 'enabled' must be true or false, got 1"),
    ({"name": 2}, "parameter 'name' must be a string, got 2"),
    ({"count": 0}, "count 0 must be >= 1"),  # the table's own validate()
])
def test_unknown_names_wrong_types_and_bad_values_are_refused_naming_the_parameter(values, message):
    with pytest.raises(ParamError, match=message):
        read_params(Table, values)


def test_a_parameter_default_must_be_a_ros_scalar():
    with pytest.raises(TypeError, match="bool, int, float or str"):
        param([1, 2], "a list")


def test_a_missing_network_interface_is_refused_with_the_ones_there_are():
    check_interface("lo")
    with pytest.raises(ParamError, match=r"network_interface 'eth9' does not exist.*available: .*lo"):
        check_interface("eth9")
