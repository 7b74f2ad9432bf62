"""Log compaction through each client library (confluent-kafka, kafka-python, aiokafka, kcat and Java
kafka-clients through compat/java/CompactionDriver.java): keyed updates and tombstones compacted and read back as the latest value
per key at their own offsets (gaps skipped), tombstones gone after delete.retention.ms; a
transactional producer's aborted records gone from the compacted log under both isolation levels,
committed ones kept, the ABORT marker removed in the end; a Kafka Streams-like changelog restore.

The rounds are run with ``BrokerThread.clean_logs(now_ms)``, the clock standing in for the time
delete.retention.ms takes (no sleeps). segment.bytes=100 puts every batch in a segment of its own,
so everything but the last batch is cleanable. Further cases through confluent-kafka: a log.cleaner.* setting
altered at runtime, compact,delete retention of emptied segments and without a cleaner, and
max.compaction.lag.ms judged by producer-set timestamps.
"""

from __future__ import annotations

import time

import pytest

from compat.compaction_clients import CLIENTS, KCAT, java_clients

pytestmark = pytest.mark.shim_only("runs the log cleaner of an in-process kafka-shim, with the clock it names")

RETENTION = 3_600_000
CONFIGS = {"cleanup.policy": "compact", "segment.bytes": "100", "min.cleanable.dirty.ratio": "0.01",
           "delete.retention.ms": str(RETENTION)}
ISOLATIONS = ("read_uncommitted", "read_committed")


def _params(scenario):
    return list(_each(scenario))


def _each(scenario):
    for name in CLIENTS:
        marks = [pytest.mark.compat(client=name, scenario=scenario)]
        if name == "kcat":
            marks.append(pytest.mark.skipif(KCAT is None, reason="kcat is not installed"))
        yield pytest.param(name, marks=marks, id=name)


@pytest.fixture
def clients(request, client):
    """(produce, consume) of the client under test."""
    if client == "java":
        return java_clients(request.getfixturevalue("java_drivers"))
    return CLIENTS[client]


@pytest.fixture
def kafka_shim(tmp_path):
    """A broker whose background cleaner waits an hour between passes: the test runs each round."""
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0",
                      extra={"log.cleaner.backoff.ms": "3600000"}) as broker:
        yield broker


@pytest.fixture
def compacted(kafka_shim):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": kafka_shim.bootstrap_servers})

    def create(name: str) -> str:
        admin.create_topics([NewTopic(name, 1, 1, config=CONFIGS)])[name].result(20)
        return name
    return create


def _latest(records):
    return {k: v for _, k, v in records}


def _end(kafka_shim, topic):
    return kafka_shim.call(lambda: kafka_shim.node.logs.get(topic, 0).log_end_offset)


def _batches(kafka_shim, topic):
    def collect():
        plog = kafka_shim.node.logs.get(topic, 0)
        return [h for seg in plog.segments for _, h in seg.iter_headers()]
    return kafka_shim.call(collect)


@pytest.mark.parametrize("client", _params("compaction.keyed"))
def test_keyed_updates_and_tombstones_compact_to_the_latest_value_per_key(kafka_shim, compacted, client, clients):
    produce, consume = clients
    bs, topic = kafka_shim.bootstrap_servers, compacted(f"keyed-{client}")
    produce(bs, topic, [(b"k0", b"early")])  # a producer of its own, its only batch superseded below
    updates = [(b"k%d" % (i % 4), b"v%d" % i) for i in range(24)]
    produce(bs, topic, updates + [(b"k1", None), (b"k2", None), (b"seal", b"s")])
    end = _end(kafka_shim, topic)
    before = consume(bs, topic, "read_uncommitted", end)
    assert len(before) == 28 and [o for o, _, _ in before] == list(range(28))
    now = int(time.time() * 1000)
    assert kafka_shim.clean_logs(now) == 1
    after = consume(bs, topic, "read_uncommitted", end)
    # the latest of each key at its own offset; the deletes still there as tombstones
    assert after == [(21, b"k0", b"v20"), (24, b"k3", b"v23"), (25, b"k1", None), (26, b"k2", None),
                     (27, b"seal", b"s")]
    first = _batches(kafka_shim, topic)[0]
    if first.producer_id >= 0:  # an idempotent producer's last batch stays, empty, for its sequence
        assert (first.base_offset, first.records_count) == (0, 0)
    # a round before the delete horizon keeps the tombstones; one after it removes them
    produce(bs, topic, [(b"k0", b"v-late"), (b"seal", b"t")])
    assert kafka_shim.clean_logs(now + RETENTION - 1) == 1
    assert _latest(consume(bs, topic, "read_uncommitted", end + 2)).keys() >= {b"k1", b"k2"}
    produce(bs, topic, [(b"k3", b"v-later"), (b"seal", b"u")])
    assert kafka_shim.clean_logs(now + RETENTION) == 1
    final = consume(bs, topic, "read_committed", end + 4)
    assert _latest(final) == {b"k0": b"v-late", b"k3": b"v-later", b"seal": b"u"}
    assert [o for o, _, _ in final] == [28, 29, 30, 31]  # seal@29 stays: its successor is in the active segment


