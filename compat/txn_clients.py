"""One small adapter per Python client library for the transaction scenarios, with the same
operations for each (compat/test_transactions.py, compat/test_txn_kill9.py); the raw Kafka
protocol connection for the admin requests no client library sends is compat.wire's.

Producers: ``init() begin() send(topic, value, partition) -> offset commit() abort() close()``;
``send`` waits for the acknowledgement and raises the client's own exception; transactional ones
also ``send_offsets(offsets, group_metadata)`` (sendOffsetsToTransaction, offsets as
``{(topic, partition): next offset}``, group metadata as a compat.groups_support member gives it).
Consumers (``assign()``ed, no group): ``seek(offset)``, ``seek_to_beginning()``, ``pump(timeout)``
(one poll; the records are kept in ``.records``), ``position()``, ``end_offset()`` (ListOffsets
latest with the consumer's isolation level), and what the client reports from the last fetch
response where it exposes it: ``highwater()`` and ``lso()`` (None where it does not).
Group members (subscribe()d, manual commits) are compat.groups_support's, through
``Clients.group_member(topic, group)``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time

from compat.groups_support import MEMBERS
from compat.support import wait_for  # noqa: F401  (wait_for is re-exported to the tests)

CLIENT_NAMES = ("kafka-python", "aiokafka", "confluent-kafka")
_group_ids = itertools.count()


# -- kafka-python ----------------------------------------------------------------------------


class KafkaPythonTxnProducer:
    def __init__(self, bootstrap: str, txn_id: str, timeout_ms: int) -> None:
        from kafka import KafkaProducer

        self.p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, transaction_timeout_ms=timeout_ms,
                               max_block_ms=20_000, request_timeout_ms=10_000, retry_backoff_ms=50)

    def init(self) -> None:
        self.p.init_transactions()

    def begin(self) -> None:
        self.p.begin_transaction()

    def send(self, topic: str, value: bytes, partition: int = 0) -> int:
        return self.p.send(topic, value, partition=partition).get(timeout=20).offset

    def commit(self) -> None:
        # After INVALID_PRODUCER_EPOCH on a send, kafka-python bumps its epoch (InitProducerId with its
        # identity) before it knows whether it was fenced; until that answer arrives commit refuses
        # with "Invalid transition ... from state BUMPING_PRODUCER_EPOCH". Wait for the answer.
        from kafka.errors import KafkaError

        deadline = time.monotonic() + 20
        while True:
            try:
                return self.p.commit_transaction()
            except KafkaError as e:
                if "BUMPING_PRODUCER_EPOCH" not in str(e) or time.monotonic() > deadline:
                    raise
            time.sleep(0.02)

    def abort(self) -> None:
        self.p.abort_transaction()

    def send_offsets(self, offsets: dict[tuple[str, int], int], group_metadata) -> None:
        from kafka import TopicPartition
        from kafka.structs import OffsetAndMetadata

        self.p.send_offsets_to_transaction(
            {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}, group_metadata)

    def close(self) -> None:
        self.p.close(timeout=2)

    @staticmethod
    def fenced(exc: BaseException) -> bool:
        from kafka.errors import InvalidProducerEpochError, KafkaError, ProducerFencedError

        if isinstance(exc, (ProducerFencedError, InvalidProducerEpochError)):
            return True
        # a fatal error state: "Cannot execute transactional method because we are in an error state:
        # [Error 90] ProducerFencedError"
        return isinstance(exc, KafkaError) and "ProducerFencedError" in str(exc)


class KafkaPythonPlainProducer:
    def __init__(self, bootstrap: str) -> None:
        from kafka import KafkaProducer

        self.p = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000)

    def send(self, topic: str, value: bytes, partition: int = 0) -> int:
        return self.p.send(topic, value, partition=partition).get(timeout=20).offset

    def close(self) -> None:
        self.p.close(timeout=2)


class KafkaPythonConsumer:
    def __init__(self, bootstrap: str, isolation: str, topic: str, partition: int) -> None:
        from kafka import KafkaConsumer, TopicPartition

        self.records: list[tuple[int, bytes]] = []
        self.tp = TopicPartition(topic, partition)
        self.c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                               auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000)
        self.c.assign([self.tp])
        self.c.seek_to_beginning(self.tp)

    def seek(self, offset: int) -> None:
        self.c.seek(self.tp, offset)

    def pump(self, timeout: float = 0.1) -> list[tuple[int, bytes]]:
        new = [(m.offset, m.value) for ms in self.c.poll(timeout_ms=int(timeout * 1000)).values() for m in ms]
        self.records += new
        return new

    def position(self) -> int | None:
        return self.c.position(self.tp)

    def end_offset(self) -> int:
        return self.c.end_offsets([self.tp])[self.tp]

    def highwater(self) -> int | None:
        return self.c.highwater(self.tp)

    def lso(self) -> int | None:
        return None  # kafka-python keeps no last stable offset

    def close(self) -> None:
        self.c.close(autocommit=False)


# -- aiokafka --------------------------------------------------------------------------------


class _Loop:
    """An event loop on its own thread: aiokafka's background tasks keep running between calls."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="aiokafka-loop", daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn, *args):
        async def run():
            return fn(*args)
        return self.run(run())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class AiokafkaTxnProducer:
    def __init__(self, bootstrap: str, txn_id: str, timeout_ms: int) -> None:
        from aiokafka import AIOKafkaProducer

        self.L = _Loop()

        async def make():
            return AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id,
                                    transaction_timeout_ms=timeout_ms, request_timeout_ms=10_000)
        self.p = self.L.run(make())

    def init(self) -> None:
        self.L.run(self.p.start())  # aiokafka initialises transactions in start()

    def begin(self) -> None:
        self.L.run(self.p.begin_transaction())

    def send(self, topic: str, value: bytes, partition: int = 0) -> int:
        return self.L.run(self.p.send_and_wait(topic, value, partition=partition)).offset

    def commit(self) -> None:
        self.L.run(self.p.commit_transaction())

    def abort(self) -> None:
        self.L.run(self.p.abort_transaction())

    def send_offsets(self, offsets: dict[tuple[str, int], int], group_metadata) -> None:
        from aiokafka import TopicPartition

        # aiokafka takes the group id only (no generation or member id: TxnOffsetCommit without them)
        self.L.run(self.p.send_offsets_to_transaction({TopicPartition(t, p): o for (t, p), o in offsets.items()},
                                                      group_metadata))

    def close(self) -> None:
        try:
            self.L.run(self.p.stop(), 10)
        finally:
            self.L.close()

    @staticmethod
    def fenced(exc: BaseException) -> bool:
        from aiokafka.errors import InvalidProducerEpoch, ProducerFenced

        return isinstance(exc, (ProducerFenced, InvalidProducerEpoch))


