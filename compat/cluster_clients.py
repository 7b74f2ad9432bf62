"""One client library driven step by step, so a test can change the simulated cluster between
steps (compat/test_cluster.py): ``producer(txn_id)``, ``send(topic, partition, lo, hi)`` (values
lo..hi-1, flushed; returns (acked, errors)), ``begin/commit/abort``, ``consumer(group, topic,
isolation)``, ``poll(count, timeout_s)`` (values, offsets committed), ``serve_until(condition,
timeout_s)`` (the consumer runs, with no record due, until the broker's state satisfies
``condition``), ``close()``.

Every producer is idempotent with acks=all; every consumer starts from the earliest offset and
commits by hand.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time


def _serve_until(condition, timeout_s: float, serve) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the state was not reached"
        assert not serve(), "a record arrived while none was due"


class ConfluentSteps:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap, self.p, self.c = bootstrap, None, None

    def producer(self, txn_id=None):
        import confluent_kafka as ck

        conf = {"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "acks": "all", "log_level": 2,
                "retry.backoff.ms": 50, "linger.ms": 0}
        if txn_id:
            conf["transactional.id"] = txn_id
        self.p = ck.Producer(conf)
        if txn_id:
            self.p.init_transactions(30)

    def send(self, topic, partition, lo, hi):
        reports = []
        for i in range(lo, hi):
            self.p.produce(topic, str(i).encode(), partition=partition, on_delivery=lambda e, m: reports.append(e))
        self.p.flush(60)
        errors = [str(e) for e in reports if e is not None]
        return len(reports) - len(errors), errors

    def begin(self):
        self.p.begin_transaction()

    def commit(self):
        self.p.commit_transaction(60)

    def abort(self):
        self.p.abort_transaction(60)

    def consumer(self, group, topic, isolation="read_uncommitted"):
        import confluent_kafka as ck

        self.c = ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                              "enable.auto.commit": False, "isolation.level": isolation, "log_level": 2,
                              "retry.backoff.ms": 50})
        self.c.subscribe([topic])

    def poll(self, count, timeout_s):
        values, deadline = [], time.monotonic() + timeout_s
        while len(values) < count and time.monotonic() < deadline:
            m = self.c.poll(0.2)
            if m is not None and not m.error():
                values.append(int(m.value()))
        if values:
            self.c.commit(asynchronous=False)
        return values

    def serve_until(self, condition, timeout_s):
        def serve():
            m = self.c.poll(0.1)
            return m is not None and not m.error()
        _serve_until(condition, timeout_s, serve)

    def close(self):
        if self.c is not None:
            self.c.close()
        if self.p is not None:
            self.p.flush(10)


class KafkaPythonSteps:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap, self.p, self.c = bootstrap, None, None

    def producer(self, txn_id=None):
        from kafka import KafkaProducer

        self.p = KafkaProducer(bootstrap_servers=self.bootstrap, enable_idempotence=True, acks="all",
                               transactional_id=txn_id, retry_backoff_ms=50, request_timeout_ms=30_000)
        if txn_id:
            self.p.init_transactions()

    def send(self, topic, partition, lo, hi):
        futures = [self.p.send(topic, str(i).encode(), partition=partition) for i in range(lo, hi)]
        self.p.flush(60)
        errors = [repr(f.exception) for f in futures if f.failed()]
        return len(futures) - len(errors), errors

    def begin(self):
        self.p.begin_transaction()

    def commit(self):
        self.p.commit_transaction()

    def abort(self):
        self.p.abort_transaction()

    def consumer(self, group, topic, isolation="read_uncommitted"):
        from kafka import KafkaConsumer

        self.c = KafkaConsumer(topic, bootstrap_servers=self.bootstrap, group_id=group, auto_offset_reset="earliest",
                               enable_auto_commit=False, isolation_level=isolation, retry_backoff_ms=50)

    def poll(self, count, timeout_s):
        values, deadline = [], time.monotonic() + timeout_s
        while len(values) < count and time.monotonic() < deadline:
            for records in self.c.poll(200).values():
                values += [int(r.value) for r in records]
        if values:
            self.c.commit()
        return values

    def serve_until(self, condition, timeout_s):
        _serve_until(condition, timeout_s, lambda: self.c.poll(100))

    def close(self):
        if self.c is not None:
            self.c.close()
        if self.p is not None:
            self.p.close(5)


class AioKafkaSteps:
    """aiokafka on a loop of its own, each step run to completion on it."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap, self.p, self.c = bootstrap, None, None
        self.loop = asyncio.new_event_loop()

    def _run(self, coro):
        return self.loop.run_until_complete(coro)

    def producer(self, txn_id=None):
        from aiokafka import AIOKafkaProducer

        async def start():
            p = AIOKafkaProducer(bootstrap_servers=self.bootstrap, enable_idempotence=True, acks="all",
                                 transactional_id=txn_id, retry_backoff_ms=50, request_timeout_ms=30_000)
            await p.start()
            return p
        self.p = self._run(start())

    def send(self, topic, partition, lo, hi):
        async def send():
            futures = [await self.p.send(topic, str(i).encode(), partition=partition) for i in range(lo, hi)]
            results = await asyncio.gather(*futures, return_exceptions=True)
            return [repr(r) for r in results if isinstance(r, BaseException)]
        errors = self._run(send())
        return hi - lo - len(errors), errors

    def begin(self):
        self._run(self.p.begin_transaction())

    def commit(self):
        self._run(self.p.commit_transaction())

    def abort(self):
        self._run(self.p.abort_transaction())

    def consumer(self, group, topic, isolation="read_uncommitted"):
        from aiokafka import AIOKafkaConsumer

        async def start():
            c = AIOKafkaConsumer(topic, bootstrap_servers=self.bootstrap, group_id=group, auto_offset_reset="earliest",
                                 enable_auto_commit=False, isolation_level=isolation, retry_backoff_ms=50)
            await c.start()
            return c
        self.c = self._run(start())

    def poll(self, count, timeout_s):
        async def poll():
            values, deadline = [], time.monotonic() + timeout_s
            while len(values) < count and time.monotonic() < deadline:
                for records in (await self.c.getmany(timeout_ms=200)).values():
                    values.extend(int(r.value) for r in records)
            if values:
                await self.c.commit()
            return values
        return self._run(poll())

    def serve_until(self, condition, timeout_s):  # aiokafka heartbeats only while its loop runs
        _serve_until(condition, timeout_s, lambda: self._run(self.c.getmany(timeout_ms=100)))

    def close(self):
        async def stop():
            if self.c is not None:
                await self.c.stop()
            if self.p is not None:
                await self.p.stop()
        self._run(stop())
        self.loop.close()