@pytest.mark.parametrize("client", _params("compaction.transactions"))
def test_aborted_records_vanish_committed_stay_markers_go(kafka_shim, compacted, client, clients):
    produce, consume = clients
    bs, topic = kafka_shim.bootstrap_servers, compacted(f"txn-{client}")
    txn_id = f"compaction-{client}"
    produce(bs, topic, [(b"a", b"a-committed"), (b"b", b"b-committed")], txn_id=txn_id, commit=True)
    produce(bs, topic, [(b"a", b"a-aborted"), (b"c", b"c-aborted")], txn_id=txn_id, commit=False)
    produce(bs, topic, [(b"d", b"d-committed")], txn_id=txn_id, commit=True)
    produce(bs, topic, [(b"seal", b"s")])
    end = _end(kafka_shim, topic)
    assert b"a-aborted" in [v for _, _, v in consume(bs, topic, "read_uncommitted", end)]
    expected = {b"a": b"a-committed", b"b": b"b-committed", b"d": b"d-committed", b"seal": b"s"}
    now = int(time.time() * 1000)
    assert kafka_shim.clean_logs(now) == 1
    for isolation in ISOLATIONS:
        got = consume(bs, topic, isolation, end)
        assert _latest(got) == expected, isolation
        assert not any(v and v.endswith(b"-aborted") for _, _, v in got)
    aborts = lambda: [h for h in _batches(kafka_shim, topic) if h.is_control and h.base_offset == 5]  # noqa: E731
    assert aborts()  # its batches were seen by this round: kept
    # later rounds: no batch of it left, so it gets a delete horizon and then goes
    produce(bs, topic, [(b"seal", b"t")])
    assert kafka_shim.clean_logs(now) == 1
    produce(bs, topic, [(b"seal", b"u")])
    assert kafka_shim.clean_logs(now + RETENTION) == 1
    assert not aborts()
    for isolation in ISOLATIONS:
        assert _latest(consume(bs, topic, isolation, end + 2)) == {**expected, b"seal": b"u"}


@pytest.mark.parametrize("client", [p for p in _params("compaction.changelog_restore") if p.id != "kcat"])
def test_a_changelog_restore_yields_exactly_the_committed_final_state(kafka_shim, compacted, client, clients):
    # Kafka Streams' exactly-once changelog: keyed writes in transactions, some aborted; after
    # compaction a read_committed restore into a dict is the committed state, nothing more
    produce, consume = clients
    bs, topic = kafka_shim.bootstrap_servers, compacted(f"changelog-{client}")
    state: dict[bytes, bytes] = {}
    for txn in range(8):
        writes = [(b"store-%d" % ((txn * 3 + i) % 5), b"t%d-%d" % (txn, i)) for i in range(3)]
        if txn % 3 == 2:
            writes.append((b"store-%d" % (txn % 5), None))
        commit = txn % 4 != 3
        produce(bs, topic, writes, txn_id=f"changelog-{client}", commit=commit)
        if commit:
            for k, v in writes:
                if v is None:
                    state.pop(k, None)
                else:
                    state[k] = v
    produce(bs, topic, [(b"seal", b"s")])
    state[b"seal"] = b"s"
    end = _end(kafka_shim, topic)
    assert kafka_shim.clean_logs(int(time.time() * 1000)) == 1
    restored: dict[bytes, bytes] = {}
    for _, k, v in consume(bs, topic, "read_committed", end):
        if v is None:
            restored.pop(k, None)
        else:
            restored[k] = v
    assert restored == state