class AiokafkaPlainProducer:
    def __init__(self, bootstrap: str) -> None:
        from aiokafka import AIOKafkaProducer

        self.L = _Loop()

        async def start():
            p = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
            await p.start()
            return p
        self.p = self.L.run(start())

    def send(self, topic: str, value: bytes, partition: int = 0) -> int:
        return self.L.run(self.p.send_and_wait(topic, value, partition=partition)).offset

    def close(self) -> None:
        try:
            self.L.run(self.p.stop(), 10)
        finally:
            self.L.close()


class AiokafkaConsumer:
    def __init__(self, bootstrap: str, isolation: str, topic: str, partition: int) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        self.records: list[tuple[int, bytes]] = []
        self.tp = TopicPartition(topic, partition)
        self.L = _Loop()

        async def start():
            c = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                 auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000)
            await c.start()
            c.assign([self.tp])
            await c.seek_to_beginning(self.tp)
            return c
        self.c = self.L.run(start())

    def seek(self, offset: int) -> None:
        self.L.call(self.c.seek, self.tp, offset)

    def pump(self, timeout: float = 0.1) -> list[tuple[int, bytes]]:
        got = self.L.run(self.c.getmany(self.tp, timeout_ms=int(timeout * 1000)))
        new = [(m.offset, m.value) for ms in got.values() for m in ms]
        self.records += new
        return new

    def position(self) -> int | None:
        return self.L.run(self.c.position(self.tp))

    def end_offset(self) -> int:
        return self.L.run(self.c.end_offsets([self.tp]))[self.tp]

    def highwater(self) -> int | None:
        return self.L.call(self.c.highwater, self.tp)

    def lso(self) -> int | None:
        return self.L.call(self.c.last_stable_offset, self.tp)

    def close(self) -> None:
        try:
            self.L.run(self.c.stop(), 10)
        finally:
            self.L.close()


