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
