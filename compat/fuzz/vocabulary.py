"""What the stateful fuzzer (stateful.py, builder.py) says beyond kio's schema: classic consumers'
embedded ConsumerProtocolSubscription and ConsumerProtocolAssignment, so classic members join
consumer groups (mixed groups, online upgrade and downgrade); config resources of every type (TOPIC,
BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP) with their own config names and values (CLIENT_METRICS
``match`` patterns that backtrack, overflow or need a backreference, against client ids that make a
backtracking matcher crawl); the topics that CreateTopics, CreatePartitions and DeleteTopics churn
while groups subscribe to them; KIP-848 regexes RE2 refuses or that match the churned topics; and
DescribeTopicPartitions cursors, followed from the answers or pointing anywhere."""

from __future__ import annotations

import dataclasses
import random

from shim.coordinators.group.consumer_classic import _I16, _I32, encode_assignment
from shim.coordinators.group.records import _str

TOPICS = ("t0", "t1")
GROUPS = ("g0", "g1", "")
SHARE_GROUPS = ("s0", "s1")  # apart, or a share heartbeat makes g0 a share group and consumer groups never form
CLASSIC_ASSIGNORS = ("range", "roundrobin", "cooperative-sticky", "bogus")
CHURN_TOPICS = ("t2", "t3")  # created, grown and deleted between the groups' heartbeats
CHURN_APIS = {19, 20, 37}  # CreateTopics, DeleteTopics, CreatePartitions
CONFIG_APIS = {32, 33, 44}  # DescribeConfigs, AlterConfigs, IncrementalAlterConfigs
CONFIG_RESOURCES = {2: CHURN_TOPICS, 4: ("", "1"), 8: ("1",), 16: ("cm0", "cm1"), 32: GROUPS + SHARE_GROUPS}
CONFIG_VALUES = {  # by config name; the rest get the pools' strings
    "retention.ms": ("1000", "-1", "x"), "cleanup.policy": ("compact", "delete", "bogus"), "log.retention.ms": ("1000",),
    "kafka.server.KafkaApis": ("DEBUG", "INFO", "NOPE"), "metrics": ("", "*", "org.apache.kafka.consumer.fetch,x"),
    "interval.ms": ("100", "60000", "0", "x"),
    "match": ("client_id=fuzz", "client_software_name=j.*", "client_id=[", "x=1", "client_id=(a|a)*$",
              "client_id=a{99999999999}", "client_id=(a)\\1", "client_id=" + "(" * 1000 + ")" * 1000,
              "client_id=fu.*,client_source_port=[0-9]+"),
    "consumer.session.timeout.ms": ("45000", "1", "x"), "consumer.heartbeat.interval.ms": ("5000", "0"),
    "share.session.timeout.ms": ("45000", "-1"), "share.heartbeat.interval.ms": ("5000",),
    "share.record.lock.duration.ms": ("15000", "1"), "share.auto.offset.reset": ("earliest", "latest", "by_duration:PT1S", "x"),
    "share.isolation.level": ("read_committed", "read_uncommitted", "x"), "streams.num.standby.replicas": ("1",),
}
CONFIG_NAMES = {2: ("retention.ms", "cleanup.policy"), 4: ("log.retention.ms",), 8: ("kafka.server.KafkaApis",),
                16: ("metrics", "interval.ms", "match"),
                32: tuple(n for n in CONFIG_VALUES if n.startswith(("consumer.", "share.", "streams.")))}


def config_resource(rng: random.Random, values: dict, hostile: float) -> dict:
    """A resource of any type with config names (and values) of its own, for a DescribeConfigs or
    (Incremental)AlterConfigs resource whose other fields kio's schema gave."""
    kind = rng.choice(tuple(CONFIG_RESOURCES))
    out = {"resource_type": kind, "resource_name": rng.choice(CONFIG_RESOURCES[kind])}
    if values.get("configuration_keys"):
        out["configuration_keys"] = tuple(rng.choice(CONFIG_NAMES[kind]) for _ in values["configuration_keys"])
    if values.get("configs"):
        configs = []
        for c in values["configs"]:
            name = rng.choice(CONFIG_NAMES[kind])
            value = c.value if c.value is None or rng.random() < hostile else rng.choice(CONFIG_VALUES[name])
            configs.append(dataclasses.replace(c, name=name, value=value))
        out["configs"] = tuple(configs)
    return out


def partitions(rng: random.Random, topics: tuple[str, ...]) -> dict[str, frozenset[int]]:
    return {t: frozenset(rng.sample(range(3), rng.randint(0, 2))) for t in rng.sample(topics, rng.randint(0, 2))}


def classic_protocol(rng: random.Random, topics: tuple[str, ...]) -> tuple[str, bytes]:
    """An assignor's name and a ConsumerProtocolSubscription v0-3: topics, no user data, owned
    partitions from v1, generation from v2, rack from v3."""
    version = rng.randrange(4)
    chosen = rng.sample(topics, rng.randint(1, len(topics)))
    out = [_I16.pack(version), _I32.pack(len(chosen)), *(_str(t) for t in chosen), _I32.pack(-1)]
    if version >= 1:
        owned = partitions(rng, topics)
        out.append(_I32.pack(len(owned)))
        out += [_str(t) + _I32.pack(len(ps)) + b"".join(_I32.pack(p) for p in sorted(ps)) for t, ps in owned.items()]
    if version >= 2:
        out.append(_I32.pack(rng.choice((-1, 0, 5))))  # generation
    if version >= 3:
        out.append(_str(rng.choice((None, "r0"))))  # rack
    return rng.choice(CLASSIC_ASSIGNORS), b"".join(out)


def classic_assignment(rng: random.Random, topics: tuple[str, ...]) -> bytes:
    return encode_assignment(rng.randrange(4), partitions(rng, topics))


# the request header's client id: mostly the fuzzer's, now and then one a backtracking match pattern
# crawls over, an empty one, or one no match selector has seen
CLIENT_IDS = ("fuzz",) * 6 + ("a" * 40 + "b", "", "é\u2603", "x" * 2000)
# KIP-848 regexes: the sane ones match the steady and the churned topics, the rest RE2 refuses
# (a lookaround, a backreference, a program past its memory budget) or match nothing
SANE_REGEXES = ("t.*", "t[0-1]", "t[2-3]", "t0|t2", ".*")
HOSTILE_REGEXES = ("[", "(", "(a|a)*$", "t0|t1|zz", "(?=t)t0", "(t)\\1", ".{1000}" * 29, "")


def describe_cursor(rng: random.Random, values: dict, cursors: list, topics: tuple[str, ...], hostile: float) -> None:
    """DescribeTopicPartitions (KIP-966): all topics or named ones, a small partition limit so
    answers carry a next cursor, and a cursor an answer gave (followed), or any topic and partition."""
    values["response_partition_limit"] = rng.choice((1, 1, 2, 3, 2000) if not hostile else (0, -1, 1, 2**31 - 1))
    if rng.random() < 0.4 and "topics" in values:
        values["topics"] = ()  # every topic
    cursor = values.get("cursor")
    if cursor is None or rng.random() < 0.2:
        return
    if cursors and rng.random() < 0.7:
        name, partition = rng.choice(cursors)
    else:
        name = rng.choice(topics + ("nope", "zzz", ""))
        partition = rng.choice((0, 1, 2, 3, 100, -1, 2**31 - 1))
    values["cursor"] = dataclasses.replace(cursor, topic_name=name, partition_index=partition)