# -- confluent-kafka (librdkafka) -------------------------------------------------------------


class ConfluentTxnProducer:
    def __init__(self, bootstrap: str, txn_id: str, timeout_ms: int) -> None:
        import confluent_kafka as ck

        self.p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                              "transaction.timeout.ms": timeout_ms, "log_level": 2})

    def init(self) -> None:
        self.p.init_transactions(20)

    def begin(self) -> None:
        self.p.begin_transaction()

    def send(self, topic: str, value: bytes, partition: int = 0) -> int:
        import confluent_kafka as ck

        reports = []
        self.p.produce(topic, value, partition=partition, on_delivery=lambda err, msg: reports.append((err, msg)))

        def delivered():
            self.p.poll(0.05)  # serves the delivery report callback
            return reports
        wait_for(delivered, 20, 0, "the delivery report")
        err, msg = reports[0]
        if err is not None:
            raise ck.KafkaException(err)
        return msg.offset()

    def commit(self) -> None:
        self.p.commit_transaction(20)

    def abort(self) -> None:
        self.p.abort_transaction(20)

    def send_offsets(self, offsets: dict[tuple[str, int], int], group_metadata) -> None:
        import confluent_kafka as ck

        self.p.send_offsets_to_transaction([ck.TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                                           group_metadata, 20)

    def close(self) -> None:
        self.p.flush(0)
        del self.p

    @staticmethod
    def fenced(exc: BaseException) -> bool:
        import confluent_kafka as ck

        if not isinstance(exc, ck.KafkaException) or not exc.args:
            return False
        err = exc.args[0]
        return err.fatal() and err.code() in (ck.KafkaError._FENCED, ck.KafkaError.PRODUCER_FENCED,
                                              ck.KafkaError.INVALID_PRODUCER_EPOCH)


class ConfluentPlainProducer:
    def __init__(self, bootstrap: str) -> None:
        import confluent_kafka as ck

        self.p = ck.Producer({"bootstrap.servers": bootstrap, "log_level": 2})

    send = ConfluentTxnProducer.send

    def close(self) -> None:
        self.p.flush(5)
        del self.p


class ConfluentConsumer:
    def __init__(self, bootstrap: str, isolation: str, topic: str, partition: int) -> None:
        import confluent_kafka as ck

        self.records: list[tuple[int, bytes]] = []
        self.stats: dict = {}
        self.tp = ck.TopicPartition(topic, partition)
        self.c = ck.Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"txn-compat-{next(_group_ids)}",
            "isolation.level": isolation, "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100, "statistics.interval.ms": 100, "stats_cb": self._on_stats, "log_level": 2,
        })  # fmt: skip
        self.c.assign([ck.TopicPartition(topic, partition, ck.OFFSET_BEGINNING)])

    def _on_stats(self, raw: str) -> None:
        part = json.loads(raw).get("topics", {}).get(self.tp.topic, {}).get("partitions", {}).get(str(self.tp.partition))
        if part is not None:
            self.stats = part

    def seek(self, offset: int) -> None:
        import confluent_kafka as ck

        wait_for(lambda: self._try_seek(ck.TopicPartition(self.tp.topic, self.tp.partition, offset)), 10, 0.05,
                 "a seek the consumer accepts")

    def _try_seek(self, tp) -> bool:
        import confluent_kafka as ck

        try:
            self.c.seek(tp)
        except ck.KafkaException:  # "Erroneous state" until the partition is fetching
            self.pump(0.05)
            return False
        return True

    def pump(self, timeout: float = 0.1) -> list[tuple[int, bytes]]:
        new = []
        for m in self.c.consume(500, timeout):
            if m.error() is not None:
                raise AssertionError(f"consumer error: {m.error()}")
            new.append((m.offset(), m.value()))
        self.records += new
        return new

    def position(self) -> int | None:
        import confluent_kafka as ck

        offset = self.c.position([ck.TopicPartition(self.tp.topic, self.tp.partition)])[0].offset
        return None if offset < 0 else offset

    def end_offset(self) -> int:
        import confluent_kafka as ck

        return self.c.get_watermark_offsets(ck.TopicPartition(self.tp.topic, self.tp.partition), 10, cached=False)[1]

    def highwater(self) -> int | None:
        return self.stats.get("hi_offset")  # librdkafka's statistics: the fetch response's HighWatermark

    def lso(self) -> int | None:
        return self.stats.get("ls_offset")  # ... and its LastStableOffset

    def close(self) -> None:
        self.c.close()


