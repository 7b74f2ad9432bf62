"""admin.internal_topics with confluent-kafka (compat/scenarios/): right after a group's first
FindCoordinator (a consumer group's offsets listed through the AdminClient) and a transactional
id's (init_transactions), Metadata lists __consumer_offsets and __transaction_state as Kafka's
FindCoordinator creates them (AutoTopicCreationManager): internal, 50 partitions, the internal
topics' configs. On kafka-shim the topics did not exist before (a fresh broker per module).

Runs against ``compat_target``.
"""

from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.compat(client="confluent-kafka", scenario="admin.internal_topics")

TOPIC_CONFIG = 1


def _describe(admin, topic: str) -> dict:
    from confluent_kafka.admin import ConfigResource

    metadata = admin.list_topics(timeout=20)
    t = metadata.topics[topic]
    assert t.error is None, t.error
    (configs,) = admin.describe_configs([ConfigResource("topic", topic)]).values()
    entries = configs.result(20)
    return {"partitions": len(t.partitions),
            "configs": {k: (entries[k].value, int(entries[k].source))
                        for k in ("cleanup.policy", "compression.type", "segment.bytes")}}


def test_find_coordinator_leaves_the_internal_topics_created(compat_target):
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer
    from confluent_kafka.admin import AdminClient

    bootstrap = compat_target.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    group = f"find-{uuid.uuid4().hex[:8]}"
    listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(20)
    assert listed.topic_partitions == []
    assert _describe(admin, "__consumer_offsets") == {"partitions": 50, "configs": {
        "cleanup.policy": ("compact", TOPIC_CONFIG), "compression.type": ("producer", TOPIC_CONFIG),
        "segment.bytes": ("104857600", TOPIC_CONFIG)}}

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"find-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(20)
    assert _describe(admin, "__transaction_state") == {"partitions": 50, "configs": {
        "cleanup.policy": ("compact", TOPIC_CONFIG), "compression.type": ("uncompressed", TOPIC_CONFIG),
        "segment.bytes": ("104857600", TOPIC_CONFIG)}}
