"""kafka-python pinned to an old broker version (``api_version=(0, 8, 2)``) takes its API versions
from that release's table instead of ApiVersions: it commits offsets with OffsetCommit v1, which
Kafka 3.9 serves (4.0 removed v0-1, KIP-896), so kafka-shim serves it under 3.x emulation."""

from __future__ import annotations

import itertools
import uuid

import pytest

pytestmark = [pytest.mark.compat(client="kafka-python", scenario="consumer.pinned_old_api_version")]


def test_a_consumer_pinned_to_0_8_2_commits_and_a_later_one_resumes(compat_target):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.structs import OffsetAndMetadata

    bootstrap, topic, group = compat_target.bootstrap_servers, f"pinned-{uuid.uuid4().hex[:8]}", "pinned-group"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 1, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(5):
        producer.send(topic, b"v%d" % i, partition=0)
    producer.flush()
    producer.close()
    tp = TopicPartition(topic, 0)

    old = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, api_version=(0, 8, 2), enable_auto_commit=False,
                        auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    old.assign([tp])
    # islice: the iterator ends after the records wanted (consumer_timeout_ms only bounds the wait for
    # them), not 10 s after the last one
    assert [m.value for m in itertools.islice(old, 5)] == [b"v%d" % i for i in range(5)]
    old.commit({tp: OffsetAndMetadata(3, "from 0.8.2", -1)})
    assert old.committed(tp) == 3
    old.close()

    later = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, api_version=(0, 9), enable_auto_commit=False,
                          auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    later.assign([tp])
    assert [m.value for m in itertools.islice(later, 2)] == [b"v3", b"v4"]
    assert later.position(tp) == later.highwater(tp) == 5  # and nothing after them
    later.close()


def test_a_consumer_pinned_to_0_8_1_is_refused_offset_fetch_v0(compat_target):
    """OffsetFetch v0 read the offsets from ZooKeeper: a KRaft Kafka 3.9 answers UNSUPPORTED_VERSION
    on every partition (KafkaApis.handleOffsetFetchRequestFromZookeeper), where a closed connection
    would leave the client retrying until its timeout."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import UnsupportedVersionError

    topic = f"pinned-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=compat_target.bootstrap_servers)
    admin.create_topics([NewTopic(topic, 1, 1)])
    admin.close()
    old = KafkaConsumer(bootstrap_servers=compat_target.bootstrap_servers, group_id="pinned-0-8-1",
                        api_version=(0, 8, 1), enable_auto_commit=False)
    try:
        with pytest.raises(UnsupportedVersionError):
            old.committed(TopicPartition(topic, 0), timeout_ms=10_000)
    finally:
        old.close()


@pytest.mark.compat(client="kafka-python", scenario="admin.pinned_old_api_version")
def test_an_admin_pinned_to_0_10_and_0_11_uses_the_first_versions_of_the_topic_and_config_apis(compat_target):
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

    bootstrap, name = compat_target.bootstrap_servers, f"pinned-{uuid.uuid4().hex[:8]}"
    current = KafkaAdminClient(bootstrap_servers=bootstrap)

    def admin(pin):
        return KafkaAdminClient(bootstrap_servers=bootstrap, api_version=pin)

    try:
        v0 = admin((0, 10, 1))  # CreateTopics v0, DeleteTopics v0
        assert [t["error_code"] for t in v0.create_topics([NewTopic(name, 2, 1)])["topics"]] == [0]
        assert name in current.list_topics()
        v1 = admin((0, 10, 2))  # CreateTopics v1
        assert [t["error_code"] for t in v1.create_topics([NewTopic(name + "-v", 1, 1)], validate_only=True)
                ["topics"]] == [0]
        assert name + "-v" not in current.list_topics()
        v1.close()
        configs = admin((0, 11))  # DescribeConfigs v0
        current.alter_configs([ConfigResource(ConfigResourceType.TOPIC, name, {"retention.ms": "1234"})])
        described = configs.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name,
                                                             ["retention.ms", "cleanup.policy"])])
        configs.close()
        (entries,) = described["topic"].values()
        # Kafka 3.9 answers IsDefault false for every config (its ConfigHelper sets only ConfigSource)
        assert {k: (e["value"], e["is_default"]) for k, e in entries.items()} == {
            "retention.ms": ("1234", False), "cleanup.policy": ("delete", False)}
        assert [t["error_code"] for t in v0.delete_topics([name])["topics"]] == [0]
        v0.close()
    finally:
        current.close()
