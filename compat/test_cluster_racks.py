"""``broker.rack`` in a simulated cluster: each broker's rack reaches the clients through Metadata
and DescribeCluster, as Kafka's brokers report theirs (confluent-kafka's and kafka-python's
admin clients, librdkafka's metadata). With racks, a KIP-848 group still gets Kafka 4.1's
placement: its built-in assignors do not use racks (tests/groups/test_assignor_vectors.py)."""

from __future__ import annotations

import pytest

from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("configures the simulated cluster's racks")

RACKS = "rack-a,rack-b,rack-c"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with BrokerThread(data_dir=tmp_path_factory.mktemp("racks"), listen="127.0.0.1:0", brokers=3,
                      extra={"broker.rack": RACKS}) as broker:
        yield broker


def test_confluent_kafka_describes_each_brokers_rack(cluster):
    ck_admin = pytest.importorskip("confluent_kafka.admin")
    admin = ck_admin.AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    nodes = admin.describe_cluster(request_timeout=30).result(timeout=60).nodes
    first = cluster.node.node_ids[0]
    assert {n.id: n.rack for n in nodes} == {first: "rack-a", first + 1: "rack-b", first + 2: "rack-c"}


def test_kafka_python_reads_the_racks_from_metadata(cluster):
    kafka = pytest.importorskip("kafka")
    client = kafka.KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        described = client.describe_cluster()
    finally:
        client.close()
    first = cluster.node.node_ids[0]
    assert {b["broker_id"]: b["rack"] for b in described["brokers"]} == {
        first: "rack-a", first + 1: "rack-b", first + 2: "rack-c"}
