"""share.auto.offset.reset=by_duration (KIP-1106) with confluent-kafka against Kafka 4.1 emulation:
the group config is set, refused and described through the AdminClient with Kafka's messages, and
a ShareConsumer starts at the first record at or after now minus the duration. Records carry
timestamps hours apart, chosen by the producer. Where no record is that recent the share partition
stays uninitialized (the broker answers OFFSET_NOT_AVAILABLE, which librdkafka retries quietly)
until one is produced, and the consumer then starts at it. Synchronised on received records, the
share coordinator's start offset (ReadShareGroupStateSummary) and the member's share session."""

from __future__ import annotations

import time

import pytest

from compat.groups_support import create_topic
from compat.share_support import SHARE_TIMEOUT, set_group_configs, share_broker, share_consumer, share_start_offset

ck = pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="share.groups"),
              pytest.mark.shim_only("starts a broker emulating Kafka 4.1 and reads its share sessions")]

HOUR = 3_600_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with share_broker(tmp_path_factory.mktemp("by-duration")) as b:
        yield b


def produce_aged(bootstrap, topic, *ages_ms):
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    now = int(time.time() * 1000)
    for age in ages_ms:
        producer.produce(topic, value=b"%d" % age, partition=0, timestamp=now - age)
    assert producer.flush(30) == 0


def group_config(bootstrap, group):
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.GROUP, group)
    entry = admin.describe_configs([resource])[resource].result(timeout=30)["share.auto.offset.reset"]
    return entry.value, entry.source


def consume_until(consumer, done, seen):
    deadline = time.monotonic() + SHARE_TIMEOUT
    while not done():
        assert time.monotonic() < deadline, f"timed out; received offsets {seen}"
        seen.extend(m.offset() for m in consumer.poll(0.2) if m.error() is None)


def test_the_admin_sets_and_describes_it_and_kafkas_message_refuses_a_negative_duration(broker):
    bs = broker.bootstrap_servers
    with pytest.raises(ck.KafkaException) as e:
        set_group_configs(bs, "g-refused", share_auto_offset_reset="by_duration:-PT1H")
    assert e.value.args[0].code() == ck.KafkaError.INVALID_CONFIG
    assert e.value.args[0].str() == (
        "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value "
        "`by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', "
        "'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")
    set_group_configs(bs, "g-set", share_auto_offset_reset="by_duration:P1DT12H")
    value, source = group_config(bs, "g-set")
    assert (value, source) == ("by_duration:P1DT12H", 8)  # GROUP_CONFIG


def test_a_share_consumer_starts_within_the_duration(broker):
    bs = broker.bootstrap_servers
    create_topic(bs, "aged", 1)
    produce_aged(bs, "aged", 3 * HOUR, 2 * HOUR, HOUR // 2, 0)  # offsets 0-3; 2 and 3 within the hour
    set_group_configs(bs, "g-aged", share_auto_offset_reset="by_duration:PT1H")
    consumer, seen = share_consumer(bs, "g-aged"), []
    try:
        consumer.subscribe(["aged"])
        consume_until(consumer, lambda: sorted(seen) == [2, 3], seen)
        # the next poll acknowledges them (implicit mode): the start moves past them, 0 and 1 never delivered
        consume_until(consumer, lambda: share_start_offset(bs, "g-aged", "aged") == 4, seen)
        assert sorted(seen) == [2, 3]
    finally:
        consumer.close()


def test_with_no_record_that_recent_the_consumer_starts_at_the_next_one(broker):
    bs = broker.bootstrap_servers
    create_topic(bs, "stale", 1)
    produce_aged(bs, "stale", 3 * HOUR, 2 * HOUR)
    set_group_configs(bs, "g-stale", share_auto_offset_reset="by_duration:PT1H")
    consumer, seen = share_consumer(bs, "g-stale"), []
    sessions = broker.broker.node.share.sessions.sessions
    try:
        consumer.subscribe(["stale"])
        # a second ShareFetch of the partition in the member's session: the first has been answered
        consume_until(consumer, lambda: any(s.group_id == "g-stale" and ("stale", 0) in s.partitions
                                            and s.epoch >= 2 for s in list(sessions.values())), seen)
        assert seen == [] and share_start_offset(bs, "g-stale", "stale") == -1  # still uninitialized
        produce_aged(bs, "stale", 0)
        consume_until(consumer, lambda: seen == [2], seen)
        consume_until(consumer, lambda: share_start_offset(bs, "g-stale", "stale") == 3, seen)
        assert seen == [2]
    finally:
        consumer.close()
