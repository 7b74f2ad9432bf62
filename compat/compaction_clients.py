"""Keyed producers (plain and transactional) and read-to-the-end consumers of each client library,
for the log compaction scenarios (compat/test_compaction.py).

``produce(bootstrap, topic, records, txn_id=None, commit=True)`` writes (key, value-or-None) pairs,
in one transaction when ``txn_id`` is given (committed or aborted); ``consume(bootstrap, topic,
isolation, end)`` reads partition 0 from the beginning until its position reaches ``end`` and
returns (offset, key, value) triples as the client delivered them.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time

DEADLINE_S = 30


def _until(end: int, poll, position) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while position() < end:
        if time.monotonic() > deadline:
            raise AssertionError(f"position {position()} never reached {end}")
        poll()


# -- confluent-kafka -------------------------------------------------------------------------


def ck_produce(bootstrap, topic, records, txn_id=None, commit=True):
    import confluent_kafka as ck

    conf = {"bootstrap.servers": bootstrap, "linger.ms": 0, "enable.idempotence": True}
    if txn_id:
        conf["transactional.id"] = txn_id
    p = ck.Producer(conf)
    if txn_id:
        p.init_transactions(20)
        p.begin_transaction()
    for key, value in records:
        p.produce(topic, key=key, value=value, partition=0)
        p.flush(20)
    if txn_id:
        (p.commit_transaction if commit else p.abort_transaction)(20)


def ck_consume(bootstrap, topic, isolation, end):
    import confluent_kafka as ck

    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-{isolation}", "enable.auto.commit": False,
                     "isolation.level": isolation, "auto.offset.reset": "earliest"})
    out = []
    try:
        c.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])

        def poll():
            m = c.poll(0.2)
            if m is not None and not m.error():
                out.append((m.offset(), m.key(), m.value()))

        _until(end, poll, lambda: max(c.position([ck.TopicPartition(topic, 0)])[0].offset, 0))
    finally:
        c.close()
    return out


# -- kafka-python ----------------------------------------------------------------------------


def kp_produce(bootstrap, topic, records, txn_id=None, commit=True):
    from kafka import KafkaProducer

    kw = {"transactional_id": txn_id} if txn_id else {"enable_idempotence": True}
    p = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000, max_block_ms=20_000, **kw)
    try:
        if txn_id:
            p.init_transactions()
            p.begin_transaction()
        for key, value in records:
            p.send(topic, key=key, value=value, partition=0).get(timeout=20)
        if txn_id:
            (p.commit_transaction if commit else p.abort_transaction)()
    finally:
        p.close(timeout=5)


def kp_consume(bootstrap, topic, isolation, end):
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, 0)
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                      auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000)
    out = []
    try:
        c.assign([tp])
        c.seek_to_beginning(tp)

        def poll():
            for msgs in c.poll(timeout_ms=200).values():
                out.extend((m.offset, m.key, m.value) for m in msgs)

        _until(end, poll, lambda: c.position(tp))
    finally:
        c.close()
    return out


# -- aiokafka --------------------------------------------------------------------------------


def ak_produce(bootstrap, topic, records, txn_id=None, commit=True):
    async def run():
        from aiokafka import AIOKafkaProducer

        kw = {"transactional_id": txn_id} if txn_id else {"enable_idempotence": True}
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000, **kw)
        await p.start()
        try:
            if txn_id:
                await p.begin_transaction()
            for key, value in records:
                await p.send_and_wait(topic, key=key, value=value, partition=0)
            if txn_id:
                await (p.commit_transaction() if commit else p.abort_transaction())
        finally:
            await p.stop()
    asyncio.run(asyncio.wait_for(run(), DEADLINE_S))


def ak_consume(bootstrap, topic, isolation, end):
    async def run():
        from aiokafka import AIOKafkaConsumer, TopicPartition

        tp = TopicPartition(topic, 0)
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000)
        await c.start()
        out = []
        try:
            c.assign([tp])
            await c.seek_to_beginning(tp)
            while await c.position(tp) < end:
                for msgs in (await c.getmany(timeout_ms=200)).values():
                    out.extend((m.offset, m.key, m.value) for m in msgs)
        finally:
            await c.stop()
        return out
    return asyncio.run(asyncio.wait_for(run(), DEADLINE_S))


# -- kcat (reads; its producer has no transactions, so confluent-kafka writes those) ------------

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def kcat_produce(bootstrap, topic, records, txn_id=None, commit=True):
    if txn_id:
        return ck_produce(bootstrap, topic, records, txn_id, commit)
    for key, value in records:  # -Z: an empty value is sent as null (a tombstone)
        lines = f"{key.decode()}|{'' if value is None else value.decode()}\n"
        proc = subprocess.run([KCAT, "-P", "-b", bootstrap, "-t", topic, "-p", "0", "-K", "|", "-Z"],
                              input=lines, capture_output=True, text=True, timeout=DEADLINE_S)
        assert proc.returncode == 0, proc.stderr


def kcat_consume(bootstrap, topic, isolation, end):
    proc = subprocess.run([KCAT, "-C", "-b", bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J",
                           "-q", "-X", f"isolation.level={isolation}"],
                          capture_output=True, text=True, timeout=DEADLINE_S)
    assert proc.returncode == 0, proc.stderr
    out = []
    for line in proc.stdout.splitlines():
        if line.strip():
            m = json.loads(line)
            key = None if m["key"] is None else m["key"].encode()
            out.append((m["offset"], key, None if m["payload"] is None else m["payload"].encode()))
    return out


# -- Java kafka-clients (compat/java/CompactionDriver.java, one JVM per call) -------------------


def java_clients(drivers):
    """(produce, consume) running CompactionDriver with the compiled ``drivers`` (compat.javarun)."""
    def run(scenario, bootstrap, **options):
        out = drivers.run("CompactionDriver", scenario, bootstrap, timeout=120, **options)
        result = out["results"][scenario]
        if not result["ok"]:
            raise AssertionError(f"{scenario}: {result['error']}\n{result.get('trace', '')}")
        return result["observed"]

    def produce(bootstrap, topic, records, txn_id=None, commit=True):
        spec = ";".join(f"{k.decode()}:{'~' if v is None else v.decode()}" for k, v in records)
        run("compaction.produce", bootstrap, topic=topic, records=spec, txn=txn_id or "", commit=str(commit).lower())

    def consume(bootstrap, topic, isolation, end):
        seen = run("compaction.read", bootstrap, topic=topic, isolation=isolation, until=end)
        assert seen["position"] >= end, seen
        return [(r["o"], None if r["k"] is None else r["k"].encode(), None if r["v"] is None else r["v"].encode())
                for r in seen["records"]]
    return produce, consume


CLIENTS = {
    "confluent-kafka": (ck_produce, ck_consume),
    "kafka-python": (kp_produce, kp_consume),
    "aiokafka": (ak_produce, ak_consume),
    "kcat": (kcat_produce, kcat_consume),
    "java": None,  # java_clients(java_drivers)
}
