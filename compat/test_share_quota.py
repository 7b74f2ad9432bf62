"""A consumer_byte_rate quota throttles confluent-kafka's ShareConsumer, as Kafka throttles ShareFetch.

Kafka records a ShareFetch answer in the same fetch-quota sensor as a Fetch answer
(KafkaApis.processShareFetchResponse): its MaxBytes is capped to what the quota allows over the
quota window, and an answer over the quota goes out empty with its throttle time, which librdkafka
hands to ``throttle_cb``. Found by confluent-kafka-python's own
share_consumer/test_share_consumer_callbacks.py; synchronised on the callback and on consumed records.
"""

from __future__ import annotations

import time

import pytest

from compat.share_support import enable_share_groups, set_group_configs
from compat.groups_support import create_topic
from compat.test_py_partition_admin import alter_client_quota

ck = pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.compat(client="confluent-kafka", scenario="share.groups")

RECORD = 1024
# quota.window.num 3 (of one-second samples): one answer may carry the quota over two samples, 10 KiB,
# and a throttle lasts about two seconds at most. Under Kafka's default (11 samples) a 1 KiB/s quota
# gives the same cap but throttles of about 9 s, which librdkafka waits out again in close().
WINDOW_SAMPLES = 3
QUOTA = 5 * 1024.0  # bytes/s


@pytest.fixture
def broker(tmp_path):
    from shim import BrokerThread

    # partitions are assigned by the heartbeat after their initialization: heartbeat every 500 ms
    fast = {"group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}
    with BrokerThread(data_dir=tmp_path, listen="127.0.0.1:0", kafka_version="4.1", extra=fast,
                      quota_window_num=WINDOW_SAMPLES) as b:
        enable_share_groups(b.bootstrap_servers)
        yield b


def test_a_share_consumer_over_its_byte_rate_is_throttled_and_its_answers_are_capped(broker):
    bs, topic, client = broker.bootstrap_servers, "throttled-share", "throttled-share-client"
    create_topic(bs, topic, 1)
    set_group_configs(bs, "g-throttled", share_auto_offset_reset="earliest")
    producer = ck.Producer({"bootstrap.servers": bs, "linger.ms": 0, "batch.num.messages": 1})
    for i in range(100):
        producer.produce(topic, b"%04d" % i + b"x" * (RECORD - 4), partition=0)
    assert producer.flush(30) == 0
    alter_client_quota(bs, client, "consumer_byte_rate", QUOTA)
    events, per_poll = [], []
    consumer = ck.ShareConsumer({"bootstrap.servers": bs, "group.id": "g-throttled", "client.id": client,
                                 "throttle_cb": events.append, "fetch.max.bytes": 100 * RECORD})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while not any(e.throttle_time > 0 for e in events):
            assert time.monotonic() < deadline, f"no throttle in 60 s; records per poll {per_poll}"
            per_poll.append(sum(1 for m in consumer.poll(0.5) if m.error() is None))
    finally:
        consumer.close()
    # The first answer is capped to the quota's window (10 KiB of 1 KiB records), not the 100 KiB asked for
    assert 0 < sum(per_poll) <= 20, per_poll
