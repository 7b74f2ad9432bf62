"""admin.topics and admin.list_offsets_isolation with the Python clients' admin APIs
(compat/scenarios/): kafka.KafkaAdminClient (kafka-python), confluent_kafka.admin.AdminClient
and aiokafka.admin.AIOKafkaAdminClient.

* admin.topics, all three: create a 3-partition topic, create it again (the client's
  TopicAlreadyExists error), describe it (3 partitions, each led by the cluster's one node, 1
  replica, 1 ISR, not internal, a non-zero topic id), list it, and delete another topic. aiokafka
  describes topics with Metadata v5 at most, which carries no topic id: that one point is not
  observable through it.
* admin.list_offsets_isolation, kafka-python (``list_partition_offsets``) and confluent-kafka
  (``list_offsets``): offsets 0-1 plain, 2 committed, 3 COMMIT, 4 an open transaction's, 5 plain;
  earliest, latest and for-timestamp under both isolation levels, then again after the commit.
  The transaction markers carry the broker's clock, and Kafka's timestamp lookup takes the first
  record of the first batch at or after the timestamp, markers included. The scenario's values
  therefore need the records' timestamps to be ahead of the markers' (the first test); a second
  test writes them a minute in the past and checks that the lookup lands on the COMMIT marker, as
  it does on Kafka. aiokafka's admin client has no ListOffsets call (only its consumer looks
  offsets up, with the consumer's isolation level), so that cell is not applicable.

The records are written by producers of the same library, with explicit CreateTime timestamps.
Runs against ``compat_target``; where Apache Kafka is asynchronous (leaders of a new topic, the
markers after EndTxn, a deletion) the tests wait for the state they check.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from compat.txn_clients import wait_for

# -- admin.topics ----------------------------------------------------------------------------------


def _zero_uuid(value) -> bool:
    return value is None or uuid.UUID(str(value)).int == 0


def topics_kafka_python(bootstrap: str, topic: str, doomed: str) -> dict:
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        obs: dict = {}
        result = admin.create_topics({topic: {"num_partitions": 3, "replication_factor": 1}})
        (created,) = result["topics"]
        assert (created["error_code"], created["num_partitions"], created["replication_factor"]) == (0, 3, 1), result
        try:
            admin.create_topics({topic: {"num_partitions": 3, "replication_factor": 1}})
            obs["create_again"] = 0
        except KafkaError as e:
            obs["create_again"] = e.errno

        def described():  # Kafka's metadata may lag the creation a little
            found = [d for d in admin.describe_topics([topic]) if d["name"] == topic]
            ok = found and found[0]["error_code"] == 0 and len(found[0]["partitions"]) == 3 and \
                all(p["leader_id"] >= 0 for p in found[0]["partitions"])
            return found[0] if ok else None
        d = wait_for(described, 15, 0.1, f"{topic} described with a leader for every partition")
        obs["partitions"] = [(p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
                             for p in sorted(d["partitions"], key=lambda p: p["partition_index"])]
        obs["internal"] = d["is_internal"]
        obs["topic_id"] = None if _zero_uuid(d["topic_id"]) else str(d["topic_id"])
        assert str(created["topic_id"]) == obs["topic_id"], (created, d)  # CreateTopics v7 answers with it
        obs["nodes"] = [b["broker_id"] for b in admin.describe_cluster()["brokers"]]
        obs["listed"] = topic in admin.list_topics()

        result = admin.create_topics({doomed: {"num_partitions": 1, "replication_factor": 1}})
        assert [t["error_code"] for t in result["topics"]] == [0], result
        wait_for(lambda: doomed in admin.list_topics(), 15, 0.1, f"{doomed} listed")
        result = admin.delete_topics([doomed])
        assert [(t["name"], t["error_code"]) for t in result["topics"]] == [(doomed, 0)], result
        wait_for(lambda: doomed not in admin.list_topics(), 15, 0.1, f"{doomed} gone")
        return obs
    finally:
        admin.close()


def topics_confluent(bootstrap: str, topic: str, doomed: str) -> dict:
    from confluent_kafka import KafkaError, KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 2})
    obs: dict = {}
    admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=15)[topic].result(20)
    try:
        admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=15)[topic].result(20)
        obs["create_again"] = 0
    except KafkaException as e:
        obs["create_again"] = e.args[0].code()  # librdkafka keeps Kafka's code for broker errors

    def described():  # Kafka's metadata may lag the creation a little
        try:
            d = admin.describe_topics(TopicCollection([topic]))[topic].result(20)
        except KafkaException as e:
            if e.args[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.LEADER_NOT_AVAILABLE):
                return None
            raise
        ok = len(d.partitions) == 3 and all(p.leader is not None and p.leader.id >= 0 for p in d.partitions)
        return d if ok else None
    d = wait_for(described, 15, 0.1, f"{topic} described with a leader for every partition")
    obs["partitions"] = [(p.id, p.leader.id, [n.id for n in p.replicas], [n.id for n in p.isr])
                         for p in sorted(d.partitions, key=lambda p: p.id)]
    obs["internal"] = d.is_internal
    zero = (d.topic_id.get_most_significant_bits(), d.topic_id.get_least_significant_bits()) == (0, 0)
    obs["topic_id"] = None if zero else str(d.topic_id)
    obs["nodes"] = [n.id for n in admin.describe_cluster().result(20).nodes]
    obs["listed"] = topic in admin.list_topics(timeout=20).topics

    admin.create_topics([NewTopic(doomed, 1, 1)], operation_timeout=15)[doomed].result(20)
    wait_for(lambda: doomed in admin.list_topics(timeout=20).topics, 15, 0.1, f"{doomed} listed")
    assert admin.delete_topics([doomed], operation_timeout=15)[doomed].result(20) is None
    wait_for(lambda: doomed not in admin.list_topics(timeout=20).topics, 15, 0.1, f"{doomed} gone")
    return obs


def topics_aiokafka(bootstrap: str, topic: str, doomed: str) -> dict:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    async def run():
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
        await admin.start()
        try:
            obs: dict = {}
            r = await admin.create_topics([NewTopic(topic, 3, 1)])
            assert [(t[0], t[1]) for t in r.topic_errors] == [(topic, 0)], r
            r = await admin.create_topics([NewTopic(topic, 3, 1)])  # errors come back in the response
            ((name, code, *_),) = r.topic_errors
            assert name == topic, r
            obs["create_again"] = code

            deadline = time.monotonic() + 15
            while True:
                (d,) = await admin.describe_topics([topic])
                parts = d["partitions"]
                if d["error_code"] == 0 and len(parts) == 3 and all(p["leader"] >= 0 for p in parts):
                    break
                assert time.monotonic() < deadline, d
                await asyncio.sleep(0.1)
            obs["partitions"] = [(p["partition"], p["leader"], p["replicas"], p["isr"])
                                 for p in sorted(d["partitions"], key=lambda p: p["partition"])]
            obs["internal"] = d["is_internal"]
            # no "topic_id": aiokafka's describe_topics sends Metadata <= v5, which has no topic ids
            obs["nodes"] = [b["node_id"] for b in (await admin.describe_cluster())["brokers"]]
            obs["listed"] = topic in await admin.list_topics()

            r = await admin.create_topics([NewTopic(doomed, 1, 1)])
            assert [(t[0], t[1]) for t in r.topic_errors] == [(doomed, 0)], r
            deadline = time.monotonic() + 15
            while doomed not in await admin.list_topics():  # Kafka's metadata may lag the creation
                assert time.monotonic() < deadline, f"{doomed} not listed"
                await asyncio.sleep(0.1)
            r = await admin.delete_topics([doomed])
            assert [(t[0], t[1]) for t in r.topic_error_codes] == [(doomed, 0)], r
            deadline = time.monotonic() + 15
            while doomed in await admin.list_topics():
                assert time.monotonic() < deadline, f"{doomed} still listed"
                await asyncio.sleep(0.1)
            return obs
        finally:
            await admin.close()

    return asyncio.run(run())


TOPICS = {"kafka-python": topics_kafka_python, "confluent-kafka": topics_confluent, "aiokafka": topics_aiokafka}


@pytest.mark.compat(scenario="admin.topics")
@pytest.mark.parametrize("client_name", [pytest.param(n, id=n, marks=pytest.mark.compat(client=n))
                                         for n in ("kafka-python", "confluent-kafka", "aiokafka")])
def test_admin_topics(compat_target, client_name):
    prefix = f"{compat_target.prefix}-admin-{client_name}"
    obs = TOPICS[client_name](compat_target.bootstrap_servers, f"{prefix}-topic", f"{prefix}-doomed")
    assert obs["create_again"] == 36  # TOPIC_ALREADY_EXISTS, by every client
    nodes = obs["nodes"]  # one broker, or a simulated cluster's (--shim-brokers)
    assert len(nodes) == len(compat_target.bootstrap_servers.split(","))
    leaders = [leader for _, leader, _, _ in obs["partitions"]]
    assert obs["partitions"] == [(p, leader, [leader], [leader]) for p, leader in enumerate(leaders)]
    assert len(set(leaders)) == min(3, len(nodes)) and set(leaders) <= set(nodes)  # spread over the brokers
    assert obs["internal"] is False
    if client_name != "aiokafka":  # see topics_aiokafka
        assert obs["topic_id"] is not None
    assert obs["listed"] is True


# -- admin.list_offsets_isolation --------------------------------------------------------------------


class KafkaPythonSide:
    """kafka-python's producers (plain and transactional) and KafkaAdminClient.list_partition_offsets."""

    def __init__(self, bootstrap: str, txn_id: str) -> None:
        from kafka import KafkaAdminClient, KafkaProducer

        self.plain_p = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
        self.txn_p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, request_timeout_ms=10_000)
        self.txn_p.init_transactions()
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)

    def plain(self, topic, value, ts):
        return self.plain_p.send(topic, value, partition=0, timestamp_ms=ts).get(timeout=20).offset

    def txn(self, topic, value, ts):
        return self.txn_p.send(topic, value, partition=0, timestamp_ms=ts).get(timeout=20).offset

    def begin(self):
        self.txn_p.begin_transaction()

    def commit(self):
        self.txn_p.commit_transaction()

    def lookup(self, topic, spec, read_committed: bool) -> tuple[int, int]:
        """(offset, timestamp) from ListOffsets; spec: "earliest", "latest" or a timestamp."""
        from kafka import IsolationLevel, TopicPartition
        from kafka.admin import OffsetSpec, OffsetTimestamp

        tp = TopicPartition(topic, 0)
        spec = {"earliest": OffsetSpec.EARLIEST, "latest": OffsetSpec.LATEST}.get(spec) or OffsetTimestamp(spec)
        iso = IsolationLevel.READ_COMMITTED if read_committed else IsolationLevel.READ_UNCOMMITTED
        found = self.admin.list_partition_offsets({tp: spec}, isolation_level=iso)[tp]
        return found.offset, found.timestamp

    def close(self):
        self.admin.close()
        self.txn_p.close(timeout=2)
        self.plain_p.close(timeout=2)


