"""The partition admin calls and quota throttling with the Python clients (compat/scenarios/):

* admin.create_partitions: kafka-python, confluent-kafka and aiokafka grow a topic and get Kafka's
  errors for a count that is not an increase, an assignment naming another broker and an unknown topic.
* admin.log_dirs, admin.reassignments, admin.describe_topics_paged: kafka-python (the only Python
  client with describe_log_dirs, alter_replica_log_dirs, partition reassignments and
  describe_topic_partitions).
* admin.elect_leaders: kafka-python and confluent-kafka.
* quota.produce_throttle: a librdkafka producer whose client id has producer_byte_rate=10240 (set
  with AlterClientQuotas on the wire: no Python client has the call) reports the broker's throttle
  in its statistics.

Every expectation is Apache Kafka 3.9's answer on one broker; the tests run against ``compat_target``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from compat.support import recv_frame, wait_for

INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC = 37, 39, 3


def each(clients, scenario):
    return pytest.mark.parametrize("client_name", [
        pytest.param(n, id=n, marks=pytest.mark.compat(client=n, scenario=scenario)) for n in clients])


def host_port(bootstrap):
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    return host, int(port)


# -- admin.create_partitions -----------------------------------------------------------------------

def grow_kafka_python(bootstrap, topic):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)])
        wait_for(lambda: topic in admin.list_topics(), 15, 0.1, f"{topic} listed")

        def attempt(spec, validate_only=False):
            try:
                admin.create_partitions(spec, validate_only=validate_only)
                return 0
            except KafkaError as e:
                return e.errno
        obs = {"validate_only": attempt({topic: 6}, validate_only=True), "grow": attempt({topic: 4}),
               "same": attempt({topic: 4}), "fewer": attempt({topic: 3}),
               "other_broker": attempt({topic: {"count": 5, "assignments": [[1000]]}}),
               "unknown": attempt({topic + "-missing": 3})}
        obs["partitions"] = wait_for(lambda: len(admin.describe_topics([topic])[0]["partitions"]) == 4 and 4,
                                     15, 0.1, f"{topic} with 4 partitions")
        return obs
    finally:
        admin.close()


def grow_confluent(bootstrap, topic):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(20)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, 15, 0.1, f"{topic} listed")

    def attempt(np, validate_only=False):
        try:
            admin.create_partitions([np], validate_only=validate_only)[np.topic].result(20)
            return 0
        except KafkaException as e:
            return e.args[0].code()
    obs = {"validate_only": attempt(NewPartitions(topic, 6), True), "grow": attempt(NewPartitions(topic, 4)),
           "same": attempt(NewPartitions(topic, 4)), "fewer": attempt(NewPartitions(topic, 3)),
           "other_broker": attempt(NewPartitions(topic, 5, [[1000]])), "unknown": attempt(NewPartitions(topic + "-missing", 3))}
    obs["partitions"] = wait_for(lambda: len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 4 and 4,
                                 15, 0.1, f"{topic} with 4 partitions")
    return obs


def grow_aiokafka(bootstrap, topic):
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
    from aiokafka.errors import KafkaError

    async def run():
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, 2, 1)])

            async def attempt(name, count, assignments=None, validate_only=False):
                try:
                    r = await admin.create_partitions({name: NewPartitions(count, assignments)}, validate_only=validate_only)
                except KafkaError as e:
                    return e.errno
                return max((x[1] for x in r.topic_errors), default=0)  # aiokafka returns the codes
            obs = {"validate_only": await attempt(topic, 6, validate_only=True), "grow": await attempt(topic, 4),
                   "same": await attempt(topic, 4), "fewer": await attempt(topic, 3),
                   "other_broker": await attempt(topic, 5, [[1000]]), "unknown": await attempt(topic + "-missing", 3)}
            for _ in range(150):
                described = await admin.describe_topics([topic])
                if len(described[0]["partitions"]) == 4:
                    obs["partitions"] = 4
                    break
                await asyncio.sleep(0.1)
            return obs
        finally:
            await admin.close()
    return asyncio.run(run())


GROW = {"kafka-python": grow_kafka_python, "confluent-kafka": grow_confluent, "aiokafka": grow_aiokafka}


@each(GROW, "admin.create_partitions")
def test_create_partitions(compat_target, client_name):
    obs = GROW[client_name](compat_target.bootstrap_servers, f"{compat_target.prefix}-grow-{client_name}")
    assert obs == {"validate_only": 0, "grow": 0, "same": INVALID_PARTITIONS, "fewer": INVALID_PARTITIONS,
                   "other_broker": INVALID_REPLICA_ASSIGNMENT, "unknown": UNKNOWN_TOPIC, "partitions": 4}


# -- kafka-python: log dirs, elections, reassignments, DescribeTopicPartitions -----------------------

@pytest.fixture
def kp_admin(compat_target):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=compat_target.bootstrap_servers, request_timeout_ms=15_000)
    yield admin
    admin.close()


def kp_topic(admin, topic, partitions):
    from kafka.admin import NewTopic

    admin.create_topics([NewTopic(topic, partitions, 1)])
    wait_for(lambda: any(d["name"] == topic and d["error_code"] == 0 and len(d["partitions"]) == partitions
                         for d in admin.describe_topics([topic])), 15, 0.1, f"{topic} described")
    return topic


@pytest.mark.compat(client="kafka-python", scenario="admin.log_dirs")
def test_log_dirs_kafka_python(compat_target, kp_admin):
    from kafka import KafkaProducer
    from kafka.errors import LogDirNotFoundError, NoError

    topic = kp_topic(kp_admin, f"{compat_target.prefix}-logdirs-kp", 2)
    producer = KafkaProducer(bootstrap_servers=compat_target.bootstrap_servers)
    for i in range(10):
        producer.send(topic, b"value-%d" % i, partition=1).get(timeout=20)
    producer.close()
    # the broker holding the topic (the only one, or on a cluster one that hosts it)
    broker = next(b for b in kp_admin.describe_log_dirs() if any(t["name"] == topic for d in b["log_dirs"] for t in d["topics"]))
    [log_dir] = broker["log_dirs"]
    assert log_dir["error_code"] == 0 and log_dir["total_bytes"] >= log_dir["usable_bytes"] > 0
    mine = {p["partition_index"]: p for t in log_dir["topics"] if t["name"] == topic for p in t["partitions"]}
    assert [(i, mine[i]["partition_size"] > 0, mine[i]["offset_lag"], mine[i]["is_future_key"]) for i in sorted(mine)] == [
        (0, False, 0, False), (1, True, 0, False)]
    node = broker["broker"]
    moved = kp_admin.alter_replica_log_dirs({(topic, 0, node): log_dir["log_dir"]})
    refused = kp_admin.alter_replica_log_dirs({(topic, 0, node): log_dir["log_dir"] + "-not-configured"})
    assert list(moved.values()) == [NoError] and list(refused.values()) == [LogDirNotFoundError]


def election_codes(response):
    return {(t.topic, p.partition_id): p.error_code for t in response.replica_election_results for p in t.partition_result}


@pytest.mark.compat(client="kafka-python", scenario="admin.elect_leaders")
def test_elect_leaders_kafka_python(compat_target, kp_admin):
    topic = kp_topic(kp_admin, f"{compat_target.prefix}-elect-kp", 2)
    for election_type in (0, 1):
        r = kp_admin.elect_leaders(election_type, {topic: [0, 9]}, raise_errors=False)
        assert election_codes(r) == {(topic, 0): 84, (topic, 9): UNKNOWN_TOPIC}  # ELECTION_NOT_NEEDED
    # kafka-python turns "all partitions" into an explicit list (from Metadata), and Kafka answers each one
    every = kp_admin.elect_leaders(0, None, raise_errors=False)
    assert {k: v for k, v in election_codes(every).items() if k[0] == topic} == {(topic, 0): 84, (topic, 1): 84}


@pytest.mark.compat(client="confluent-kafka", scenario="admin.elect_leaders")
def test_elect_leaders_confluent(compat_target):
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"{compat_target.prefix}-elect-ck"
    admin = AdminClient({"bootstrap.servers": compat_target.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(20)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, 15, 0.1, f"{topic} listed")
    for election_type in (ElectionType.PREFERRED, ElectionType.UNCLEAN):
        r = admin.elect_leaders(election_type, [TopicPartition(topic, 0), TopicPartition(topic, 9)]).result(20)
        assert {tp.partition: e.name() for tp, e in r.items()} == {0: "ELECTION_NOT_NEEDED", 9: "UNKNOWN_TOPIC_OR_PART"}
    every = admin.elect_leaders(ElectionType.PREFERRED, None).result(20)
    assert [tp for tp in every if tp.topic == topic] == []


@pytest.mark.compat(client="kafka-python", scenario="admin.reassignments")
def test_reassignments_kafka_python(compat_target, kp_admin):
    from kafka import TopicPartition
    from kafka.errors import InvalidReplicationAssignmentError, NoReassignmentInProgressError

    topic = kp_topic(kp_admin, f"{compat_target.prefix}-reassign-kp", 3)
    node = kp_admin.describe_cluster()["brokers"][0]["broker_id"]
    tps = [TopicPartition(topic, p) for p in range(3)]
    got = kp_admin.alter_partition_reassignments({tps[0]: [node], tps[1]: [node + 1000], tps[2]: None})
    assert got == {tps[0]: None, tps[1]: InvalidReplicationAssignmentError, tps[2]: NoReassignmentInProgressError}
    assert kp_admin.list_partition_reassignments() == {}
    assert kp_admin.list_partition_reassignments({topic: [0, 1, 2]}) == {}


@pytest.mark.compat(client="kafka-python", scenario="admin.describe_topics_paged")
def test_describe_topic_partitions_paged_kafka_python(compat_target, kp_admin):
    a = kp_topic(kp_admin, f"{compat_target.prefix}-paged-a-kp", 5)
    b = kp_topic(kp_admin, f"{compat_target.prefix}-paged-b-kp", 3)
    seen, cursor, pages = {}, None, 0
    while True:
        page = kp_admin.describe_topic_partitions([b, a], response_partition_limit=2, cursor=cursor)
        pages += 1
        for t in page["topics"]:
            assert t["error_code"] == 0, t
            seen.setdefault(t["name"], []).extend(p["partition_index"] for p in t["partitions"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == {a: [0, 1, 2, 3, 4], b: [0, 1, 2]} and pages == 4
    missing = kp_admin.describe_topic_partitions([a + "-missing"])["topics"]
    assert [(t["name"], t["error_code"]) for t in missing] == [(a + "-missing", UNKNOWN_TOPIC)]


# -- quota.produce_throttle ---------------------------------------------------------------------------

def alter_client_quota(bootstrap, client_id, key, value):
    """AlterClientQuotas v1 on the wire: no Python client has the call."""
    from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

    m = request_module(49, 1)
    body = m.AlterClientQuotasRequest(validate_only=False, entries=(m.EntryData(
        entity=(m.EntityData(entity_type="client-id", entity_name=client_id),),
        ops=(m.OpData(key=key, value=value or 0.0, remove=value is None),)),))
    frame = encode_request(RequestHeader(49, 1, 1, "compat"), body)
    with socket.create_connection(host_port(bootstrap), timeout=15) as sock:
        sock.sendall(len(frame).to_bytes(4, "big") + frame)
        _, response = decode_response(recv_frame(sock), 49, 1)
    assert [e.error_code for e in response.entries] == [0], response


@pytest.mark.compat(client="confluent-kafka", scenario="quota.produce_throttle")
def test_produce_throttle_confluent(compat_target):
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, client = f"{compat_target.prefix}-throttled-ck", f"{compat_target.prefix}-throttled-ck-client"
    admin = AdminClient({"bootstrap.servers": compat_target.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(20)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, 15, 0.1, f"{topic} listed")
    alter_client_quota(compat_target.bootstrap_servers, client, "producer_byte_rate", 10240.0)
    throttles = {client: [], "free": []}

    def producer(client_id, key):
        return ck.Producer({"bootstrap.servers": compat_target.bootstrap_servers, "client.id": client_id,
                            "linger.ms": 0, "statistics.interval.ms": 100, "log_level": 2,
                            "stats_cb": lambda s: throttles[key].extend(
                                b["throttle"]["max"] for b in json.loads(s)["brokers"].values())})
    throttled, free = producer(client, client), producer(f"{compat_target.prefix}-free-ck", "free")
    try:
        sent = 0
        while sent < 400 and not any(throttles[client]):
            for p in (throttled, free):
                p.produce(topic, b"x" * 1024, partition=0)
                assert p.flush(30) == 0
                p.poll(0)
            sent += 1
        # the statistics of the request that was throttled come with the next interval
        wait_for(lambda: throttled.poll(0.1) is not None and any(throttles[client]), 10, 0.05, "a throttle in the statistics")
        free.poll(0.3)
        assert 60 <= sent <= 110, sent  # Kafka's 10-second window: ~100 KiB pass before the first throttle
        assert max(throttles[client]) > 0 and max(throttles["free"], default=0) == 0
    finally:
        alter_client_quota(compat_target.bootstrap_servers, client, "producer_byte_rate", None)


def test_kafka_python_infers_kafka_3_9(compat_target):
    """kafka-python picks its protocol versions by the broker version it infers from ApiVersions; Fetch v17
    is what tells 3.9 from 3.8 (kafka.protocol.broker_version_data)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=compat_target.bootstrap_servers)
    try:
        assert producer.config["api_version"] == (3, 9)
    finally:
        producer.close()


