"""admin.topic_configs, admin.broker_configs and topic.compression_zstd with the Python clients
(compat/scenarios/): kafka.KafkaAdminClient (kafka-python) and confluent_kafka.admin.AdminClient
create topics with configs, describe and alter topic and broker configs; a topic created with
compression.type=zstd holds zstd batches whatever the producers of kafka-python (none),
confluent-kafka (gzip) and aiokafka (lz4) sent, and all three read them back.

Runs against ``compat_target``; the on-disk check of the stored batches is made on kafka-shim only.
"""

from __future__ import annotations

import asyncio

import pytest

from compat.support import wait_for as _poll


def wait_for(describe, condition):
    """The first description that satisfies ``condition`` (Kafka applies config changes asynchronously)."""
    def attempt():
        d = describe()
        return d if condition(d) else None
    return _poll(attempt, 15, 0.1, "the described configs")

INVALID_CONFIG, INVALID_REQUEST = 40, 42
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 2, 5


# -- kafka-python -----------------------------------------------------------------------------------

class KafkaPythonAdmin:
    def __init__(self, bootstrap: str) -> None:
        from kafka import KafkaAdminClient

        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
        broker = self.admin.describe_cluster()["brokers"][0]
        self.node_id = str(broker.get("node_id", broker.get("broker_id")))

    def create(self, topic: str, configs: dict) -> int:
        result = self.admin.create_topics({topic: {"num_partitions": 1, "replication_factor": 1, "configs": configs}},
                                          raise_errors=False)
        return result["topics"][0]["error_code"]

    def describe(self, kind: str, name: str) -> dict:
        from kafka.admin import ConfigResource

        out = self.admin.describe_configs([ConfigResource(kind, name)], config_filter="all")
        from kafka.admin._configs import ConfigSourceType

        return {k: (v["value"], int(ConfigSourceType[v["config_source"]] if isinstance(v["config_source"], str)
                                    else v["config_source"]), v["read_only"], v["is_sensitive"])
                for k, v in out[kind][name].items()}

    def alter(self, kind: str, name: str, ops: dict, incremental: bool = True) -> int:
        from kafka.admin import AlterConfigOp, ConfigResource

        configs = {k: ((AlterConfigOp.DELETE, None) if v is None else (AlterConfigOp.SET, v)) for k, v in ops.items()}
        if not incremental:
            configs = dict(ops)
        out = self.admin.alter_configs([ConfigResource(kind, name, configs)], raise_on_unknown=False,
                                       incremental=incremental)
        result = out[kind][name]
        return 0 if result == "OK" else _errno(result)

    def close(self) -> None:
        self.admin.close()


def _errno(text: str) -> int:
    from kafka import errors

    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, errors.BrokerResponseError) and cls.__name__ in text:
            return cls.errno
    raise AssertionError(text)


# -- confluent-kafka --------------------------------------------------------------------------------

class ConfluentAdmin:
    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.node_id = str(next(iter(self.admin.list_topics(timeout=15).brokers)))

    def create(self, topic: str, configs: dict) -> int:
        from confluent_kafka.admin import NewTopic

        (future,) = self.admin.create_topics([NewTopic(topic, 1, 1, config=configs)]).values()
        try:
            future.result(15)
            return 0
        except Exception as e:  # noqa: BLE001 - the client's KafkaException carries the code
            return e.args[0].code()

    def describe(self, kind: str, name: str) -> dict:
        from confluent_kafka.admin import ConfigResource

        (future,) = self.admin.describe_configs([ConfigResource(kind, name)]).values()
        return {k: (v.value, int(v.source), v.is_read_only, v.is_sensitive) for k, v in future.result(15).items()}

    def alter(self, kind: str, name: str, ops: dict, incremental: bool = True) -> int:
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        if incremental:
            entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.DELETE if v is None
                                   else AlterConfigOpType.SET) for k, v in ops.items()]
            (future,) = self.admin.incremental_alter_configs([ConfigResource(kind, name, incremental_configs=entries)]).values()
        else:
            (future,) = self.admin.alter_configs([ConfigResource(kind, name, set_config=ops)]).values()
        try:
            future.result(15)
            return 0
        except Exception as e:  # noqa: BLE001
            return e.args[0].code()

    def close(self) -> None:
        pass


ADMINS = {"kafka-python": KafkaPythonAdmin, "confluent-kafka": ConfluentAdmin}
CLIENTS = [pytest.param(n, id=n, marks=pytest.mark.compat(client=n)) for n in ADMINS]


@pytest.mark.compat(scenario="admin.topic_configs")
@pytest.mark.parametrize("client_name", CLIENTS)
def test_topic_configs(compat_target, client_name):
    admin = ADMINS[client_name](compat_target.bootstrap_servers)
    topic = f"{compat_target.prefix}-configs-{client_name}"
    try:
        assert admin.create(topic, {"compression.type": "gzip", "retention.ms": "3600000"}) == 0
        assert admin.create(topic + "-bad", {"compression.type": "gzipx"}) == INVALID_CONFIG
        assert admin.create(topic + "-unknown", {"no.such.config": "1"}) == INVALID_CONFIG
        described = wait_for(lambda: admin.describe("topic", topic), lambda d: "compression.type" in d)
        assert described["compression.type"][:2] == ("gzip", TOPIC_CONFIG)
        assert described["retention.ms"][:2] == ("3600000", TOPIC_CONFIG)
        assert described["segment.ms"][:2] == ("604800000", DEFAULT_CONFIG)
        assert described["cleanup.policy"] == ("delete", DEFAULT_CONFIG, False, False)

        assert admin.alter("topic", topic, {"retention.ms": "7200000", "compression.type": None}) == 0
        after = wait_for(lambda: admin.describe("topic", topic), lambda d: d["retention.ms"][0] == "7200000")
        assert after["compression.type"][:2] == ("producer", DEFAULT_CONFIG)
        assert admin.alter("topic", topic, {"retention.ms": "-7"}) == INVALID_CONFIG

        assert admin.alter("topic", topic, {"max.message.bytes": "2000"}, incremental=False) == 0
        legacy = wait_for(lambda: admin.describe("topic", topic), lambda d: d["max.message.bytes"][0] == "2000")
        assert legacy["max.message.bytes"][1] == TOPIC_CONFIG
        # AlterConfigs replaces the whole set; kafka-python's alter_configs sends the other modified
        # configs along (its documented way to keep them), confluent-kafka sends only the one given.
        kept = client_name == "kafka-python"
        assert (legacy["retention.ms"][1] == TOPIC_CONFIG) is kept
    finally:
        admin.close()