class ConfluentSide:
    """librdkafka producers (plain and transactional) and AdminClient.list_offsets."""

    def __init__(self, bootstrap: str, txn_id: str) -> None:
        import confluent_kafka as ck
        from confluent_kafka.admin import AdminClient

        self.plain_p = ck.Producer({"bootstrap.servers": bootstrap, "log_level": 2})
        self.txn_p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "log_level": 2})
        self.txn_p.init_transactions(20)
        self.admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 2})

    @staticmethod
    def _send(p, topic, value, ts):
        import confluent_kafka as ck

        reports = []
        p.produce(topic, value, partition=0, timestamp=ts, on_delivery=lambda err, msg: reports.append((err, msg)))
        wait_for(lambda: p.poll(0.05) >= 0 and reports, 20, 0, "the delivery report")
        err, msg = reports[0]
        if err is not None:
            raise ck.KafkaException(err)
        return msg.offset()

    def plain(self, topic, value, ts):
        return self._send(self.plain_p, topic, value, ts)

    def txn(self, topic, value, ts):
        return self._send(self.txn_p, topic, value, ts)

    def begin(self):
        self.txn_p.begin_transaction()

    def commit(self):
        self.txn_p.commit_transaction(20)

    def lookup(self, topic, spec, read_committed: bool) -> tuple[int, int]:
        from confluent_kafka import IsolationLevel, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        tp = TopicPartition(topic, 0)
        spec = {"earliest": OffsetSpec.earliest(), "latest": OffsetSpec.latest()}.get(spec) or \
            OffsetSpec.for_timestamp(spec)
        iso = IsolationLevel.READ_COMMITTED if read_committed else IsolationLevel.READ_UNCOMMITTED
        (f,) = self.admin.list_offsets({tp: spec}, isolation_level=iso, request_timeout=15).values()
        found = f.result(20)
        return found.offset, found.timestamp

    def close(self):
        self.plain_p.flush(5)
        self.txn_p.flush(5)
        del self.plain_p, self.txn_p, self.admin


