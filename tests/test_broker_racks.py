"""broker.rack for a simulated cluster: one rack for every broker, or one per broker in node-id order."""

import pytest

from shim.cluster import broker_racks


@pytest.mark.parametrize("value,racks", [
    (None, {1: None, 2: None, 3: None}),
    ("", {1: None, 2: None, 3: None}),
    ("r", {1: "r", 2: "r", 3: "r"}),
    ("a, b,c", {1: "a", 2: "b", 3: "c"}),
])
def test_each_broker_gets_its_rack(value, racks):
    assert broker_racks(value, (1, 2, 3)) == racks


def test_a_single_broker_takes_the_value_as_it_is():
    assert broker_racks("eu-west-1a,b", (0,)) == {0: "eu-west-1a,b"}


@pytest.mark.parametrize("value", ["a,b", "a,b,c,d", "a,,c"])
def test_a_list_that_does_not_name_one_rack_per_broker_is_refused(value):
    with pytest.raises(ValueError):
        broker_racks(value, (1, 2, 3))


def test_the_broker_refuses_to_start_with_a_rack_list_of_the_wrong_length(tmp_path):
    from shim.config import BrokerConfig

    with pytest.raises(ValueError, match="broker.rack"):
        BrokerConfig(data_dir=tmp_path, brokers=3, extra={"broker.rack": "a,b"})
