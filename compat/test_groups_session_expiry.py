"""A static confluent-kafka consumer (classic protocol, ``group.instance.id``) closes without
LeaveGroup, as librdkafka's close of a static member does: its session ends its session timeout
after its last request (the closing OffsetCommit), as Kafka's rescheduleClassicGroupMemberHeartbeat
keeps it, so the group is Empty within session.timeout.ms of the close and not a second later, and
a DeleteGroups right then deletes it (librdkafka's 0081 DescribeConsumerGroups deletes its groups
6 s after the close). Synchronised on the group's state (DescribeGroups), never on sleeps."""

from __future__ import annotations

import time

import pytest

from compat.groups_support import create_topic, describe_group, produce

pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.compat(client="confluent-kafka", scenario="consumer.static_session_expiry")

SESSION_S = 6.0  # Kafka's group.min.session.timeout.ms
HEARTBEAT_S = 1.0


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("expiry"), listen="127.0.0.1:0",
                      group_initial_rebalance_delay_ms=0) as b:
        yield b


def test_a_closed_static_member_expires_at_its_session_timeout(broker):
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient

    bootstrap, group = broker.bootstrap_servers, "static-expiry"
    create_topic(bootstrap, "exp", 1)
    produce(bootstrap, "exp", {0: [b"r%d" % i for i in range(10)]})
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": "static-0",
                            "session.timeout.ms": int(SESSION_S * 1000), "heartbeat.interval.ms": int(HEARTBEAT_S * 1000),
                            "auto.offset.reset": "earliest"})
    consumer.subscribe(["exp"])
    got, give_up = 0, time.monotonic() + 60
    while got < 10:
        assert time.monotonic() < give_up, f"consumed {got} of 10"
        got += sum(m.error() is None for m in consumer.consume(num_messages=10, timeout=0.5))
    assert describe_group(bootstrap, group)[0] == "Stable"
    close_start = time.monotonic()
    consumer.close()
    close_end = time.monotonic()
    while (described := describe_group(bootstrap, group)) is not None and described[0] == "Stable":
        assert time.monotonic() < close_end + SESSION_S + 1.0, "the static member outlived its session by a second"
        time.sleep(0.02)  # a poll of the state, not a wait for it
    empty_at = time.monotonic()
    assert described == ("Empty", [])
    # its last request came at most a heartbeat before the close began (the closing commit, in it)
    assert empty_at >= close_start + SESSION_S - HEARTBEAT_S, f"expired {close_start + SESSION_S - empty_at:.2f} s early"
    assert empty_at <= close_end + SESSION_S + 0.5, f"expired {empty_at - close_end - SESSION_S:.2f} s late"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: its futures end with it
    assert admin.delete_consumer_groups([group])[group].result(timeout=20) is None
    assert describe_group(bootstrap, group)[0] == "Dead"
