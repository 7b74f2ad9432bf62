"""Clients started against a broker whose coordinators are still loading get through once the
load ends (shim.coordinators.loader), as against a Kafka broker loading its coordinator partitions.

A first broker leaves a group's committed offset and a committed transaction in the data directory.
The second one is held loading after its listeners open: a group consumer and a transactional
producer of each client are answered COORDINATOR_LOAD_IN_PROGRESS and keep asking, while a plain
producer and an assigned consumer of the same topic are served. Once the load is released the
consumer resumes at the loaded committed offset and the producer commits a transaction that a
read_committed consumer reads. The refusals are counted inside the broker (its exact codes are
checked in tests/groups/test_coordinator_loading.py)."""

from __future__ import annotations

import threading

import pytest

from compat.groups_support import create_topic, wait_for

pytestmark = [pytest.mark.compat(scenario="broker.coordinator_load"),
              pytest.mark.shim_only("holds the coordinators' load inside kafka-shim")]
TOPIC, GROUP, COMMITTED, RECORDS = "loading", "loading-group", 4, 10
JOIN_GROUP, OFFSET_FETCH, INIT_PRODUCER_ID = 11, 9, 22


def _seed(data_dir) -> None:
    """Records 0-9, the group's committed offset 4 and a committed transaction, then a clean stop."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    from shim.broker import BrokerThread

    with BrokerThread(data_dir=data_dir, listen="127.0.0.1:0") as broker:
        bootstrap = broker.bootstrap_servers
        create_topic(bootstrap, TOPIC, 1)
        producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="seed")
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(RECORDS):
            producer.send(TOPIC, value=b"%d" % i, partition=0)
        producer.commit_transaction()
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False)
        consumer.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(COMMITTED, "", -1)})
        consumer.close()


def _confluent_group_read(bootstrap: str) -> list[int]:
    import confluent_kafka as ck

    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                            "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([TOPIC])
    try:
        got: list[int] = []
        while len(got) < RECORDS - COMMITTED:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                got.append(msg.offset())
        return got
    finally:
        consumer.close()


def _kafka_python_group_read(bootstrap: str) -> list[int]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False,
                             auto_offset_reset="earliest", isolation_level="read_committed", retry_backoff_ms=50)
    try:
        got: list[int] = []
        while len(got) < RECORDS - COMMITTED:
            for records in consumer.poll(timeout_ms=1000).values():
                got += [r.offset for r in records]
        return got
    finally:
        consumer.close()


def _confluent_transaction(bootstrap: str) -> None:
    import confluent_kafka as ck

    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "loading-confluent"})
    producer.init_transactions(60)
    producer.begin_transaction()
    producer.produce(TOPIC, b"txn-confluent-kafka", partition=0)
    producer.commit_transaction(60)


def _kafka_python_transaction(bootstrap: str) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="loading-kafka-python",
                             retry_backoff_ms=50)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(TOPIC, value=b"txn-kafka-python", partition=0)
        producer.commit_transaction()
    finally:
        producer.close()


CLIENTS = {"confluent-kafka": (_confluent_group_read, _confluent_transaction),
           "kafka-python": (_kafka_python_group_read, _kafka_python_transaction)}


def _served_while_loading(bootstrap: str) -> list[bytes]:
    """A plain producer appends and an assigned consumer (no group) reads: the data path does not
    wait for the coordinators."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(TOPIC, value=b"plain", partition=0).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False)
    tp = TopicPartition(TOPIC, 0)
    consumer.assign([tp])
    consumer.seek(tp, RECORDS + 1)  # after the seed's records and its commit marker
    try:
        values: list[bytes] = []
        while not values:
            values += [r.value for rs in consumer.poll(timeout_ms=1000).values() for r in rs]
        return values
    finally:
        consumer.close()


def _read_committed_values(bootstrap: str) -> list[bytes]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False)
    tp = TopicPartition(TOPIC, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    try:
        values: list[bytes] = []
        while consumer.position(tp) < consumer.end_offsets([tp])[tp] - 1:  # the last is the commit marker
            values += [r.value for rs in consumer.poll(timeout_ms=1000).values() for r in rs]
        return values
    finally:
        consumer.close()


def _held_broker(tmp_path):
    """A broker over the seeded data directory, its coordinators held loading."""
    from shim.broker import BrokerThread

    data_dir = tmp_path / "kafka-shim"
    _seed(data_dir)
    broker = BrokerThread(data_dir=data_dir, listen="127.0.0.1:0")
    broker.broker.hold_coordinator_load = True
    return broker.start()


def _refused(broker) -> dict[int, int]:
    """API key -> requests answered as loading so far."""
    return broker.call(lambda: dict(broker.node.loading.refused))


def _start(target, *args) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = target(*args)
        except Exception as e:  # reported by the test
            outcome["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("client", [pytest.param(c, marks=pytest.mark.compat(client=c)) for c in CLIENTS])
def test_group_consumer_and_transactional_producer_get_through_once_the_load_ends(tmp_path, client):
    broker = _held_broker(tmp_path)
    try:
        bootstrap = broker.bootstrap_servers
        group_read, transaction = CLIENTS[client]
        reader, read = _start(group_read, bootstrap)
        producer, produced = _start(transaction, bootstrap)
        wait_for(lambda: (r := _refused(broker)).get(JOIN_GROUP, 0) + r.get(OFFSET_FETCH, 0) >= 2
                 and r.get(INIT_PRODUCER_ID, 0) >= 2, 60, "the clients asked again while loading")
        assert _served_while_loading(bootstrap) == [b"plain"]
        assert reader.is_alive() and producer.is_alive() and not read and not produced
        assert not broker.call(lambda: broker.node.loading.done)

        broker.release_coordinator_load()
        reader.join(90)
        producer.join(90)
        assert not reader.is_alive() and not producer.is_alive()
        assert "error" not in read and "error" not in produced, (read, produced)
        assert read["result"][0] == COMMITTED  # resumed at the offset the load brought back
        assert f"txn-{client}".encode() in _read_committed_values(bootstrap)
    finally:
        broker.stop()


@pytest.mark.compat(client="java")
def test_java_group_consumer_and_transactional_producer_get_through_once_the_load_ends(tmp_path, java_drivers):
    """kafka-clients' group commit and consume-transform-produce scenarios (compat/java/KafkaDriver.java),
    started while the load is held: each waits, and finishes as against a loaded broker."""
    from compat.javarun import observed_of

    broker = _held_broker(tmp_path)
    try:
        scenarios = ["consumer.group_commit", "eos.send_offsets"]
        runner, ran = _start(lambda: java_drivers.run("KafkaDriver", scenarios, broker.bootstrap_servers,
                                                      timeout=300, prefix="loading", parallel=2, timeout_s=90))
        wait_for(lambda: (r := _refused(broker)).get(JOIN_GROUP, 0) >= 1 and r.get(INIT_PRODUCER_ID, 0) >= 1, 120,
                 "both scenarios asked while loading")
        assert runner.is_alive() and not ran

        broker.release_coordinator_load()
        runner.join(300)
        assert not runner.is_alive() and "error" not in ran, ran
        observed = observed_of(ran["result"]["results"])
        group = observed("consumer.group_commit")
        assert (group["first_member"], group["committed"], group["second_member"]) == (
            ["g-0", "g-1", "g-2"], 3, ["g-3", "g-4"])
        eos = observed("eos.send_offsets")
        assert eos["committed_round"] == {"consumed": ["in-0", "in-1", "in-2"], "offset_sent": 3}
        assert eos["group_offset"] == 3
    finally:
        broker.stop()
