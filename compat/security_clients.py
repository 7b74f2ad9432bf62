"""The three Python clients and kcat configured for a secured listener, with the same operations each:
``produce(topic, values)``, ``consume(topic, count, isolation)`` (from the beginning, no group),
``transaction(topic, committed, aborted)`` (an aborted then a committed transaction; an empty list
is no transaction; kcat has none: ``transactional`` says so), ``group(topic, group_id, count)``
(subscribe as a member of the group, read ``count`` values, commit them, leave) and ``auth_error()``
(what the client reports when it cannot authenticate, as text).

``Security`` holds a client's settings in neutral terms: protocol, mechanism, user, password, CA
file, and a client certificate and key for mutual TLS.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass

from compat.support import wait_for


@dataclass(frozen=True)
class Security:
    bootstrap: str
    protocol: str
    mechanism: str | None = None
    user: str | None = None
    password: str | None = None
    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None


class _Client:
    def __init__(self, s: Security) -> None:
        self.s = s


def _python_client(s: Security) -> dict:
    """The settings kafka-python and aiokafka share (aiokafka takes TLS as an SSLContext)."""
    kw = dict(bootstrap_servers=s.bootstrap, security_protocol=s.protocol)
    if s.mechanism:
        kw.update(sasl_mechanism=s.mechanism, sasl_plain_username=s.user, sasl_plain_password=s.password)
    return kw


def _librdkafka(s: Security, mechanism_key: str) -> dict:
    """librdkafka's settings (confluent-kafka names the mechanism ``sasl.mechanism``, kcat the
    original ``sasl.mechanisms``)."""
    conf = {"security.protocol": s.protocol}
    if s.mechanism:
        conf.update({mechanism_key: s.mechanism, "sasl.username": s.user, "sasl.password": s.password})
    if "SSL" in s.protocol:
        conf["ssl.ca.location"] = s.cafile
        if s.certfile:
            conf.update({"ssl.certificate.location": s.certfile, "ssl.key.location": s.keyfile})
    return conf


# -- kafka-python --------------------------------------------------------------------------------

def _kp(s: Security) -> dict:
    kw = _python_client(s)
    if "SSL" in s.protocol:
        kw.update(ssl_cafile=s.cafile, ssl_certfile=s.certfile, ssl_keyfile=s.keyfile)
    return kw


def poll_values(consumer, count: int, timeout_s: float = 30) -> list[bytes]:
    """Up to ``count`` values a kafka-python consumer reads within ``timeout_s``."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            got += [m.value for m in batch]
    return got


class KafkaPython(_Client):
    name = "kafka-python"
    transactional = True

    def produce(self, topic: str, values: list[bytes]) -> None:
        from kafka import KafkaProducer
        producer = KafkaProducer(acks="all", **_kp(self.s))
        for v in values:
            producer.send(topic, v, partition=0).get(timeout=20)
        producer.close()

    def transaction(self, topic: str, committed: list[bytes], aborted: list[bytes]) -> None:
        from kafka import KafkaProducer
        producer = KafkaProducer(transactional_id=f"kp-{uuid.uuid4()}", **_kp(self.s))
        producer.init_transactions()
        for values, end in ((aborted, producer.abort_transaction), (committed, producer.commit_transaction)):
            if not values:
                continue
            producer.begin_transaction()
            for v in values:
                producer.send(topic, v, partition=0).get(timeout=20)
            end()
        producer.close()

    def consume(self, topic: str, count: int, isolation: str = "read_uncommitted") -> list[bytes]:
        from kafka import KafkaConsumer, TopicPartition
        consumer = KafkaConsumer(group_id=None, auto_offset_reset="earliest", isolation_level=isolation, **_kp(self.s))
        consumer.assign([TopicPartition(topic, 0)])
        got = poll_values(consumer, count)
        consumer.close()
        return got

    def group(self, topic: str, group_id: str, count: int) -> list[bytes]:
        from kafka import KafkaConsumer
        consumer = KafkaConsumer(topic, group_id=group_id, auto_offset_reset="earliest", enable_auto_commit=False,
                                 **_kp(self.s))
        got = poll_values(consumer, count)
        consumer.commit()
        consumer.close()
        return got

    def auth_error(self) -> str:
        """The errors kafka-python logs and raises for one connection to the bootstrap server: its
        bootstrap would retry (and only say it failed) until bootstrap_timeout_ms, so the
        connection's own outcome is awaited instead, as for aiokafka."""
        from kafka.net.compat import KafkaNetClient
        messages: list[str] = []
        handler = logging.Handler(logging.ERROR)
        handler.emit = lambda record: messages.append(record.getMessage())
        logger = logging.getLogger("kafka")
        logger.addHandler(handler)
        client = KafkaNetClient(**_kp(self.s))
        try:
            conn = client._manager.get_connection("bootstrap-0")
            client._net.poll(timeout_ms=20000, future=conn.init_future)
            if conn.init_future.failed():
                failure = conn.init_future.exception
                messages.append(f"raised {type(failure).__name__}: {failure}")
            else:
                messages.append("connected")
        finally:
            client.close()
            logger.removeHandler(handler)
        return "\n".join(messages)