# -- legacy.message_formats ----------------------------------------------------------------------------

@pytest.mark.compat(client="kafka-python", scenario="legacy.message_formats")
@pytest.mark.parametrize("api_version,codec", [((0, 8, 2), None), ((0, 9), None), ((0, 9), "gzip"),
                                               ((0, 10, 1), None), ((0, 10, 1), "snappy"), ((0, 10, 1), "lz4")])
def test_legacy_message_formats_kafka_python(compat_target, api_version, codec):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = f"{compat_target.prefix}-legacy-{''.join(map(str, api_version))}-{codec}"
    magic1 = api_version >= (0, 10)
    bootstrap = compat_target.bootstrap_servers
    producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=api_version, compression_type=codec)
    try:
        sent = [producer.send(topic, key=b"k%d" % i, value=b"v%d" % i,
                              timestamp_ms=1_700_000_000_000 + i if magic1 else None).get(timeout=20)
                for i in range(3)]
    finally:
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=api_version, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        got = []
        for m in consumer:  # stops after 10 s without a record
            got.append((m.offset, m.key, m.value, m.timestamp))
            if len(got) == 3:
                break
        end = consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()
    assert [m.offset for m in sent] == [0, 1, 2]
    assert got == [(i, b"k%d" % i, b"v%d" % i, 1_700_000_000_000 + i if magic1 else None) for i in range(3)]
    assert end == 3


