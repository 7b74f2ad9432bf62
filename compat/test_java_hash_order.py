"""kafka-shim reproduces the order in which Kafka's group coordinator walks members, topics and
partitions (Java HashMap/HashSet iteration, which Kafka's assignors' placement depends on): the
emulation in shim/coordinators/group/consumer_assignors.py against a real JVM's tables
(compat/java/HashOrder.java, with Kafka's own Uuid from kafka-clients 4), on random member ids
(client-generated, as librdkafka and kafka-clients make them), topic ids and partition sets."""

from __future__ import annotations

import base64
import random
import subprocess
import uuid

import pytest

from shim.coordinators.group.consumer_assignors import copied_capacity, java_order, string_hash, uuid_hash

pytestmark = [pytest.mark.compat(client="java", scenario="consumer.group_protocol_consumer"),
              pytest.mark.shim_only("checks kafka-shim's own emulation")]



def kafka_id(u: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


def cases(rnd: random.Random):
    for _ in range(200):
        members = [base64.b64encode(rnd.randbytes(16)).decode().rstrip("=") for _ in range(rnd.randint(1, 120))]
        yield "S", members, java_order(members, string_hash)
        topics = [uuid.UUID(int=rnd.getrandbits(128)) for _ in range(rnd.randint(1, 40))]
        ids = [kafka_id(t) for t in topics]
        yield "M", ids, [kafka_id(t) for t in java_order(topics, uuid_hash)]
        yield "U", ids, [kafka_id(t) for t in java_order(topics, uuid_hash, copied_capacity(len(topics)))]
        partitions = sorted(rnd.sample(range(70_000), rnd.randint(1, 30)))
        yield "I", [str(p) for p in partitions], [str(p) for p in java_order(partitions, lambda p: p,
                                                                              copied_capacity(len(partitions)))]


def test_the_emulated_iteration_order_is_the_jvms(java4):
    table = list(cases(random.Random(848)))
    lines = "\n".join(f"{kind} {' '.join(keys)}" for kind, keys, _ in table)
    proc = subprocess.run([java4.java, "-cp", java4.classpath, "HashOrder"], input=lines, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = proc.stdout.splitlines()
    assert len(got) == len(table)
    for (kind, keys, expected), line in zip(table, got):
        assert line.split() == list(expected), (kind, keys)
