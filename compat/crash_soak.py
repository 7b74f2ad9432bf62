"""A crash soak: real clients write while ``kill -9`` hits the broker at random moments, cycle after cycle.

Each cycle starts ``kafka-shim serve`` on the same data directory and port (small segments, so
segments roll all the time; a compacted topic the cleaner keeps rewriting), runs these workers for a
random time, and kills the broker with SIGKILL while they are mid-flight:

* ``idem``: an idempotent acks=all producer over three partitions, values numbered in send order;
* ``txn``: a transactional producer (the same transactional.id every cycle, so each cycle's
  ``init_transactions`` fences and aborts what the last one left open) committing or aborting
  transactions over two partitions, each committing transaction also committing a group offset
  (``send_offsets_to_transaction``) equal to its number;
* ``commits``: a consumer committing offsets synchronously (``commit(asynchronous=False)``);
* ``compact``: an idempotent producer writing versions of 40 keys to a compacted topic;
* ``lifecycle``: topics created, written and deleted under the same two names (compat/soak_topics.py);
* ``member`` (twice): two members of one consumer group committing their positions (compat/soak_groups.py);
* ``kafka_python``: kafka-python's idempotent producer on a topic of its own (compat/soak_kafka_python.py).

Opt-in (``--workers java,aiokafka``): Apache Kafka's Java client, an idempotent and a transactional
producer and a group member in one JVM (compat/soak_java.py), and aiokafka's transactional producer
and group member (compat/soak_aiokafka.py), each on topics and groups of its own.

After each restart, everything any cycle had acknowledged is checked (``Ledger.verify``):

* every acknowledged idempotent record is at the offset it was acknowledged with, every value at most
  once in its partition and in send order;
* under read_committed every committed transaction's records are there exactly once and in order, no
  aborted transaction's record shows, and a transaction whose commit was cut by the kill is there
  whole or not at all;
* each group's committed offset is the last acknowledged commit, or a later one cut by the kill
  (for the transactional group: a commit whose transaction is visible, and no other);
* each key of the compacted topic reads back as its last acknowledged version or a later one;
* each lifecycle topic exists or not as an acknowledged or interrupted CreateTopics or DeleteTopics
  left it, with its acknowledged records and none of a deleted topic of the same name.

``python -m compat.crash_soak --cycles 20 --seed 7`` runs it by hand (compat/README.md);
``compat/test_crash_soak.py`` runs three cycles with a fixed seed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic

from compat.conftest import ShimProcess
from compat.soak_groups import GROUP as MEMBERS_GROUP
from compat.soak_groups import GroupMembers, Moment
from compat.soak_kafka_python import PARTITIONS as KP_PARTITIONS
from compat.soak_kafka_python import TOPIC as KP_TOPIC
from compat.soak_kafka_python import KafkaPythonProducer
from compat.soak_logs import SLOW_RECOVERY_S, write_slow_recovery
from compat.soak_topics import TopicLives
from compat.soak_aiokafka import AiokafkaWorkers
from compat.soak_books import TxnBook, verify_idempotent
from compat.soak_aiokafka import TOPICS as AIO_TOPICS
from compat.soak_java import TOPICS as JAVA_TOPICS
from compat.soak_java import JavaWorkers

IDEM, TXN, COMPACT = "soak-idem", "soak-txn", "soak-compact"
TXN_GROUP, COMMIT_GROUP = "soak-eos", "soak-commits"
TXN_ID = "soak-tx"
KEYS = 40
BROKER_ARGS = ("--segment-bytes", "16384", "--override", "log.cleaner.backoff.ms=100",
               "--override", "log.cleaner.min.compaction.lag.ms=0", "--transaction-abort-check-interval-ms", "500")
CLIENT = {"socket.timeout.ms": 5000, "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200,
          "retry.backoff.ms": 50, "log_level": 0}


@dataclass
class Ledger:
    """What the clients were told, across every cycle."""

    idem_acked: dict = field(default_factory=dict)  # (partition, value) -> offset
    idem_sent: dict = field(default_factory=dict)  # partition -> values sent, in order
    txn: TxnBook = field(default_factory=lambda: TxnBook(TXN, TXN_GROUP))  # librdkafka's transactions
    last_commit: dict = field(default_factory=dict)  # partition -> last acknowledged COMMIT_GROUP offset
    tried_commits: dict = field(default_factory=dict)  # partition -> every offset a commit was sent with
    compact_acked: dict = field(default_factory=dict)  # key -> highest acknowledged version
    compact_sent: dict = field(default_factory=dict)  # key -> highest version sent
    topics: TopicLives = field(default_factory=TopicLives)
    members: GroupMembers = field(default_factory=GroupMembers)
    kafka_python: KafkaPythonProducer = field(default_factory=KafkaPythonProducer)
    problems: list = field(default_factory=list)
    stuck: list = field(default_factory=list)  # client calls that outlived their timeout (librdkafka's)
    restart_s: list = field(default_factory=list)  # each restart's time to its ready line
    java: JavaWorkers | None = None  # opt-in (--workers java): kafka-clients 3.9.1
    aiokafka: AiokafkaWorkers | None = None  # opt-in (--workers aiokafka)
    run_s: tuple = (2.0, 6.0)  # each cycle's time before the kill, drawn from this range
    lock: threading.Lock = field(default_factory=threading.Lock)

    def verify(self, bootstrap: str) -> list[str]:
        found: list[str] = []
        verify_idempotent(IDEM, read(bootstrap, IDEM, 3, "read_uncommitted"), self.idem_acked, self.idem_sent, found)
        kp = self.kafka_python
        verify_idempotent(KP_TOPIC, read(bootstrap, KP_TOPIC, KP_PARTITIONS, "read_uncommitted"), kp.acked, kp.sent,
                          found)  # fmt: skip
        eos = committed(bootstrap, TXN_GROUP, 1).get(0, -1)
        found += self.txn.verify(read(bootstrap, TXN, 2, "read_committed"), eos)
        self._verify_offsets(bootstrap, found)
        self._verify_compact(read(bootstrap, COMPACT, 2, "read_committed"), found)
        found += self.topics.verify(bootstrap, CLIENT, read)
        found += self.members.verify(committed(bootstrap, MEMBERS_GROUP, 3))
        for extra in (self.java, self.aiokafka):
            if extra is not None:
                found += extra.verify(bootstrap, read, committed)
        return found

    def groups(self) -> dict:
        """The consumer groups whose recovery after each restart is timed."""
        out = {"librdkafka": self.members}
        for name, extra in (("java", self.java), ("aiokafka", self.aiokafka)):
            if extra is not None:
                out[name] = extra.members
        return out

    def _verify_offsets(self, bootstrap: str, found: list) -> None:
        for p, offset in committed(bootstrap, COMMIT_GROUP, 3).items():
            acked = self.last_commit.get(p, -1)
            if offset < acked or (offset > acked and offset not in self.tried_commits.get(p, ())):
                found.append(f"{COMMIT_GROUP}-{p}: committed {offset}, last acknowledged {acked}")

    def _verify_compact(self, log: dict, found: list) -> None:
        latest: dict[bytes, int] = {}
        for records in log.values():
            for _, (key, value) in sorted(records.items()):
                latest[key] = int(value)
        for key, version in self.compact_acked.items():
            got = latest.get(key, -1)
            if got < version or got > self.compact_sent[key]:
                found.append(f"{COMPACT} key {key!r}: reads version {got}, acknowledged {version}")


def read(bootstrap: str, topic: str, partitions: int, isolation: str) -> dict[int, dict]:
    """Every record of each partition from the start up to the end the isolation level sees."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "soak-reader", "enable.auto.commit": False,
                            "isolation.level": isolation, "auto.offset.reset": "earliest", **CLIENT})  # fmt: skip
    out: dict[int, dict] = {p: {} for p in range(partitions)}
    try:
        ends = {p: consumer.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=30)[1] for p in out}
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in out])
        positions = {p: -1 for p in out}
        deadline = time.monotonic() + 60
        while any(positions[p] < ends[p] - 1 for p in out) and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.2):
                if m.error() is None:
                    out[m.partition()][m.offset()] = (m.key(), m.value())
            for tp in consumer.position([ck.TopicPartition(topic, p) for p in out]):
                positions[tp.partition] = tp.offset - 1 if tp.offset >= 0 else positions[tp.partition]
    finally:
        consumer.close()
    return out