# -- confluent-kafka -----------------------------------------------------------------------------

def _ck(s: Security) -> dict:
    return {"bootstrap.servers": s.bootstrap, **_librdkafka(s, "sasl.mechanism")}


def _poll_confluent(consumer, count: int) -> list[bytes]:
    """Up to ``count`` values within 30 s (an error event is passed over)."""
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    return got


class ConfluentKafka(_Client):
    name = "confluent-kafka"
    transactional = True

    def _send(self, producer, topic: str, values: list[bytes]) -> None:
        for v in values:
            producer.produce(topic, v, partition=0)
        assert producer.flush(30) == 0

    def produce(self, topic: str, values: list[bytes]) -> None:
        from confluent_kafka import Producer
        self._send(Producer({**_ck(self.s), "acks": "all"}), topic, values)

    def transaction(self, topic: str, committed: list[bytes], aborted: list[bytes]) -> None:
        from confluent_kafka import Producer
        producer = Producer({**_ck(self.s), "transactional.id": f"ck-{uuid.uuid4()}"})
        producer.init_transactions(30)
        for values, end in ((aborted, producer.abort_transaction), (committed, producer.commit_transaction)):
            if values:
                producer.begin_transaction()
                self._send(producer, topic, values)
                end(30)

    def consume(self, topic: str, count: int, isolation: str = "read_uncommitted") -> list[bytes]:
        from confluent_kafka import Consumer, TopicPartition
        consumer = Consumer({**_ck(self.s), "group.id": f"g-{uuid.uuid4()}", "enable.auto.commit": False,
                             "isolation.level": isolation, "auto.offset.reset": "earliest"})
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = _poll_confluent(consumer, count)
        consumer.close()
        return got

    def group(self, topic: str, group_id: str, count: int) -> list[bytes]:
        from confluent_kafka import Consumer
        consumer = Consumer({**_ck(self.s), "group.id": group_id, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        got = _poll_confluent(consumer, count)
        consumer.commit(asynchronous=False)
        consumer.close()
        return got

    def auth_error(self) -> str:
        """The errors (error_cb) and the connection failures librdkafka logs."""
        from confluent_kafka import Producer
        errors: list = []
        logs: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: logs.append(record.getMessage())
        logger = logging.getLogger(f"rdkafka-{uuid.uuid4()}")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        producer = Producer({**_ck(self.s), "error_cb": errors.append, "logger": logger})
        try:
            wait_for(lambda: producer.poll(0.1) is not None and errors and logs, 20, message="an error from librdkafka")
        finally:
            logger.removeHandler(handler)
        return "\n".join([f"{e.name()}: {e.str()}" for e in errors] + logs)


# -- aiokafka ------------------------------------------------------------------------------------

def _ak(s: Security) -> dict:
    kw = _python_client(s)
    if "SSL" in s.protocol:
        from aiokafka.helpers import create_ssl_context
        kw["ssl_context"] = create_ssl_context(cafile=s.cafile, certfile=s.certfile, keyfile=s.keyfile)
    return kw


async def getmany_values(consumer, count: int, timeout_s: float = 30) -> list[bytes]:
    """Up to ``count`` values an aiokafka consumer reads within ``timeout_s``."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        for batch in (await consumer.getmany(timeout_ms=500)).values():
            got += [m.value for m in batch]
    return got


class AioKafka(_Client):
    name = "aiokafka"
    transactional = True

    def produce(self, topic: str, values: list[bytes]) -> None:
        asyncio.run(self._produce(topic, values, None))

    def transaction(self, topic: str, committed: list[bytes], aborted: list[bytes]) -> None:
        asyncio.run(self._produce(topic, committed, aborted))

    async def _produce(self, topic: str, values: list[bytes], aborted: list[bytes] | None) -> None:
        from aiokafka import AIOKafkaProducer
        extra = {"acks": "all"} if aborted is None else {"transactional_id": f"ak-{uuid.uuid4()}"}
        producer = AIOKafkaProducer(**_ak(self.s), **extra)
        await producer.start()
        try:
            if aborted is None:
                for v in values:
                    await producer.send_and_wait(topic, v, partition=0)
                return
            for batch, commit in ((aborted, False), (values, True)):
                if not batch:
                    continue
                await producer.begin_transaction()
                for v in batch:
                    await producer.send_and_wait(topic, v, partition=0)
                await (producer.commit_transaction() if commit else producer.abort_transaction())
        finally:
            await producer.stop()

    def consume(self, topic: str, count: int, isolation: str = "read_uncommitted") -> list[bytes]:
        return asyncio.run(self._consume(topic, count, isolation))

    async def _consume(self, topic: str, count: int, isolation: str) -> list[bytes]:
        from aiokafka import AIOKafkaConsumer, TopicPartition
        consumer = AIOKafkaConsumer(group_id=None, auto_offset_reset="earliest", isolation_level=isolation, **_ak(self.s))
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 0)])
            await consumer.seek_to_beginning()
            got = await getmany_values(consumer, count)
            return got
        finally:
            await consumer.stop()

    def group(self, topic: str, group_id: str, count: int) -> list[bytes]:
        return asyncio.run(self._group(topic, group_id, count))

    async def _group(self, topic: str, group_id: str, count: int) -> list[bytes]:
        from aiokafka import AIOKafkaConsumer
        consumer = AIOKafkaConsumer(topic, group_id=group_id, auto_offset_reset="earliest", enable_auto_commit=False,
                                    **_ak(self.s))
        await consumer.start()
        try:
            got = await getmany_values(consumer, count)
            await consumer.commit()
            return got
        finally:
            await consumer.stop()

    def auth_error(self) -> str:
        """aiokafka's bootstrap hides the cause; its connection raises the broker's error itself."""
        async def connect() -> str:
            from aiokafka.conn import create_conn
            host, port = self.s.bootstrap.split(",")[0].rsplit(":", 1)
            kw = _ak(self.s)
            kw.pop("bootstrap_servers")
            try:
                conn = await create_conn(host, int(port), **kw)
            except Exception as exc:
                return f"{type(exc).__name__}: {exc}"
            conn.close()
            return "connected"
        return asyncio.run(connect())


# -- kcat ----------------------------------------------------------------------------------------

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def _kcat_settings(s: Security) -> list[str]:
    conf = _librdkafka(s, "sasl.mechanisms")
    return ["-b", s.bootstrap, *(arg for k, v in conf.items() for arg in ("-X", f"{k}={v}"))]


class Kcat(_Client):
    """kcat (its own librdkafka: 2.0.2 in kcat 1.7.1 of Debian), values one a line."""

    name = "kcat"
    transactional = False  # kcat -P has no abort; the seed is written by another client

    def _run(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([KCAT, *_kcat_settings(self.s), *args], input=stdin, capture_output=True, text=True,
                              timeout=60)
        assert not check or proc.returncode == 0, f"kcat {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}"
        return proc

    def produce(self, topic: str, values: list[bytes]) -> None:
        self._run("-P", "-t", topic, "-p", "0", "-X", "acks=all", stdin="".join(v.decode() + "\n" for v in values))

    def consume(self, topic: str, count: int, isolation: str = "read_uncommitted") -> list[bytes]:
        out = self._run("-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-c", str(count),
                        "-X", f"isolation.level={isolation}").stdout
        return [line.encode() for line in out.splitlines()]

    def group(self, topic: str, group_id: str, count: int) -> list[bytes]:
        # -G: a balanced consumer (subscribe); its offsets are committed when it leaves after -c values
        out = self._run("-G", group_id, "-q", "-c", str(count), "-X", "auto.offset.reset=earliest", topic).stdout
        return [line.encode() for line in out.splitlines()]

    def auth_error(self) -> str:
        proc = self._run("-L", "-m", "3", check=False)  # librdkafka reports the failure within the wait
        return f"exit {proc.returncode}: {proc.stderr}"


CLIENTS = (KafkaPython, ConfluentKafka, AioKafka)