ADAPTERS = {
    "kafka-python": (KafkaPythonTxnProducer, KafkaPythonPlainProducer, KafkaPythonConsumer),
    "aiokafka": (AiokafkaTxnProducer, AiokafkaPlainProducer, AiokafkaConsumer),
    "confluent-kafka": (ConfluentTxnProducer, ConfluentPlainProducer, ConfluentConsumer),
}


class Clients:
    """Creates one library's producers and consumers and closes whatever a test left open."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        self.bootstrap = bootstrap
        self._txn, self._plain, self._consumer = ADAPTERS[name]
        self._open: list = []

    def _keep(self, obj):
        self._open.append(obj)
        return obj

    def txn_producer(self, txn_id: str, timeout_ms: int = 60_000, init: bool = True):
        p = self._keep(self._txn(self.bootstrap, txn_id, timeout_ms))
        if init:
            p.init()
        return p

    def plain_producer(self):
        return self._keep(self._plain(self.bootstrap))

    def consumer(self, isolation: str, topic: str, partition: int = 0):
        return self._keep(self._consumer(self.bootstrap, isolation, topic, partition))

    def group_member(self, topic: str, group: str, **kw):
        """A subscribe()d member of ``group`` (compat.groups_support), polled by the caller."""
        return self._keep(MEMBERS[self.name](self.bootstrap, topic, group, **kw))

    def fenced(self, exc: BaseException) -> bool:
        return self._txn.fenced(exc)

    def close(self, obj) -> None:
        self._open.remove(obj)
        obj.close()

    def close_all(self) -> None:
        for obj in reversed(self._open):
            try:
                obj.close()
            except Exception:  # a fenced or fatally failed client may refuse a clean close
                pass
        self._open.clear()


def settle(consumer, offset: int, timeout: float = 20.0) -> list[tuple[int, bytes]]:
    """Poll until the consumer's position is ``offset``; returns every record it received so far."""
    def there():
        consumer.pump(0.1)
        return consumer.position() == offset
    wait_for(there, timeout, 0, f"position {offset} (at {consumer.position()}, records {consumer.records})")
    return consumer.records


def expect_failure(fn, *args):
    """The exception ``fn(*args)`` raises; fails the test if it returns."""
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 -- the client's own exception is what is checked
        return exc
    raise AssertionError(f"{getattr(fn, '__name__', fn)} succeeded")