SIDES = {"kafka-python": KafkaPythonSide, "confluent-kafka": ConfluentSide}
ISOLATIONS = ("read_uncommitted", "read_committed")


@pytest.fixture
def side(client_name, compat_target, request):
    """A fresh one-partition topic and the client's producers and admin client."""
    from compat.wire import Wire

    topic = f"{compat_target.prefix}-{request.node.originalname.removeprefix('test_')}-{client_name}"
    wire = Wire(compat_target.bootstrap_servers)
    try:
        wire.create_topic(topic)
    finally:
        wire.close()
    s = SIDES[client_name](compat_target.bootstrap_servers, f"{topic}-T")
    s.topic = topic
    yield s
    s.close()


def write_layout(side, t0: int) -> None:
    """p-0, p-1 (plain), c-2 (committed txn), COMMIT 3, open-4 (txn left open), p-5 (plain);
    record i has timestamp t0 + 1000 * i."""
    topic = side.topic
    assert side.plain(topic, b"p-0", t0) == 0
    assert side.plain(topic, b"p-1", t0 + 1000) == 1
    side.begin()
    assert side.txn(topic, b"c-2", t0 + 2000) == 2
    side.commit()  # COMMIT at 3
    wait_for(lambda: side.lookup(topic, "latest", True)[0] == 4, 20, 0.05, "the COMMIT marker at 3")
    side.begin()
    assert side.txn(topic, b"open-4", t0 + 4000) == 4  # left open
    assert side.plain(topic, b"p-5", t0 + 5000) == 5


