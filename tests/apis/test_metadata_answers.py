"""Metadata answers follow every change of a topic and of its partitions' leadership: the
partition entities a single broker builds once per topic and version are never served stale."""

from __future__ import annotations

from shim.errors import ErrorCode

from apis_support import call


async def metadata(node, version=12):
    fields = {"allow_auto_topic_creation": False} if version >= 4 else {}
    fields |= {"include_topic_authorized_operations": False} if version >= 8 else {}
    r = await call(node, 3, version, lambda m: m.MetadataRequest(topics=None, **fields))
    return {t.name: t for t in r.topics}


def leaders(topic):
    return sorted((p.partition_index, p.leader_id, p.leader_epoch, p.error_code) for p in topic.partitions)


async def test_added_partitions_and_a_recreated_topic_are_answered_as_they_are_now(node):
    node.logs.create_topic("t", 2)
    first = await metadata(node)
    assert leaders(first["t"]) == [(0, 0, 0, ErrorCode.none), (1, 0, 0, ErrorCode.none)]
    assert leaders((await metadata(node))["t"]) == leaders(first["t"])
    node.logs.add_partitions("t", 4)
    assert [p[0] for p in leaders((await metadata(node))["t"])] == [0, 1, 2, 3]
    node.logs.delete_topic("t")
    node.logs.create_topic("t", 1)
    again = (await metadata(node))["t"]
    assert again.topic_id != first["t"].topic_id and [p[0] for p in leaders(again)] == [0]


async def test_each_version_gets_its_own_partition_entities(node):
    node.logs.create_topic("t", 3)
    for version in (12, 5, 1, 12):
        topic = (await metadata(node, version))["t"]
        assert len(topic.partitions) == 3 and all(p.leader_id == 0 for p in topic.partitions)


async def test_a_fenced_broker_leaves_its_partitions_without_a_leader(node):
    node.logs.create_topic("t", 2)
    await metadata(node)
    node.cluster.node_down(0, 0)
    assert [(p.leader_id, p.error_code) for p in (await metadata(node))["t"].partitions] == \
        [(-1, ErrorCode.leader_not_available)] * 2
    node.cluster.node_up(0, 0)
    assert [p.leader_id for p in (await metadata(node))["t"].partitions] == [0, 0]


async def test_an_unknown_topic_id_is_answered_with_that_id(node):
    """Kafka (KafkaApis: unknownTopicIdsTopicMetadata) echoes an unknown id with no name; the Java
    Admin's describeTopics(TopicCollection.ofTopicIds(...)) reads the errors by id and fails on a
    zero id (IllegalStateException) instead of raising UnknownTopicIdException."""
    import uuid

    node.logs.create_topic("t", 1)
    known, unknown = node.logs.topics["t"].topic_id, uuid.uuid4()
    r = await call(node, 3, 12, lambda m: m.MetadataRequest(
        topics=tuple(m.MetadataRequestTopic(topic_id=i, name=None) for i in (known, unknown)),
        allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    assert [(t.error_code, t.name, t.topic_id) for t in r.topics] == [
        (ErrorCode.none, "t", known), (ErrorCode.unknown_topic_id, None, unknown)]


async def test_kafka_4_metadata_v13_has_a_top_level_error_code(tmp_path):
    """Kafka 4.0 serves Metadata v13 (KIP-1102): the same answer with a top-level error code."""
    from shim.config import BrokerConfig
    from shim.node import Node

    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.0"))
    try:
        node.logs.create_topic("t", 1)
        r = await call(node, 3, 13, lambda m: m.MetadataRequest(
            topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False))
        assert r.error_code == ErrorCode.none and [t.name for t in r.topics] == ["t"]
    finally:
        node.close()