def committed(bootstrap: str, group: str, partitions: int) -> dict[int, int]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False, **CLIENT})
    try:
        tps = consumer.committed([ck.TopicPartition(IDEM, p) for p in range(partitions)], timeout=30)
        return {tp.partition: tp.offset for tp in tps if tp.offset >= 0}
    finally:
        consumer.close()


class Workers:
    """The workers of one cycle, each on its own thread until ``stop``."""

    def __init__(self, bootstrap: str, ledger: Ledger, rng: random.Random, cycle: int) -> None:
        self.bootstrap, self.ledger, self.rng, self.cycle = bootstrap, ledger, rng, cycle
        self.halt = threading.Event()
        self.killed = threading.Event()  # set just before the kill
        self.restarted = Moment()  # set once the next broker is ready
        fns = [self.idem, self.txn, self.commits, self.compact, self.lifecycle, self.member, self.member,
               self.kafka_python]  # fmt: skip
        fns += [fn for fn, on in ((self.java, ledger.java), (self.aiokafka, ledger.aiokafka)) if on is not None]
        self.threads = [threading.Thread(target=self._guard, args=(fn,), daemon=True, name=fn.__name__) for fn in fns]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.halt.set()
        for t in self.threads:
            t.join(45)
            if t.is_alive():
                frame = sys._current_frames().get(t.ident)
                where = "".join(traceback.format_stack(frame)[-3:]) if frame else "?"
                if "send_offsets_to_transaction" in where:
                    # librdkafka #5456/#5511: after a re-bootstrap the call can wait for a group
                    # coordinator it decommissioned, past its timeout; the next cycle's producer fences it
                    self.ledger.stuck.append(f"cycle {self.cycle}: send_offsets_to_transaction")
                else:
                    self.ledger.problems.append(f"cycle {self.cycle}: worker {t.name} did not stop, at\n{where}")

    def _guard(self, fn) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - a client error after the kill is expected; logged
            print(f"cycle {self.cycle} {fn.__name__}: {exc!r}", file=sys.stderr)

    def _producer(self, **conf) -> ck.Producer:
        return ck.Producer({"bootstrap.servers": self.bootstrap, "acks": "all", "enable.idempotence": True,
                            "linger.ms": 2, "message.timeout.ms": 20_000, **CLIENT, **conf})  # fmt: skip

    def idem(self) -> None:
        led = self.ledger
        producer = self._producer()

        def acked(err, msg):
            if err is None:
                with led.lock:
                    led.idem_acked[(msg.partition(), msg.value())] = msg.offset()

        i = 0
        while not self.halt.is_set():
            p = i % 3
            value = b"c%d-%d" % (self.cycle, i)
            with led.lock:
                led.idem_sent.setdefault(p, []).append(value)
            producer.produce(IDEM, value=value, partition=p, on_delivery=acked)
            producer.poll(0.001 if i % 20 else 0.01)
            i += 1
        producer.flush(25)

    def txn(self) -> None:
        led = self.ledger
        debug = {"debug": "eos,cgrp", "log_level": 7} if os.environ.get("SOAK_DEBUG") else {}
        # no re-bootstrap: it strands send_offsets_to_transaction (librdkafka #5511)
        producer = self._producer(**{"transactional.id": TXN_ID, "transaction.timeout.ms": 20_000,
                                     "metadata.recovery.strategy": "none", **debug})
        producer.init_transactions(30)
        metadata = ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": TXN_GROUP, **CLIENT})
        try:
            while not self.halt.is_set():
                with led.lock:
                    n = len(led.txn.records)
                    led.txn.begin(n, [])
                self._one_transaction(producer, metadata, n)
        finally:
            metadata.close()

    def _one_transaction(self, producer, metadata, n: int) -> None:
        led = self.ledger
        commit = self.rng.random() < 0.7
        try:
            producer.begin_transaction()
            for i in range(self.rng.randint(1, 8)):
                p = i % 2
                value = b"t-%d-%d" % (n, i)
                led.txn.records[n].append((p, value))
                producer.produce(TXN, value=value, partition=p)
            if commit:
                producer.send_offsets_to_transaction([ck.TopicPartition(IDEM, 0, n)],
                                                     metadata.consumer_group_metadata(), 30)  # fmt: skip
                led.txn.asking(n)
                producer.commit_transaction(30)
                led.txn.settled(n, committed=True)
            else:
                led.txn.asking(n)
                producer.abort_transaction(30)
                led.txn.settled(n, committed=False)
        except ck.KafkaException as exc:
            led.txn.asking(n)
            err = exc.args[0]
            if err.txn_requires_abort():
                producer.abort_transaction(30)
                led.txn.settled(n, committed=False)
            elif not err.retriable():
                raise

    def commits(self) -> None:
        led = self.ledger
        consumer = ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": COMMIT_GROUP,
                                "enable.auto.commit": False, **CLIENT})  # fmt: skip
        base = 1_000_000 * self.cycle
        try:
            i = 0
            while not self.halt.is_set():
                p, offset = i % 3, base + i
                with led.lock:
                    led.tried_commits.setdefault(p, set()).add(offset)
                try:
                    consumer.commit(offsets=[ck.TopicPartition(IDEM, p, offset)], asynchronous=False)
                except ck.KafkaException:
                    time.sleep(0.05)
                else:
                    with led.lock:
                        led.last_commit[p] = offset
                i += 1
        finally:
            consumer.close()

    def lifecycle(self) -> None:
        self.ledger.topics.run(self.bootstrap, CLIENT, self.rng, self.halt, self.killed)

    def kafka_python(self) -> None:
        self.ledger.kafka_python.run(self.bootstrap, self.halt, self.cycle)

    def java(self) -> None:
        self.ledger.java.run(self.bootstrap, self.halt, self.restarted, self.cycle, self.rng.randrange(2**31))

    def aiokafka(self) -> None:
        self.ledger.aiokafka.run(self.bootstrap, self.halt, self.restarted, self.cycle, random.Random(self.rng.random()),
                                 IDEM)  # fmt: skip

    def member(self) -> None:
        self.ledger.members.run(self.bootstrap, IDEM, CLIENT, self.halt, self.restarted, self.cycle)

    def compact(self) -> None:
        led = self.ledger
        producer = self._producer()

        def acked(err, msg):
            if err is None:
                with led.lock:
                    key = msg.key()
                    led.compact_acked[key] = max(led.compact_acked.get(key, -1), int(msg.value()))

        version = 1_000_000 * self.cycle
        while not self.halt.is_set():
            key = b"k%02d" % self.rng.randrange(KEYS)
            with led.lock:
                led.compact_sent[key] = version
            producer.produce(COMPACT, key=key, value=b"%d" % version + b" " * 200, on_delivery=acked)
            producer.poll(0.002)
            version += 1
        producer.flush(25)