class JavaSteps:
    """compat/java/ClusterDriver.java: one command a line, one JSON answer a line."""

    def __init__(self, bootstrap: str, drivers) -> None:
        self.proc = subprocess.Popen(drivers.command("ClusterDriver", "steps", bootstrap), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def _do(self, *words):
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"ClusterDriver exited on {words}")
            if line.startswith("{"):
                answer = json.loads(line)
                if not answer.get("ok"):
                    raise RuntimeError(f"{words}: {answer.get('error')}")
                return answer

    def producer(self, txn_id=None):
        self._do("producer", *([txn_id] if txn_id else []))

    def send(self, topic, partition, lo, hi):
        a = self._do("send", topic, partition, lo, hi)
        return a["acked"], a["errors"]

    def begin(self):
        self._do("begin")

    def commit(self):
        self._do("commit")

    def abort(self):
        self._do("abort")

    def consumer(self, group, topic, isolation="read_uncommitted"):
        self._do("consumer", group, topic, isolation)

    def poll(self, count, timeout_s):
        return self._do("poll", count, int(timeout_s * 1000))["values"]

    def serve_until(self, condition, timeout_s):  # polls: the Java consumer rejoins a rebalance only from poll
        _serve_until(condition, timeout_s, lambda: self._do("serve", 100)["count"] > 0)

    def close(self):
        try:
            self._do("close")
        finally:
            self.proc.wait(30)


CLIENTS = ("java", "confluent", "kafka-python", "aiokafka")
_PY = {"confluent": ConfluentSteps, "kafka-python": KafkaPythonSteps, "aiokafka": AioKafkaSteps}


def steps(name: str, bootstrap: str, java_drivers=None):
    return JavaSteps(bootstrap, java_drivers) if name == "java" else _PY[name](bootstrap)
