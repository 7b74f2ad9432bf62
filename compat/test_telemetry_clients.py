"""KIP-714 client telemetry with real clients: kafka-shim, like a Kafka without a telemetry
receiver, does not advertise GetTelemetrySubscriptions (71) and PushTelemetry (72), so clients
that push metrics by default (librdkafka >= 2.5 and kafka-clients >= 3.7, ``enable.metrics.push``)
never send them; a client that sends them anyway is answered as Kafka answers, over a socket, and
from Kafka 4.0 its client instance goes when the connection that made it closes (KAFKA-17778);
a client that matches a CLIENT_METRICS subscription is given it and pushes.
The broker's request log shows what each client sent; synchronised on the broker's state."""

from __future__ import annotations

import uuid

import pytest

import shim
from compat.support import _ask, first_address, wait_for

pytestmark = pytest.mark.shim_only("reads the broker's request log and client instances")

TELEMETRY = {"GetTelemetrySubscriptions", "PushTelemetry"}
INSTANCE = uuid.UUID("f0dd73ef-14b9-4dba-82d2-9fbcc85cd8bf")


def advertised(bootstrap: str) -> set[int]:
    from shim.protocol.messages import make, request_class

    r = _ask(first_address(bootstrap), 18, 3, make(request_class(18, 3), client_software_name="compat",
                                                   client_software_version="1"))
    return {k.api_key for k in r.api_keys}


def get_subscriptions(bootstrap: str, instance_id=uuid.UUID(int=0)):
    from shim.protocol.messages import make, request_class

    return _ask(first_address(bootstrap), 71, 0, make(request_class(71, 0), client_instance_id=instance_id))


def push(bootstrap: str, instance_id, subscription_id: int) -> int:
    from shim.protocol.messages import make, request_class

    return _ask(first_address(bootstrap), 72, 0, make(request_class(72, 0), client_instance_id=instance_id,
                                                      subscription_id=subscription_id, terminating=False,
                                                      compression_type=0, metrics=b"")).error_code


def sent(broker) -> set[str]:
    return {e["api"] for e in broker.control.requests()["requests"]}


def telemetry_answers(broker) -> list[tuple[str, str | None]]:
    return [(e["api"], e["error"]) for e in broker.control.requests()["requests"] if e["api"] in TELEMETRY]


@pytest.fixture(params=[False, True], ids=["not-advertised", "advertised"])
def advertising(request, monkeypatch):
    """``advertised``: ApiVersions lists 71 and 72 as with a telemetry receiver (a test-only patch),
    to show the client then does ask, is answered, and carries on."""
    if request.param:
        from shim.apis import k18_api_versions
        from shim.apis.registry import REGISTRY

        plain = k18_api_versions.served
        monkeypatch.setattr(k18_api_versions, "served", lambda release: sorted(
            [*plain(release), (REGISTRY[71], 0, 0), (REGISTRY[72], 0, 0)], key=lambda s: s[0].key))
    return request.param


@pytest.mark.parametrize("release, second_push", [("3.9", 89), ("4.1", 0)])  # THROTTLING_QUOTA_EXCEEDED, NONE
def test_answered_over_a_socket_and_gone_with_the_connection_from_4_0(tmp_path, release, second_push):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        bs = broker.bootstrap_servers
        assert not advertised(bs) & {71, 72}
        r = get_subscriptions(bs, INSTANCE)
        assert (r.error_code, r.client_instance_id, r.subscription_id) == (0, INSTANCE, 2049778312)
        assert push(bs, INSTANCE, r.subscription_id) == 0  # on a second connection: the lookup's is closed
        wait_for(lambda: broker.call(lambda: not broker.node.control.server.connections),
                 message="the connections closed")
        still = broker.call(lambda: INSTANCE in broker.node.client_metrics.instances)
        assert still == (release < "4.0")
        assert push(bs, INSTANCE, r.subscription_id) == second_push  # a fresh instance takes it at once