def each_admin_client():
    return pytest.mark.parametrize("client_name", [pytest.param(n, id=n, marks=pytest.mark.compat(client=n))
                                                   for n in ("kafka-python", "confluent-kafka")])


@pytest.mark.compat(scenario="admin.list_offsets_isolation")
@each_admin_client()
def test_list_offsets_isolation(side):
    """The scenario's layout with record timestamps a minute ahead of the clocks: the markers,
    which the broker stamps with its own clock, are older than every record, so a timestamp
    lookup finds the records themselves (see the next test for lookups that meet a marker)."""
    topic = side.topic
    t0 = int(time.time() * 1000) + 60_000
    write_layout(side, t0)

    def offsets(*specs):
        return {(iso, spec): side.lookup(topic, spec, iso == "read_committed")[0]
                for iso in ISOLATIONS for spec in specs}

    assert offsets("earliest", "latest", t0 + 1000, t0 + 5000) == {
        ("read_uncommitted", "earliest"): 0, ("read_uncommitted", "latest"): 6,
        ("read_uncommitted", t0 + 1000): 1, ("read_uncommitted", t0 + 5000): 5,
        ("read_committed", "earliest"): 0, ("read_committed", "latest"): 4,  # the LSO
        ("read_committed", t0 + 1000): 1, ("read_committed", t0 + 5000): -1,  # p-5 lies past the LSO
    }
    assert side.lookup(topic, t0 + 5000, False) == (5, t0 + 5000)  # the record's own timestamp
    side.commit()  # COMMIT at 6
    wait_for(lambda: side.lookup(topic, "latest", True)[0] == 7, 20, 0.05, "the COMMIT marker at 6")
    assert offsets("latest", t0 + 5000) == {
        ("read_uncommitted", "latest"): 7, ("read_uncommitted", t0 + 5000): 5,
        ("read_committed", "latest"): 7, ("read_committed", t0 + 5000): 5,
    }


@pytest.mark.compat(scenario="admin.list_offsets_isolation")
@each_admin_client()
def test_list_offsets_for_timestamp_meets_a_marker(side):
    """The same layout with record timestamps a minute behind the clocks: the COMMIT marker at 3
    carries the broker's current time, so it is the first batch at or after t0 + 5000. Apache Kafka does not skip control batches there: the lookup
    answers offset 3 with the marker's timestamp, under both isolation levels (3 < LSO 4)."""
    topic = side.topic
    t0 = int(time.time() * 1000) - 60_000
    write_layout(side, t0)
    assert side.lookup(topic, t0 + 1000, True)[0] == side.lookup(topic, t0 + 1000, False)[0] == 1
    for iso in ISOLATIONS:
        offset, ts = side.lookup(topic, t0 + 5000, iso == "read_committed")
        assert offset == 3 and ts >= t0 + 5000, (iso, offset, ts)
