"""kcat (librdkafka) against the broker under test: produce with -P (keys, -H headers, each -z
codec), consume with -C -e under both isolation levels over topics whose transactions are written
with confluent-kafka, list metadata with -L.

``make test`` installs kcat with apt when it is missing and the suite runs as root."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from compat.support import wait_for

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
pytestmark = [
    pytest.mark.compat(client="kcat"),
    pytest.mark.skipif(KCAT is None, reason="kcat is not installed: apt-get install -y kcat "
                                            "(`make test` does this when run as root)"),
]
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
ISOLATION = ["read_committed", "read_uncommitted"]


def kcat(*args: str, stdin: str | None = None, timeout: float = 30) -> str:
    proc = subprocess.run([KCAT, *args], input=stdin, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"kcat {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


def consume(bootstrap: str, topic: str, isolation: str) -> list[dict]:
    """Everything kcat -e reads from partition 0 before it reports the end of the partition."""
    out = kcat("-C", "-b", bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J", "-q",
               "-X", f"isolation.level={isolation}")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def offsets_payloads(messages):
    return [(m["offset"], m["payload"]) for m in messages]


# -- confluent-kafka writes the transactional layouts ----------------------------------------


@pytest.fixture(scope="module")
def ck(compat_target):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic

    class Writer:
        bootstrap = compat_target.bootstrap_servers

        def topic(self, name: str) -> str:
            topic = f"{compat_target.prefix}-kc-{name}"
            admin = AdminClient({"bootstrap.servers": self.bootstrap})
            for f in admin.create_topics([NewTopic(topic, 1, 1)]).values():
                f.result(20)
            return topic

        def plain(self):
            return confluent_kafka.Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True})

        def txn(self, name: str):
            p = confluent_kafka.Producer({"bootstrap.servers": self.bootstrap,
                                          "transactional.id": f"{compat_target.prefix}-kc-{name}"})
            p.init_transactions(20)
            return p

        def wait_for_end(self, topic: str, offset: int) -> None:
            """Until partition 0's high watermark is ``offset``: Kafka answers EndTxn once the
            transaction is prepared and writes the markers after, so the marker may not be there yet."""
            c = confluent_kafka.Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"{topic}-hw"})
            try:
                tp = confluent_kafka.TopicPartition(topic, 0)
                wait_for(lambda: c.get_watermark_offsets(tp, timeout=5, cached=False)[1] == offset, 20, 0.05,
                         f"{topic} high watermark {offset}")
            finally:
                c.close()

    return Writer()


def send(producer, topic: str, *values: str) -> None:
    for v in values:
        producer.produce(topic, value=v.encode(), partition=0)
    assert producer.flush(20) == 0


# -- produce / consume -------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [pytest.param(c, marks=pytest.mark.compat(scenario=f"produce_consume.{c}"))
                                   for c in CODECS])
def test_produce_consume(compat_target, codec):
    topic = f"{compat_target.prefix}-kcat-{codec}"
    lines = [f"key-{i}:{codec} value {i} " + "xyz" * (10 * i) for i in range(5)]
    before = int(time.time() * 1000)
    kcat("-P", "-b", compat_target.bootstrap_servers, "-t", topic, "-p", "0", "-z", codec, "-K", ":",
         "-H", "h1=one", "-H", "h2=", "-H", "h1=again", stdin="\n".join(lines) + "\n")
    after = int(time.time() * 1000)
    got = consume(compat_target.bootstrap_servers, topic, "read_uncommitted")
    assert [(m["offset"], m["key"], m["payload"]) for m in got] == [
        (i, f"key-{i}", line.split(":", 1)[1]) for i, line in enumerate(lines)]
    assert all(m["headers"] == ["h1", "one", "h2", "", "h1", "again"] for m in got), got
    assert all(m["tstype"] == "create" and before - 1000 <= m["ts"] <= after + 1000 for m in got), got


@pytest.mark.compat(scenario="metadata.list")
def test_metadata_listing(compat_target, ck):
    topic = ck.topic("metadata")
    meta = json.loads(kcat("-L", "-b", compat_target.bootstrap_servers, "-t", topic, "-J"))
    ports = sorted(b.rsplit(":", 1)[1] for b in compat_target.bootstrap_servers.split(","))
    assert sorted(b["name"].rsplit(":", 1)[1] for b in meta["brokers"]) == ports
    [t] = meta["topics"]
    assert t["topic"] == topic and "error" not in t
    [p] = t["partitions"]
    assert p["partition"] == 0 and p["leader"] in {b["id"] for b in meta["brokers"]}
    assert p["replicas"] == [{"id": p["leader"]}] and p["isrs"] == [{"id": p["leader"]}]  # created with one replica


# -- isolation levels ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed_topic(ck):
    """a-1, a-2 aborted (0, 1, ABORT 2); plain-1 (3); b-1, b-2 committed (4, 5, COMMIT 6)."""
    topic = ck.topic("seed")
    a, plain, b = ck.txn("seed-A"), ck.plain(), ck.txn("seed-B")
    a.begin_transaction()
    send(a, topic, "a-1", "a-2")
    a.abort_transaction(20)
    ck.wait_for_end(topic, 3)  # the ABORT marker at 2, before plain-1
    send(plain, topic, "plain-1")
    b.begin_transaction()
    send(b, topic, "b-1", "b-2")
    b.commit_transaction(20)
    ck.wait_for_end(topic, 7)  # the COMMIT marker at 6
    return topic


@pytest.mark.compat(scenario="txn.seed")
@pytest.mark.parametrize("isolation", ISOLATION)
def test_seed(compat_target, seed_topic, isolation):
    got = offsets_payloads(consume(compat_target.bootstrap_servers, seed_topic, isolation))
    if isolation == "read_committed":
        assert got == [(3, "plain-1"), (4, "b-1"), (5, "b-2")]
    else:
        assert got == [(0, "a-1"), (1, "a-2"), (3, "plain-1"), (4, "b-1"), (5, "b-2")]


@pytest.mark.parametrize("outcome", [pytest.param(o, marks=pytest.mark.compat(scenario=f"txn.open_lso_{o}"))
                                     for o in ("commit", "abort")])
def test_open_transaction_holds_lso(compat_target, ck, outcome):
    """p-0 (0), open t-1 (1), p-2 (2), p-3 (3): -e under read_committed ends at the LSO (1)."""
    topic = ck.topic(f"lso-{outcome}")
    plain, t = ck.plain(), ck.txn(f"lso-{outcome}-T")
    send(plain, topic, "p-0")
    t.begin_transaction()
    send(t, topic, "t-1")
    send(plain, topic, "p-2", "p-3")
    bootstrap = compat_target.bootstrap_servers
    assert offsets_payloads(consume(bootstrap, topic, "read_uncommitted")) == [
        (0, "p-0"), (1, "t-1"), (2, "p-2"), (3, "p-3")]
    assert offsets_payloads(consume(bootstrap, topic, "read_committed")) == [(0, "p-0")]
    if outcome == "commit":
        t.commit_transaction(20)
        expected = [(0, "p-0"), (1, "t-1"), (2, "p-2"), (3, "p-3")]
    else:
        t.abort_transaction(20)
        expected = [(0, "p-0"), (2, "p-2"), (3, "p-3")]
    ck.wait_for_end(topic, 5)  # the marker at 4
    assert offsets_payloads(consume(bootstrap, topic, "read_committed")) == expected


@pytest.mark.compat(scenario="consumer.position_past_markers")
@pytest.mark.parametrize("isolation", ISOLATION)
def test_only_aborted_transactions(compat_target, ck, isolation):
    """Records 0, 1, 3 aborted, markers 2, 4: -e must reach the end (5) through the markers."""
    topic = ck.topic(f"markers-{isolation}")
    t = ck.txn(f"markers-{isolation}-T")
    t.begin_transaction()
    send(t, topic, "aborted-1", "aborted-2")
    t.abort_transaction(20)
    t.begin_transaction()
    send(t, topic, "aborted-3")
    t.abort_transaction(20)
    got = offsets_payloads(consume(compat_target.bootstrap_servers, topic, isolation))
    if isolation == "read_committed":
        assert got == []
    else:
        assert got == [(0, "aborted-1"), (1, "aborted-2"), (3, "aborted-3")]


@pytest.mark.compat(scenario="topic.compression_zstd")
def test_zstd_topic_recompresses_what_kcat_sends(compat_target):
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"{compat_target.prefix}-kc-zstd-topic"
    admin = AdminClient({"bootstrap.servers": compat_target.bootstrap_servers})
    for f in admin.create_topics([NewTopic(topic, 1, 1, config={"compression.type": "zstd"})]).values():
        f.result(20)
    for codec in ("none", "snappy", "lz4"):
        kcat("-P", "-b", compat_target.bootstrap_servers, "-t", topic, "-p", "0", "-z", codec, stdin=f"kcat-{codec}\n")
    got = consume(compat_target.bootstrap_servers, topic, "read_uncommitted")
    assert offsets_payloads(got) == [(0, "kcat-none"), (1, "kcat-snappy"), (2, "kcat-lz4")]
    if compat_target.is_shim:
        from kafka_codecs import Compression
        from kafka_codecs.batch import iter_batches

        plog = compat_target.broker.node.logs.get(topic, 0)
        stored = [h.compression for seg in plog.segments for _, h in iter_batches(seg.log_path.read_bytes())]
        assert stored == [Compression.ZSTD] * 3
