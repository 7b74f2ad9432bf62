"""KIP-447 RequireStable with real clients: while a transaction holds a pending offset commit for
the group, a read_committed consumer asking for its committed offset is answered
UNSTABLE_OFFSET_COMMIT, keeps asking, and gets the transaction's offset once it commits.

kafka-python and confluent-kafka (librdkafka) send RequireStable under read_committed; aiokafka
uses OffsetFetch v1-3, which has no RequireStable. The broker's answers are observed by wrapping
the group coordinator's fetch_offsets in the in-process broker (the handler's exact error code is
checked in tests/groups/test_group_apis.py)."""

from __future__ import annotations

import threading

import pytest

from compat.groups_support import create_topic, wait_for
from shim.errors import ErrorCode

pytestmark = [pytest.mark.compat(scenario="consumer.unstable_offsets"), pytest.mark.shim_only("counts the UNSTABLE_OFFSET_COMMIT answers inside kafka-shim")]
OFFSET = 7


def open_transaction_with_offsets(bootstrap, topic, group):
    """A transactional producer that wrote one record and sent offset 7 for ``topic``-0, left open."""
    from kafka import KafkaProducer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"txn-{group}")
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, value=b"output", partition=0)
    producer.send_offsets_to_transaction({TopicPartition(topic, 0): OffsetAndMetadata(OFFSET, "", -1)}, group)
    return producer


def kafka_python_committed(bootstrap, topic, group):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, isolation_level="read_committed",
                             enable_auto_commit=False, retry_backoff_ms=50)
    try:
        return consumer.committed(TopicPartition(topic, 0), timeout_ms=60_000)
    finally:
        consumer.close()


def confluent_committed(bootstrap, topic, group):
    import confluent_kafka as ck

    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
                            "enable.auto.commit": False})
    try:
        (tp,) = consumer.committed([ck.TopicPartition(topic, 0)], timeout=60)
        return tp.offset
    finally:
        consumer.close()


COMMITTED = {"kafka-python": kafka_python_committed, "confluent-kafka": confluent_committed}


@pytest.mark.parametrize("client", [pytest.param(c, marks=pytest.mark.compat(client=c)) for c in COMMITTED])
def test_a_read_committed_consumer_waits_for_the_pending_offset_commit(kafka_shim, client):
    bootstrap, topic, group = kafka_shim.bootstrap_servers, f"unstable-{client}", f"unstable-{client}"
    create_topic(bootstrap, topic, 1)
    producer = open_transaction_with_offsets(bootstrap, topic, group)

    groups = kafka_shim.node.groups
    unstable_answers = []
    fetch_offsets = groups.fetch_offsets

    def observed(group_id, require_stable, partitions):
        out = fetch_offsets(group_id, require_stable, partitions)
        if group_id == group and any(code == ErrorCode.unstable_offset_commit for _, _, code in out):
            unstable_answers.append(require_stable)
        return out

    kafka_shim.call(setattr, groups, "fetch_offsets", observed)
    result = {}
    asker = threading.Thread(target=lambda: result.update(offset=COMMITTED[client](bootstrap, topic, group)))
    asker.start()
    try:
        # The consumer is told UNSTABLE_OFFSET_COMMIT and asks again: it is still waiting.
        wait_for(lambda: len(unstable_answers) >= 2, 30, "two UNSTABLE_OFFSET_COMMIT answers")
        assert asker.is_alive() and "offset" not in result
        producer.commit_transaction()
        asker.join(60)
        assert not asker.is_alive()
        assert result["offset"] == OFFSET
    finally:
        asker.join(60)
        producer.close()
        kafka_shim.call(delattr, groups, "fetch_offsets")
