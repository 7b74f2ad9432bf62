"""The broker's share-group settings are refused at start-up when they do not hold together, as Kafka's
ShareGroupConfig and GroupCoordinatorConfig ``require`` them to."""

import pytest

from shim.config import BrokerConfig


@pytest.mark.parametrize("extra, message", [
    ({"group.share.record.lock.duration.ms": "1500"},
     "group.share.record.lock.duration.ms must be greater than or equals to group.share.min.record.lock.duration.ms"),
    ({"group.share.record.lock.duration.ms": "70000"},
     "group.share.record.lock.duration.ms must be less than or equals to group.share.max.record.lock.duration.ms"),
    ({"group.share.max.record.lock.duration.ms": "10000"},
     "group.share.max.record.lock.duration.ms must be greater than or equals to "
     "group.share.min.record.lock.duration.ms"),
    ({"group.share.session.timeout.ms": "30000"},
     "group.share.session.timeout.ms must be greater than or equals to group.share.min.session.timeout.ms"),
    ({"group.share.heartbeat.interval.ms": "500"},
     "group.share.heartbeat.interval.ms must be greater than or equals to group.share.min.heartbeat.interval.ms"),
    ({"group.share.heartbeat.interval.ms": "6000", "group.share.session.timeout.ms": "6000",
      "group.share.min.session.timeout.ms": "6000"},
     "group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms"),
])
def test_the_share_bounds_are_checked_at_start_up(tmp_path, extra, message):
    with pytest.raises(ValueError) as e:
        BrokerConfig(data_dir=tmp_path, extra=extra)
    assert str(e.value) == message


def test_lowered_minimums_allow_short_locks_and_heartbeats(tmp_path):
    BrokerConfig(data_dir=tmp_path, extra={"group.share.record.lock.duration.ms": "1500",
                                           "group.share.min.record.lock.duration.ms": "1000",
                                           "group.share.heartbeat.interval.ms": "500",
                                           "group.share.min.heartbeat.interval.ms": "500"})
