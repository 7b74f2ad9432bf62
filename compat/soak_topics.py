"""The crash soak's topic lifecycle: topics created, written and deleted over and over under the
same few names, so that a kill lands inside a CreateTopics or a DeleteTopics (topics.json written,
partition directories made or removed) as often as between them.

Each creation of a name is one incarnation, numbered across the soak; its records are
``L<incarnation>-<i>``. After a restart, each name must be in a state some acknowledged or
interrupted operation could have left (created, or deleted), and its records must all be of the
incarnation that exists: a deleted topic's records never reappear in the next topic of its name.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass, field

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic

NAMES = ("soak-life-0", "soak-life-1")
PARTITIONS = 2


@dataclass
class TopicLives:
    """What the lifecycle worker was told, across every cycle."""

    # name -> the states it may be in: None (deleted) or the incarnation that exists; more than
    # one when an operation was cut short
    states: dict = field(default_factory=lambda: {name: {None} for name in NAMES})
    acked: dict = field(default_factory=dict)  # incarnation -> {value: (partition, offset)}
    leaky: set = field(default_factory=set)  # incarnations whose producer still held records at delete
    created: int = 0  # acknowledged CreateTopics
    deleted: int = 0  # acknowledged DeleteTopics
    next_incarnation: int = 0
    problems: list = field(default_factory=list)  # what an operation's answer showed at once
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, bootstrap: str, client: dict, rng, halt: threading.Event, killed: threading.Event) -> None:
        """Operations until the kill (``killed`` is set just before it), so that the check after the
        restart sees what the kill left. An operation that started before the kill and ended after it
        may have been applied by the killed broker and retried by the client against the next one."""
        admin = AdminClient({"bootstrap.servers": bootstrap, **client})
        while not halt.is_set() and not killed.is_set():
            name = rng.choice(NAMES)
            before = killed.is_set()

            def spans_kill() -> bool:
                return killed.is_set() != before

            try:
                if self.states[name] == {None}:
                    self._create(admin, name, bootstrap, client, rng, spans_kill)
                else:
                    self._delete(admin, name, spans_kill)
            except (ck.KafkaException, concurrent.futures.TimeoutError):
                time.sleep(0.1)  # the broker is down or restarting; the name's states say what may be

    def _create(self, admin, name: str, bootstrap: str, client: dict, rng, spans_kill) -> None:
        with self.lock:
            k = self.next_incarnation
            self.next_incarnation += 1
            self.states[name].add(k)
        try:
            admin.create_topics([NewTopic(name, PARTITIONS, 1)], operation_timeout=10)[name].result(15)
        except ck.KafkaException as exc:
            if exc.args[0].code() == ck.KafkaError.TOPIC_ALREADY_EXISTS and not spans_kill():
                self.problems.append(f"{name}: acknowledged as deleted, but creating it again: {exc}")
            raise
        with self.lock:
            self.states[name] = {k}
            self.created += 1
        self._write(name, k, bootstrap, client, rng.randint(1, 40))

    def _write(self, name: str, k: int, bootstrap: str, client: dict, count: int) -> None:
        acked = self.acked.setdefault(k, {})

        def on_delivery(err, msg):
            if err is None:
                with self.lock:
                    acked[msg.value()] = (msg.partition(), msg.offset())

        producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                "linger.ms": 2, "message.timeout.ms": 10_000, "allow.auto.create.topics": False,
                                **client})  # fmt: skip
        for i in range(count):
            producer.produce(name, value=b"L%d-%d" % (k, i), partition=i % PARTITIONS, on_delivery=on_delivery)
        if producer.flush(12):
            # a Produce may still be on its way, on another connection than the DeleteTopics
            with self.lock:
                self.leaky.add(k)
            producer.purge()
            producer.flush(1)

    def _delete(self, admin, name: str, spans_kill) -> None:
        with self.lock:
            certain = None not in self.states[name]
            self.states[name].add(None)
        try:
            admin.delete_topics([name], operation_timeout=10)[name].result(15)
        except ck.KafkaException as exc:
            if exc.args[0].code() != ck.KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise
            if certain and not spans_kill():
                self.problems.append(f"{name}: acknowledged as created, but deleting it: {exc}")
        with self.lock:
            self.states[name] = {None}
            self.deleted += 1

    def verify(self, bootstrap: str, client: dict, read) -> list[str]:
        """``read(bootstrap, topic, partitions, isolation)``: crash_soak.read."""
        found, self.problems = self.problems, []
        admin = AdminClient({"bootstrap.servers": bootstrap, **client})
        existing = admin.list_topics(timeout=30).topics
        for name in NAMES:
            states = self.states[name]
            incarnations = states - {None}
            assert len(incarnations) <= 1, (name, states)  # a name is created only when surely deleted
            if name not in existing:
                if None not in states:
                    found.append(f"{name}: acknowledged as incarnation {min(incarnations)}, but it does not exist")
                continue
            if not incarnations:
                found.append(f"{name}: acknowledged as deleted, but it exists")
                continue
            self._verify_records(name, incarnations.pop(), read(bootstrap, name, PARTITIONS, "read_uncommitted"),
                                 found)  # fmt: skip
        return found

    def _verify_records(self, name: str, k: int, log: dict, found: list) -> None:
        for value, (p, offset) in self.acked.get(k, {}).items():
            if log[p].get(offset, (None, None))[1] != value:
                found.append(f"{name}-{p} (incarnation {k}): acknowledged {value!r} at {offset}, "
                             f"the log has {log[p].get(offset)}")  # fmt: skip
        for p, records in log.items():
            values = [v for _, (_, v) in sorted(records.items())]
            if len(values) != len(set(values)):
                found.append(f"{name}-{p}: {len(values) - len(set(values))} values twice")
            ours = [int(v.split(b"-")[1]) for v in values if v.startswith(b"L%d-" % k)]
            if ours != sorted(ours):
                found.append(f"{name}-{p}: values out of send order")
            strangers = {v.split(b"-")[0] for v in values} - {b"L%d" % k} - {b"L%d" % j for j in self.leaky}
            if strangers:
                found.append(f"{name}-{p} (incarnation {k}): records of {sorted(strangers)} reappeared")