def create_topics(bootstrap: str, ledger: Ledger) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [NewTopic(IDEM, 3, 1), NewTopic(TXN, 2, 1), NewTopic(KP_TOPIC, KP_PARTITIONS, 1),
              NewTopic(COMPACT, 2, 1, config={"cleanup.policy": "compact", "segment.bytes": "16384",
                                              "min.cleanable.dirty.ratio": "0.01"})]  # fmt: skip
    for on, extra in ((ledger.java, JAVA_TOPICS), (ledger.aiokafka, AIO_TOPICS)):
        topics += [NewTopic(name, partitions, 1) for name, partitions in extra.items()] if on is not None else []
    for future in admin.create_topics(topics).values():
        future.result(30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def soak(cycles: int, seed: int, data_dir: Path, run_s: tuple[float, float] = (2.0, 6.0), report=print,
         fsync: str = "never", extra: tuple[str, ...] = (), client_logs: bool = False, java_drivers=None) -> Ledger:
    """``cycles`` kills, each after a random time in ``run_s`` (seconds) of the workers (and of
    the ``extra`` ones: "java", "aiokafka"), the broker started with ``--fsync fsync``.
    ``client_logs``: the group members log into compat/soak_logs.py's ring, written out with the
    brokers' logs when a group is slow to recover. ``java_drivers``: compat/javarun.py's, compiled
    by the caller (else here)."""
    rng = random.Random(seed)
    port = free_port()
    java = (JavaWorkers(java_drivers) if java_drivers is not None else JavaWorkers.prepare()) if "java" in extra else None
    ledger = Ledger(java=java,
                    aiokafka=AiokafkaWorkers() if "aiokafka" in extra else None)
    ledger.run_s, ledger.members.client_logs = run_s, client_logs
    if ledger.aiokafka is not None:
        ledger.aiokafka.client_logs = client_logs
    args = (*BROKER_ARGS, "--fsync", fsync)

    def start() -> ShimProcess:
        return ShimProcess(data_dir, port, args=args)

    broker = start()
    bootstrap = broker.wait_ready(60)
    try:
        create_topics(bootstrap, ledger)
        for cycle in range(cycles):
            broker = one_cycle(ledger, broker, start, rng, cycle, report)
            if ledger.problems:
                break
    finally:
        broker.proc.kill()
        broker.wait(30)
        ledger.problems += broker_errors(broker.stderr)
    return ledger


def one_cycle(ledger: Ledger, broker: ShimProcess, start, rng: random.Random, cycle: int, report) -> ShimProcess:
    """Workers, the kill, the restart, the checks; returns the restarted broker."""
    groups = ledger.groups()
    marks = {name: len(g.recover_s) for name, g in groups.items()}
    workers = Workers(broker.bootstrap_servers, ledger, rng, cycle)
    workers.start()
    time.sleep(rng.uniform(*ledger.run_s))  # the kill lands wherever the workers happen to be
    workers.killed.set()
    broker.send_signal(signal.SIGKILL)
    broker.wait(30)
    killed, broker = broker, start()
    broker.wait_ready(60)
    ledger.restart_s.append(round(broker.ready_after, 2))
    workers.restarted.set()
    workers.stop()
    recover = {name: g.recover_s[marks[name]:] for name, g in groups.items()}
    found = ledger.verify(broker.bootstrap_servers) + ledger.problems + broker_errors(killed.stderr)
    report(json.dumps(cycle_report(ledger, cycle, recover, found)))
    ledger.problems = found
    out = broker.data_dir.parent
    if found:  # the log of the broker the kill hit, then of the one that found the problems
        (out / "broker.stderr").write_text(f"{killed.stderr}\n--- restarted ---\n{broker.stderr}")
    if max((s for times in recover.values() for s in times), default=0) > SLOW_RECOVERY_S:
        write_slow_recovery(out / f"slow-recovery-{cycle}.log", recover, workers.restarted.at, killed.stderr,
                            broker.stderr)  # fmt: skip
    return broker


def cycle_report(ledger: Ledger, cycle: int, recover: dict, found: list[str]) -> dict:
    out = {"cycle": cycle, "idem_acked": [len(ledger.idem_acked), len(ledger.kafka_python.acked)],
           "txns": [len(ledger.txn.committed), len(ledger.txn.aborted), len(ledger.txn.uncertain)],
           "compact_keys": len(ledger.compact_acked), "topics": [ledger.topics.created, ledger.topics.deleted],
           "stuck": len(ledger.stuck), "restart_s": ledger.restart_s[-1], "member_commits": ledger.members.commits}
    if ledger.java is not None:
        j = ledger.java
        out["java"] = [len(j.idem.acked), len(j.txn.committed), len(j.txn.aborted), j.members.commits]
    if ledger.aiokafka is not None:
        a = ledger.aiokafka
        out["aiokafka"] = [len(a.txn.committed), len(a.txn.aborted), a.members.commits]
    return {**out, "recover_s": recover, "problems": found[:10]}


def broker_errors(stderr: str) -> list[str]:
    """A broker's log lines at ERROR or worse, and its tracebacks: a broker the kill hit had started
    by recovering the one killed before it, so its log shows what that recovery met."""
    lines = stderr.splitlines()
    bad = [i for i, line in enumerate(lines) if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")]
    return ["the broker logged:\n" + "\n".join(lines[i:i + 12]) for i in bad[:3]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.crash_soak", description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=None, help="keep the data directory here")
    parser.add_argument("--fsync", choices=("never", "always"), default="never", help="the broker's --fsync")
    parser.add_argument("--workers", default="", help="extra workers, comma-separated: java, aiokafka")
    parser.add_argument("--client-logs", action="store_true",
                        help="keep the group members' logs; written out when a group is slow to recover")
    args = parser.parse_args(argv)
    extra = tuple(w for w in args.workers.split(",") if w)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the broker is killed on the way out
    if args.data_dir is not None:
        ledger = soak(args.cycles, args.seed, args.data_dir, fsync=args.fsync, extra=extra, client_logs=args.client_logs)
    else:
        with tempfile.TemporaryDirectory(prefix="kafka-shim-soak-") as tmp:
            ledger = soak(args.cycles, args.seed, Path(tmp) / "data", fsync=args.fsync, extra=extra, client_logs=args.client_logs)
    print("\n".join(ledger.problems) or "no problems")
    return 1 if ledger.problems else 0


if __name__ == "__main__":
    sys.exit(main())