@pytest.mark.compat(scenario="admin.broker_configs")
@pytest.mark.parametrize("client_name", CLIENTS)
def test_broker_configs(compat_target, client_name):
    admin = ADMINS[client_name](compat_target.bootstrap_servers)
    try:
        broker = admin.describe("broker", admin.node_id)
        if compat_target.is_shim:  # a real broker may listen elsewhere than its advertised address
            # the described broker's own listener (one of a cluster's)
            assert broker["listeners"][0] in {f"PLAINTEXT://{a}" for a in compat_target.bootstrap_servers.split(",")}
        assert broker["auto.create.topics.enable"][2] is True  # read-only
        assert broker["message.max.bytes"][2] is False  # cluster-wide dynamic
        assert broker["ssl.keystore.password"][0] is None and broker["ssl.keystore.password"][3] is True

        assert admin.alter("broker", admin.node_id, {"log.retention.ms": "86400000"}) == 0
        changed = wait_for(lambda: admin.describe("broker", admin.node_id),
                           lambda d: d["log.retention.ms"][0] == "86400000")
        assert changed["log.retention.ms"][1] == DYNAMIC_BROKER_CONFIG
        assert admin.alter("broker", admin.node_id, {"log.retention.ms": None}) == 0
        wait_for(lambda: admin.describe("broker", admin.node_id),
                 lambda d: d["log.retention.ms"][1] != DYNAMIC_BROKER_CONFIG)

        assert admin.alter("broker", admin.node_id, {"auto.create.topics.enable": "false"}) == INVALID_REQUEST
    finally:
        admin.close()


# -- topic.compression_zstd -------------------------------------------------------------------------

def _produce_all(bootstrap: str, topic: str) -> None:
    import confluent_kafka
    import kafka
    from aiokafka import AIOKafkaProducer

    kp = kafka.KafkaProducer(bootstrap_servers=bootstrap)
    kp.send(topic, b"kafka-python").get(15)
    kp.close()
    cp = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "compression.type": "gzip"})
    cp.produce(topic, b"confluent-kafka")
    assert cp.flush(15) == 0

    async def aio():
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type="lz4")
        await p.start()
        try:
            await p.send_and_wait(topic, b"aiokafka")
        finally:
            await p.stop()
    asyncio.run(aio())


def _read_kafka_python(bootstrap, topic):
    import kafka

    c = kafka.KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    try:
        return [m.value for _, m in zip(range(3), c)]
    finally:
        c.close()


def _read_confluent(bootstrap, topic):
    import confluent_kafka

    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": topic + "-c", "auto.offset.reset": "earliest"})
    c.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    got = []
    try:
        for _ in range(30):
            m = c.poll(1)
            if m is not None and m.error() is None:
                got.append(m.value())
            if len(got) == 3:
                break
        return got
    finally:
        c.close()


def _read_aiokafka(bootstrap, topic):
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run():
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await c.start()
        try:
            c.assign([TopicPartition(topic, 0)])
            got = []
            while len(got) < 3:
                batch = await c.getmany(timeout_ms=10_000)
                if not batch:
                    break
                got += [m.value for ms in batch.values() for m in ms]
            return got
        finally:
            await c.stop()
    return asyncio.run(run())


READERS = {"kafka-python": _read_kafka_python, "confluent-kafka": _read_confluent, "aiokafka": _read_aiokafka}


@pytest.fixture(scope="module")
def zstd_topic(compat_target):
    topic = f"{compat_target.prefix}-zstd"
    admin = ConfluentAdmin(compat_target.bootstrap_servers)
    assert admin.create(topic, {"compression.type": "zstd"}) == 0
    _produce_all(compat_target.bootstrap_servers, topic)
    return topic


@pytest.mark.compat(scenario="topic.compression_zstd")
@pytest.mark.parametrize("client_name", [pytest.param(n, id=n, marks=pytest.mark.compat(client=n)) for n in READERS])
def test_zstd_topic_holds_zstd_batches_every_client_reads(compat_target, zstd_topic, client_name):
    got = READERS[client_name](compat_target.bootstrap_servers, zstd_topic)
    assert got == [b"kafka-python", b"confluent-kafka", b"aiokafka"]
    if compat_target.is_shim:
        from kafka_codecs import Compression
        from kafka_codecs.batch import iter_batches

        plog = compat_target.broker.node.logs.get(zstd_topic, 0)
        stored = [h.compression for seg in plog.segments for _, h in iter_batches(seg.log_path.read_bytes())]
        assert stored == [Compression.ZSTD] * 3