def test_a_cleaner_setting_altered_at_runtime_applies_at_once_and_log_cleaner_enable_is_read_only(kafka_shim, compacted):
    # Kafka restarts its cleaner threads when log.cleaner.* changes (LogCleaner.reconfigure): a
    # shorter log.cleaner.backoff.ms applies now, not after the hour the fixture's backoff waits.
    # log.cleaner.enable is not dynamic: "Cannot update these configs dynamically"
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    from compat.compaction_clients import ck_consume, ck_produce
    from compat.support import wait_for

    bs, topic = kafka_shim.bootstrap_servers, compacted("runtime-backoff")
    ck_produce(bs, topic, [(b"k", b"v%d" % i) for i in range(6)])
    admin = AdminClient({"bootstrap.servers": bs})
    node = str(kafka_shim.node.node_ids[0])

    def alter(name, value):
        entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        resource = ConfigResource("BROKER", node, incremental_configs=[entry])
        return admin.incremental_alter_configs([resource])[resource].result(20)

    with pytest.raises(KafkaException, match="log.cleaner.enable"):
        alter("log.cleaner.enable", "false")
    cleaner = kafka_shim.broker.cleaner
    rounds = cleaner.rounds
    alter("log.cleaner.backoff.ms", "50")
    wait_for(lambda: cleaner.rounds > rounds, timeout=10, message="a cleaning round after the change")
    # the latest mapped value and the one in the active segment, never cleaned
    assert ck_consume(bs, topic, "read_uncommitted", _end(kafka_shim, topic)) == [(4, b"k", b"v4"), (5, b"k", b"v5")]


def test_a_compact_delete_topic_keeps_its_log_start_while_the_emptied_segments_are_younger_than_retention(
        kafka_shim):
    # cleanup.policy=compact,delete: the segments the cleaner emptied expire by the time of what they
    # held (Kafka: LogSegment.largestTimestamp falls back to the file's time), so the earliest offset
    # a client lists stays 0 and a consumer at an offset of the gap reads on from there
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic

    from compat.compaction_clients import ck_consume, ck_produce

    bs, topic = kafka_shim.bootstrap_servers, "compact-delete"
    configs = {**CONFIGS, "cleanup.policy": "compact,delete", "retention.ms": str(RETENTION)}
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(20)
    ck_produce(bs, topic, [(b"k", b"v%d" % i) for i in range(3)] + [(b"seal", b"s")])
    now = int(time.time() * 1000)
    assert kafka_shim.clean_logs(now) == 1
    kafka_shim.call(lambda: kafka_shim.node.logs.enforce_retention(now))  # the broker's retention pass
    consumer = ck.Consumer({"bootstrap.servers": bs, "group.id": "compact-delete"})
    try:
        assert consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10) == (0, 4)
    finally:
        consumer.close()
    assert ck_consume(bs, topic, "read_committed", 4) == [(2, b"k", b"v2"), (3, b"seal", b"s")]


def test_without_a_log_cleaner_a_compact_delete_topic_is_not_trimmed_by_retention(tmp_path):
    # Kafka: LogManager.cleanupLogs leaves compacted logs to the cleaner thread, which runs their
    # retention; with log.cleaner.enable=false they keep everything ("continually grow in size")
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic

    from compat.compaction_clients import ck_produce
    from compat.support import wait_for
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", retention_check_interval_ms=50,
                      extra={"log.cleaner.enable": "false"}) as broker:
        bs = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bs})
        policies = {"plain": "delete", "both": "compact,delete"}
        for name, policy in policies.items():
            config = {"cleanup.policy": policy, "retention.ms": "1", "segment.bytes": "100"}
            admin.create_topics([NewTopic(name, 1, 1, config=config)])[name].result(20)
            ck_produce(bs, name, [(b"k", b"v%d" % i) for i in range(3)])
        consumer = ck.Consumer({"bootstrap.servers": bs, "group.id": "retention"})
        try:
            low = lambda t: consumer.get_watermark_offsets(ck.TopicPartition(t, 0), timeout=10)[0]  # noqa: E731
            wait_for(lambda: low("plain") == 3, timeout=10, message="retention of the delete-only topic")
            assert low("both") == 0
        finally:
            consumer.close()


def test_max_compaction_lag_counts_the_oldest_producer_timestamp_of_any_dirty_segment(kafka_shim):
    # Kafka: maxCompactionDelay -- the earliest first-batch timestamp over every dirty segment; here
    # the second segment carries an hour-old CreateTime its producer set, the first a current one.
    # min.cleanable.dirty.ratio=1 leaves the lag as the only reason to clean
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic

    from compat.compaction_clients import ck_consume

    bs, topic = kafka_shim.bootstrap_servers, "max-lag"
    configs = {**CONFIGS, "min.cleanable.dirty.ratio": "1", "max.compaction.lag.ms": "60000"}
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(20)
    now = int(time.time() * 1000)
    p = ck.Producer({"bootstrap.servers": bs, "linger.ms": 0})
    for value, ts in ((b"new", now), (b"old", now - 3_600_000), (b"seal", now)):
        p.produce(topic, key=b"k", value=value, partition=0, timestamp=ts)
        p.flush(20)
    assert kafka_shim.clean_logs(now) == 1
    assert ck_consume(bs, topic, "read_committed", 3) == [(1, b"k", b"old"), (2, b"k", b"seal")]
