"""The transactions seed scenario and a consumer group, per Python client, for the ACL tests.

``seed(topic, txn_a, txn_b)``: transactional producer ``txn_a`` writes a-1, a-2 and aborts, a plain
(idempotent) producer writes plain-1, transactional producer ``txn_b`` writes b-1, b-2 and commits.
``group_read(topic, group, count)``: a consumer in ``group`` subscribed to ``topic`` reads
read_committed from the earliest offset, commits its position, and returns the values and the
committed offset (past b-2's offset 5: 7 once the client has read the commit marker, 6 before).
Failures are the client's own exceptions; ``error_text`` gives what to look for in them.
"""

from __future__ import annotations

import asyncio
import logging
import time

from compat.security_clients import Security, _ak, _ck, _kp, getmany_values, poll_values

TIMEOUT = 30


class _Collect(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record) -> None:
        self.lines.append(f"{record.name} {record.getMessage()}")


class KafkaPythonAcl:
    name = "kafka-python"

    def __init__(self, s: Security) -> None:
        self.kw = _kp(s)

    def _txn(self, topic, txn_id, values, commit):
        from kafka import KafkaProducer
        producer = KafkaProducer(transactional_id=txn_id, max_block_ms=TIMEOUT * 1000, **self.kw)
        try:
            producer.init_transactions()
            producer.begin_transaction()
            for v in values:
                producer.send(topic, v, partition=0).get(timeout=TIMEOUT)
            producer.commit_transaction() if commit else producer.abort_transaction()
        finally:
            producer.close(timeout=5)

    def seed(self, topic, txn_a, txn_b):
        from kafka import KafkaProducer
        self._txn(topic, txn_a, [b"a-1", b"a-2"], False)
        producer = KafkaProducer(acks="all", max_block_ms=TIMEOUT * 1000, **self.kw)
        try:
            producer.send(topic, b"plain-1", partition=0).get(timeout=TIMEOUT)
        finally:
            producer.close(timeout=5)
        self._txn(topic, txn_b, [b"b-1", b"b-2"], True)

    def group_read(self, topic, group, count):
        from kafka import KafkaConsumer, TopicPartition
        consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", isolation_level="read_committed",
                                 enable_auto_commit=False, **self.kw)
        try:
            got = poll_values(consumer, count, TIMEOUT)
            consumer.commit()
            return got, consumer.committed(TopicPartition(topic, 0))
        finally:
            consumer.close(autocommit=False)


class ConfluentKafkaAcl:
    name = "confluent-kafka"

    def __init__(self, s: Security) -> None:
        self.conf = _ck(s)

    def _txn(self, topic, txn_id, values, commit):
        """A failed AddPartitionsToTxn purges the queued records and fails the transaction; librdkafka
        names the broker's error in its TXNERR log line, which is added to the exception raised."""
        from confluent_kafka import KafkaException, Producer
        logs: list[str] = []
        logger = logging.getLogger(f"rdkafka-{txn_id}")
        logger.addHandler(_Collect(logs))
        producer = Producer({**self.conf, "transactional.id": txn_id, "logger": logger})
        try:
            producer.init_transactions(TIMEOUT)
            producer.begin_transaction()
            errors = []
            for v in values:
                producer.produce(topic, v, partition=0, on_delivery=lambda err, msg: err and errors.append(err))
            producer.flush(TIMEOUT)  # an abort purges what is still queued: send it first
            if errors:
                raise KafkaException(errors[0])
            producer.commit_transaction(TIMEOUT) if commit else producer.abort_transaction(TIMEOUT)
        except KafkaException as exc:
            raise KafkaException(f"{exc}; {' '.join(line for line in logs if 'TXNERR' in line or 'ADDPARTS' in line)}")

    def seed(self, topic, txn_a, txn_b):
        from confluent_kafka import KafkaException, Producer
        self._txn(topic, txn_a, [b"a-1", b"a-2"], False)
        errors = []
        producer = Producer({**self.conf, "enable.idempotence": True, "message.timeout.ms": TIMEOUT * 1000})
        producer.produce(topic, b"plain-1", partition=0, on_delivery=lambda err, msg: err and errors.append(err))
        producer.flush(TIMEOUT)
        if errors:
            raise KafkaException(errors[0])
        self._txn(topic, txn_b, [b"b-1", b"b-2"], True)

    def group_read(self, topic, group, count):
        from confluent_kafka import Consumer, KafkaException, TopicPartition
        consumer = Consumer({**self.conf, "group.id": group, "enable.auto.commit": False,
                             "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
        try:
            consumer.subscribe([topic])
            got, deadline = [], time.monotonic() + TIMEOUT
            while len(got) < count and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is None:
                    continue
                if m.error() is not None:
                    raise KafkaException(m.error())
                got.append(m.value())
            consumer.commit(offsets=consumer.position(consumer.assignment()), asynchronous=False)
            committed = consumer.committed([TopicPartition(topic, 0)], TIMEOUT)[0].offset
            return got, committed
        finally:
            consumer.close()


class AioKafkaAcl:
    name = "aiokafka"

    def __init__(self, s: Security) -> None:
        self.s = s

    async def _txn(self, topic, txn_id, values, commit):
        from aiokafka import AIOKafkaProducer
        producer = AIOKafkaProducer(transactional_id=txn_id, request_timeout_ms=TIMEOUT * 1000, **_ak(self.s))
        await producer.start()
        try:
            await producer.begin_transaction()
            for v in values:
                await producer.send_and_wait(topic, v, partition=0)
            await (producer.commit_transaction() if commit else producer.abort_transaction())
        finally:
            await producer.stop()

    async def _seed(self, topic, txn_a, txn_b):
        from aiokafka import AIOKafkaProducer
        await self._txn(topic, txn_a, [b"a-1", b"a-2"], False)
        producer = AIOKafkaProducer(enable_idempotence=True, **_ak(self.s))
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"plain-1", partition=0)
        finally:
            await producer.stop()
        await self._txn(topic, txn_b, [b"b-1", b"b-2"], True)

    def seed(self, topic, txn_a, txn_b):
        asyncio.run(asyncio.wait_for(self._seed(topic, txn_a, txn_b), TIMEOUT * 2))

    async def _group_read(self, topic, group, count):
        from aiokafka import AIOKafkaConsumer, TopicPartition
        consumer = AIOKafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                                    isolation_level="read_committed", enable_auto_commit=False, **_ak(self.s))
        await consumer.start()
        try:
            got = await getmany_values(consumer, count, TIMEOUT)
            await consumer.commit()
            return got, await consumer.committed(TopicPartition(topic, 0))
        finally:
            await consumer.stop()

    def group_read(self, topic, group, count):
        return asyncio.run(asyncio.wait_for(self._group_read(topic, group, count), TIMEOUT * 2))


ACL_CLIENTS = (KafkaPythonAcl, ConfluentKafkaAcl, AioKafkaAcl)


def error_text(exc: BaseException) -> str:
    """The exception's type and text (confluent-kafka's carries the error's name)."""
    return f"{type(exc).__name__}: {exc}"
