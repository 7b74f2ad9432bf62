"""The client workloads whose requests make the fuzz corpus (compat/fuzz/record.py).

Each takes the bootstrap servers and a name prefix and drives one client library through
produce, consume, a consumer group with commits, a transaction with offsets, and admin calls.
They observe nothing: what matters is the requests they send.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path


def kafka_python(bootstrap: str, prefix: str) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

    topic = f"{prefix}_t"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 2, 1)])
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
    for i in range(20):
        producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, headers=[("h", b"1")])
    producer.flush()
    producer.close()
    txn = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{prefix}_txn")
    txn.init_transactions()
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"{prefix}_g", auto_offset_reset="earliest",
                             enable_auto_commit=False, isolation_level="read_committed", consumer_timeout_ms=3000)
    for _ in consumer:
        pass
    consumer.commit()
    txn.begin_transaction()
    txn.send(topic, b"in-txn", partition=0)
    txn.send_offsets_to_transaction({TopicPartition(topic, 0): OffsetAndMetadata(1, "", -1)}, f"{prefix}_g")
    txn.commit_transaction()
    txn.close()
    consumer.close()
    admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    admin.list_groups()
    admin.describe_groups([f"{prefix}_g"])
    admin.list_group_offsets(f"{prefix}_g")
    admin.describe_cluster()
    admin.list_transactions()
    admin.describe_transactions([f"{prefix}_txn"])
    admin.describe_producers([TopicPartition(topic, 0)])
    admin.delete_group_offsets(f"{prefix}_g", [TopicPartition(topic, 1)])
    admin.delete_records({TopicPartition(topic, 0): 1})
    admin.delete_groups([f"{prefix}_g"])
    admin.delete_topics([topic])
    admin.close()


def confluent(bootstrap: str, prefix: str) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, OffsetSpec

    topic = f"{prefix}_t"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(20)
    p = Producer({"bootstrap.servers": bootstrap, "compression.type": "zstd", "linger.ms": 5})
    for i in range(20):
        p.produce(topic, value=b"v%d" % i, key=b"k%d" % i, headers=[("h", b"1")])
    p.flush(20)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}_g", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.subscribe([topic])
    got = 0
    for _ in range(40):
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
        if got >= 20:
            break
    c.commit(asynchronous=False)
    t = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{prefix}_txn"})
    t.init_transactions(20)
    t.begin_transaction()
    t.produce(topic, b"in-txn", partition=0)
    t.send_offsets_to_transaction([TopicPartition(topic, 0, 1)], c.consumer_group_metadata(), 20)
    t.commit_transaction(20)
    c.close()
    admin.describe_configs([ConfigResource("topic", topic)])[ConfigResource("topic", topic)].result(20)
    admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.latest()})
    admin.list_consumer_groups().result(20)
    admin.describe_consumer_groups([f"{prefix}_g"])[f"{prefix}_g"].result(20)
    admin.describe_cluster().result(20)
    admin.delete_records([TopicPartition(topic, 0, 1)])
    admin.delete_consumer_groups([f"{prefix}_g"])[f"{prefix}_g"].result(20)
    admin.delete_topics([topic])[topic].result(20)


def aiokafka(bootstrap: str, prefix: str) -> None:
    asyncio.run(_aiokafka(bootstrap, prefix))


async def _aiokafka(bootstrap: str, prefix: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topic = f"{prefix}_t"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, 2, 1)])
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                compression_type="lz4")  # fmt: skip
    await producer.start()
    for i in range(20):
        await producer.send_and_wait(topic, b"v%d" % i, key=b"k%d" % i, headers=[("h", b"1")])
    await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"{prefix}_g",
                                auto_offset_reset="earliest", enable_auto_commit=False,
                                isolation_level="read_committed")  # fmt: skip
    await consumer.start()
    await consumer.getmany(timeout_ms=3000)
    await consumer.commit()
    txn = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{prefix}_txn")
    await txn.start()
    async with txn.transaction():
        await txn.send_and_wait(topic, b"in-txn", partition=0)
        from aiokafka.structs import TopicPartition

        await txn.send_offsets_to_transaction({TopicPartition(topic, 0): 1}, f"{prefix}_g")
    await txn.stop()
    await consumer.stop()
    await admin.list_consumer_groups()
    await admin.describe_consumer_groups([f"{prefix}_g"])
    await admin.list_consumer_group_offsets(f"{prefix}_g")
    await admin.delete_topics([topic])
    await admin.close()


JAVA_SCENARIOS = ("produce_consume.zstd", "producer.idempotent_default", "txn.seed", "consumer.group_commit",
                  "eos.send_offsets", "admin.topics", "admin.transactions", "admin.list_offsets_isolation")


def java(bootstrap: str, prefix: str) -> None:
    from compat.javarun import JavaDrivers

    drivers = JavaDrivers.prepare(Path(tempfile.gettempdir()) / "kafka-shim-java")
    drivers.run("KafkaDriver", list(JAVA_SCENARIOS), bootstrap, timeout=300)


ALL = {"kafka-python": kafka_python, "confluent-kafka": confluent, "aiokafka": aiokafka, "java": java}
