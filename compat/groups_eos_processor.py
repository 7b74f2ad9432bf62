"""A consume → transform → produce processor with exactly-once semantics, for one client library:
``python -m compat.groups_eos_processor CLIENT BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID``.

It reads INPUT as a read_committed member of GROUP, writes ``b"out-" + value`` of each record to
the same partition of OUTPUT and sends the input offsets to the same transaction, batch after batch,
forever. Any error ends the process (exit status 3), and so does a stall (status 4, see
:class:`Liveness`): the test restarts it, and the next instance's initTransactions fences this one
and aborts whatever it left open. The processor is a static member
(group.instance.id), so a restarted instance takes the killed one's place at once instead of
waiting for its session to time out. Short random pauses inside each transaction make the test's
SIGKILLs land in the middle of transactions. ``confluent-kafka-consumer-protocol`` is the
confluent-kafka processor as a member of the KIP-848 consumer group protocol.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import threading
import time

BATCH = 10
PAUSE_S = 0.02
STALL_S = 5.0
START_S = 30.0
GROUP_CONFIG = dict(session_timeout_ms=6_000, heartbeat_interval_ms=200)
# kafka-python doubles its reconnect backoff up to 30 s by default: after a broker restart of a few
# seconds its next attempt could come seconds after the broker is back (librdkafka's, see BROKER_RESTARTS)
KAFKA_PYTHON_RECONNECT = dict(reconnect_backoff_max_ms=500)


def pause() -> None:
    time.sleep(random.uniform(0, PAUSE_S))


def kafka_python(bootstrap, source, sink, group, txn_id):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.structs import OffsetAndMetadata

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, **KAFKA_PYTHON_RECONNECT)
    producer.init_transactions()
    consumer = KafkaConsumer(source, bootstrap_servers=bootstrap, group_id=group, group_instance_id="processor",
                             isolation_level="read_committed", enable_auto_commit=False,
                             auto_offset_reset="earliest", **GROUP_CONFIG, **KAFKA_PYTHON_RECONNECT)
    while True:
        beat()
        batch = consumer.poll(timeout_ms=100, max_records=BATCH)
        if not batch:
            continue
        producer.begin_transaction()
        for tp, records in batch.items():
            for r in records:
                producer.send(sink, value=b"out-" + r.value, partition=tp.partition)
        pause()
        offsets = {tp: OffsetAndMetadata(records[-1].offset + 1, "", -1) for tp, records in batch.items()}
        producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
        pause()
        producer.commit_transaction()


async def aiokafka(bootstrap, source, sink, group, txn_id):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
    await producer.start()
    consumer = AIOKafkaConsumer(source, bootstrap_servers=bootstrap, group_id=group, group_instance_id="processor",
                                isolation_level="read_committed", enable_auto_commit=False,
                                auto_offset_reset="earliest", **GROUP_CONFIG)
    await consumer.start()
    while True:
        beat()
        batch = await consumer.getmany(timeout_ms=100, max_records=BATCH)
        if not batch:
            continue
        async with producer.transaction():
            for tp, records in batch.items():
                for r in records:
                    await producer.send(sink, value=b"out-" + r.value, partition=tp.partition)
            await asyncio.sleep(random.uniform(0, PAUSE_S))
            offsets = {tp: records[-1].offset + 1 for tp, records in batch.items()}
            await producer.send_offsets_to_transaction(offsets, group)
            await asyncio.sleep(random.uniform(0, PAUSE_S))


# librdkafka's settings for a single broker that restarts on the same address. By default
# (metadata.recovery.strategy=rebootstrap, KIP-899) it re-bootstraps once its only broker is down,
# which decommissions the broker handle it cached as group coordinator: the next
# send_offsets_to_transaction then waits on that handle until the Liveness watchdog ends the process
# (confluentinc/librdkafka#5511), after most broker restarts. And its reconnect backoff doubles up to
# reconnect.backoff.max.ms (10 s): a restart of a few seconds left the group coordinator's next
# connect attempt up to 9.9 s after the broker was back. Without either, each client reconnects to the
# same broker id at the same address within half a second of its restart.
BROKER_RESTARTS = {"metadata.recovery.strategy": "none", "reconnect.backoff.max.ms": 500}


def confluent_kafka(bootstrap, source, sink, group, txn_id, consumer_protocol=False):
    import confluent_kafka as ck

    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, **BROKER_RESTARTS})
    producer.init_transactions(60)
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
            "enable.auto.commit": False, "auto.offset.reset": "earliest", **BROKER_RESTARTS}
    if consumer_protocol:
        # KIP-848: the broker times sessions out (group.consumer.session.timeout.ms) and a killed
        # static member's instance id stays unreleased until then, so the member is dynamic.
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"group.instance.id": "processor", "session.timeout.ms": GROUP_CONFIG["session_timeout_ms"],
                     "heartbeat.interval.ms": GROUP_CONFIG["heartbeat_interval_ms"]})
    consumer = ck.Consumer(conf)
    consumer.subscribe([source])
    while True:
        beat()
        messages = [m for m in consumer.consume(BATCH, 0.1) if m.error() is None]
        if not messages:
            continue
        producer.begin_transaction()
        next_offsets: dict[int, int] = {}
        for m in messages:
            producer.produce(sink, value=b"out-" + m.value(), partition=m.partition())
            next_offsets[m.partition()] = max(next_offsets.get(m.partition(), 0), m.offset() + 1)
        pause()
        producer.send_offsets_to_transaction([ck.TopicPartition(source, p, o) for p, o in next_offsets.items()],
                                             consumer.consumer_group_metadata(), 60)
        pause()
        producer.commit_transaction(60)


class Liveness:
    """A liveness watchdog: the processing loop must go round at least every STALL_S seconds (the
    first time within START_S), else the process exits with status 4. Both client stacks can hang
    for good after their only broker restarted: librdkafka keeps the group coordinator cached on a
    decommissioned broker handle and send_offsets_to_transaction never returns, its timeout not
    enforced (confluentinc/librdkafka#5511, #5456); kafka-python 3.0's poll() can wait forever on
    its IO thread. A service would be restarted by its supervisor; so is this one."""

    def __init__(self) -> None:
        self.deadline = time.monotonic() + START_S
        threading.Thread(target=self._watch, daemon=True).start()

    def beat(self) -> None:
        self.deadline = time.monotonic() + STALL_S

    def _watch(self) -> None:
        while time.monotonic() < self.deadline:
            time.sleep(0.2)
        print(f"processor stops: no progress for {STALL_S}s", file=sys.stderr, flush=True)
        os._exit(4)


LIVENESS: Liveness | None = None


def beat() -> None:
    LIVENESS.beat()


def main(argv: list[str]) -> int:
    global LIVENESS
    client, *args = argv
    LIVENESS = Liveness()
    try:
        if client == "aiokafka":
            asyncio.run(aiokafka(*args))
        else:
            {"kafka-python": kafka_python, "confluent-kafka": confluent_kafka,
             "confluent-kafka-consumer-protocol": lambda *a: confluent_kafka(*a, consumer_protocol=True)}[client](*args)
    except Exception as exc:  # any failure: exit and let the supervisor start a fresh instance
        print(f"processor stops: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