@pytest.mark.compat(client="confluent-kafka", scenario="quota.fetch_throttle")
def test_fetch_throttle_confluent(compat_target):
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, client = f"{compat_target.prefix}-fthrottled-ck", f"{compat_target.prefix}-fthrottled-ck-client"
    bootstrap = compat_target.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(20)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, 15, 0.1, f"{topic} listed")
    producer = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 2})
    for i in range(200):
        producer.produce(topic, b"%04d" % i + b"x" * 1020, partition=0)
    assert producer.flush(30) == 0
    alter_client_quota(bootstrap, client, "consumer_byte_rate", 20480.0)
    throttles: list[int] = []
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "client.id": client, "group.id": client,
                            "enable.auto.commit": False, "auto.offset.reset": "earliest", "log_level": 2,
                            "fetch.max.bytes": 65536, "max.partition.fetch.bytes": 65536, "message.max.bytes": 65536,
                            "statistics.interval.ms": 100, "stats_cb": lambda s: throttles.extend(
                                b["throttle"]["max"] for b in json.loads(s)["brokers"].values())})
    try:
        consumer.assign([ck.TopicPartition(topic, 0, 0)])
        values = []
        start = time.monotonic()
        while len(values) < 200 and time.monotonic() - start < 60:
            m = consumer.poll(0.2)
            if m is not None and m.error() is None:
                values.append(m.value()[:4])
        consumer.poll(0.3)  # one more statistics interval
        # 200 KiB at 20 KiB/s over Kafka's 10 s window: the broker throttles, the client waits and reads on
        assert values == [b"%04d" % i for i in range(200)]
        assert max(throttles) > 0, throttles
    finally:
        consumer.close()
        alter_client_quota(bootstrap, client, "consumer_byte_rate", None)
