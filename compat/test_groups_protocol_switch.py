"""A classic member of a consumer group switches to the consumer protocol with its member id, as
Kafka 4's GroupMetadataManager.consumerGroupHeartbeat allows: the member built from the existing
one drops its classic metadata. A confluent-kafka ``group.protocol=consumer`` member makes the
group a consumer group; two members join it with JoinGroup/SyncGroup (raw requests: no client
changes protocol under one member id); one of them sends ConsumerGroupHeartbeat with its member
id and epoch. kafka-clients 4's describeConsumerGroups then reports it upgraded (the consumer
protocol) and the other not; its classic Heartbeat is refused with UNKNOWN_MEMBER_ID; when the
confluent-kafka member leaves, the group stays a consumer group (a consumer-protocol member is
left), and only when the switched member leaves too does it become a classic group
(group.consumer.migration.policy bidirectional). Synchronised on the group's answers, never on
sleeps."""

from __future__ import annotations

import struct

import pytest

from compat.groups_support import create_topic, group_types, wait_for
from compat.javarun import observed_of
from compat.test_groups_consumer_protocol import FAST_BOUNDS, member, settle
from compat.wire import Wire
from shim.errors import ErrorCode as E
from shim.protocol.messages import make, request_module

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="java", scenario="consumer.group_protocol_switch"),
              pytest.mark.shim_only("Kafka 4.1 emulation with a fast heartbeat interval")]

GROUP = "switch"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("switch"), listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                      group_consumer_session_timeout_ms=10_000, extra=FAST_BOUNDS) as b:
        yield b


def subscription(topic: str) -> bytes:
    """ConsumerProtocolSubscription v0 of one topic, no user data."""
    return struct.pack(">hih", 0, 1, len(topic)) + topic.encode() + struct.pack(">i", -1)


def classic_join(wire: Wire, topic: str) -> tuple[str, int]:
    """JoinGroup (v5: the first answer hands out the member id) and SyncGroup; (member id, generation)."""
    protocols = (make(request_module(11, 5).JoinGroupRequestProtocol, name="range", metadata=subscription(topic)),)
    fields = dict(group_id=GROUP, session_timeout=30_000, rebalance_timeout=30_000, group_instance_id=None,
                  protocol_type="consumer", protocols=protocols)
    first = wire.call(11, 5, member_id="", **fields)
    assert first.error_code == E.member_id_required, first
    joined = wire.call(11, 5, member_id=first.member_id, **fields)
    assert joined.error_code == E.none, joined
    synced = wire.call(14, 3, group_id=GROUP, generation_id=joined.generation_id, member_id=joined.member_id,
                       group_instance_id=None, assignments=())
    assert synced.error_code == E.none, synced
    return joined.member_id, joined.generation_id


def members_of(wire: Wire) -> dict[str, int]:
    """ConsumerGroupDescribe: {member id: member type (0 classic, 1 consumer)}."""
    (group,) = wire.call(69, 1, group_ids=(GROUP,), include_authorized_operations=False).groups
    assert group.error_code == E.none, group
    return {m.member_id: m.member_type for m in group.members}


def test_a_classic_member_switching_protocol_becomes_a_consumer_member(broker, java4):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "a", 6)
    modern = member(bootstrap, ["a"], GROUP)
    open_members = [modern]
    wire = Wire(bootstrap)
    try:
        settle([modern], [6])
        assert group_types(bootstrap)[GROUP] == "consumer"
        (switching, generation), (staying, _) = classic_join(wire, "a"), classic_join(wire, "a")
        hb = wire.call(68, 1, group_id=GROUP, member_id=switching, member_epoch=generation, instance_id=None,
                       rack_id=None, rebalance_timeout=30_000, subscribed_topic_names=("a",),
                       subscribed_topic_regex=None, server_assignor=None, topic_partitions=())
        assert hb.error_code == E.none and hb.member_id == switching, hb
        out = java4.run("Admin4Driver", ["admin.describe_member_protocols"], bootstrap, timeout=120,
                        prefix="switch", parallel=1, timeout_s=60, group=GROUP)
        obs = observed_of(out["results"])("admin.describe_member_protocols")
        assert obs["group_type"] == "Consumer"
        assert {m: obs["upgraded"][m] for m in (switching, staying)} == {switching: "true", staying: "false"}
        assert wire.call(12, 3, group_id=GROUP, generation_id=hb.member_epoch, member_id=switching,
                         group_instance_id=None).error_code == E.unknown_member_id

        open_members.remove(modern)
        modern.close()
        wait_for(lambda: len(members_of(wire)) == 2, 30, "the confluent-kafka member's leave")
        assert members_of(wire) == {switching: 1, staying: 0}
        assert group_types(bootstrap)[GROUP] == "consumer"
        left = wire.call(68, 1, group_id=GROUP, member_id=switching, member_epoch=-1, instance_id=None,
                         rack_id=None, rebalance_timeout=-1, subscribed_topic_names=None,
                         subscribed_topic_regex=None, server_assignor=None, topic_partitions=None)
        assert left.error_code == E.none, left
        assert group_types(bootstrap)[GROUP] == "classic"
    finally:
        wire.close()
        for m in open_members:
            m.close()