@pytest.mark.compat(client="confluent-kafka", scenario="telemetry")
def test_librdkafka_does_not_push_to_a_broker_that_does_not_advertise_telemetry(tmp_path, advertising):
    ck = pytest.importorskip("confluent_kafka")
    assert ck.libversion()[1] >= 0x02050000  # KIP-714 arrived in librdkafka 2.5
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        broker.control.log_requests()
        before = advertised(bs)
        producer = ck.Producer({"bootstrap.servers": bs, "enable.metrics.push": True})
        producer.produce("telemetry-topic", b"v", partition=0)
        assert producer.flush(30) == 0
        consumer = ck.Consumer({"bootstrap.servers": bs, "group.id": "telemetry-g", "enable.metrics.push": True,
                                "auto.offset.reset": "earliest"})
        consumer.subscribe(["telemetry-topic"])
        got = []
        try:
            wait_for(lambda: got.extend(m.value() for m in consumer.consume(10, 0.2) if m.error() is None) or got,
                     timeout=60, message="the record")
        finally:
            consumer.close()
        del producer
        apis = sent(broker)
        assert {"ApiVersions", "Produce", "Fetch"} <= apis, apis
        if advertising:  # each client looks its subscription up, is answered, and has nothing to push
            assert set(telemetry_answers(broker)) == {("GetTelemetrySubscriptions", None)}
            return
        assert not apis & TELEMETRY, apis
        assert advertised(bs) == before and not before & {71, 72}


@pytest.mark.compat(client="java", scenario="telemetry")
def test_kafka_clients_do_not_push_to_a_broker_that_does_not_advertise_telemetry(tmp_path, java4, advertising):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        broker.control.log_requests()
        before = advertised(bs)
        out = java4.run("KafkaDriver", ["topic.future_timestamps"], bs, timeout=200, prefix="j4tel", timeout_s=60)
        result = out["results"]["topic.future_timestamps"]
        assert result["ok"], result["error"]
        apis = sent(broker)
        assert {"ApiVersions", "Produce", "CreateTopics"} <= apis, apis  # a producer and an Admin, pushing by default
        if advertising:
            assert set(telemetry_answers(broker)) == {("GetTelemetrySubscriptions", None)}
            return
        assert not apis & TELEMETRY, apis
        assert advertised(bs) == before and not before & {71, 72}


@pytest.mark.compat(client="confluent-kafka", scenario="telemetry")
def test_librdkafka_pushes_what_a_matching_subscription_asks_for(tmp_path, monkeypatch):
    """With the APIs advertised (the test-only patch) and a CLIENT_METRICS subscription that selects
    clients by the software name their ApiVersions gave and their source port, librdkafka is given
    it and pushes its metrics at the subscription's interval; they are accepted (and dropped)."""
    ck = pytest.importorskip("confluent_kafka")
    from shim.apis import k18_api_versions
    from shim.apis.registry import REGISTRY
    from shim.protocol.messages import make, request_class, request_module

    plain = k18_api_versions.served
    monkeypatch.setattr(k18_api_versions, "served", lambda release: sorted(
        [*plain(release), (REGISTRY[71], 0, 0), (REGISTRY[72], 0, 0)], key=lambda s: s[0].key))
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        # confluent-kafka's Admin has no CLIENT_METRICS resource type: the request kafka-configs.sh sends
        m = request_module(44, 1)
        configs = {"metrics": "*", "interval.ms": "500", "match": "client_software_name=.+,client_source_port=[0-9]+"}
        r = _ask(first_address(bs), 44, 1, make(request_class(44, 1), validate_only=False, resources=(
            m.AlterConfigsResource(resource_type=16, resource_name="everything", configs=tuple(
                m.AlterableConfig(name=k, config_operation=0, value=v) for k, v in configs.items())),)))
        assert r.responses[0].error_code == 0
        broker.control.log_requests()
        producer = ck.Producer({"bootstrap.servers": bs, "enable.metrics.push": True})
        producer.produce("telemetry-topic", b"v", partition=0)
        assert producer.flush(30) == 0
        wait_for(lambda: ("PushTelemetry", None) in telemetry_answers(broker), timeout=30,
                 message="a push of the subscribed metrics")
        instances = broker.call(lambda: [i.metrics for i in broker.node.client_metrics.instances.values()])
        del producer
        assert ("*",) in instances
