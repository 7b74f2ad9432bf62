"""Java Admin (kafka-clients 3.9.1) with ``bootstrap.controllers`` (KIP-919) on a combined node's
controller listener: compat/java/ControllerAdminDriver.java runs each call against the CONTROLLER
listener, with a StandardAuthorizer and the client (ANONYMOUS on PLAINTEXT) a super user, as the
controller's DescribeCluster needs ALTER on the cluster. The expectations are Apache Kafka 3.9's on
config/kraft/server.properties (node 0 here)."""

from __future__ import annotations

import pytest

import shim
from compat.javarun import observed_of

E = "org.apache.kafka.common.errors."

pytestmark = [pytest.mark.compat(client="java", scenario="admin.bootstrap_controllers"),
              pytest.mark.shim_only("a controller listener of its own, with an authorizer")]

SCENARIOS = ("controller.describe_cluster", "controller.describe_quorum", "controller.describe_features",
             "controller.acls", "controller.broker_config")


def combined_node(tmp_path_factory, kafka_version: str) -> shim.BrokerThread:
    extra = {"process.roles": "broker,controller", "controller.listener.names": "CONTROLLER",
             "controller.quorum.voters": "0@127.0.0.1:9093"}
    return shim.BrokerThread(data_dir=tmp_path_factory.mktemp("controller") / "d", kafka_version=kafka_version,
                             listeners="PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0", extra=extra,
                             authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                             super_users="User:ANONYMOUS")


@pytest.fixture(scope="module")
def combined(tmp_path_factory):
    with combined_node(tmp_path_factory, "3.9") as broker:
        yield broker


@pytest.fixture(scope="module")
def observed(java_drivers, combined):
    out = java_drivers.run("ControllerAdminDriver", SCENARIOS, combined.bootstrap("CONTROLLER"), timeout=240,
                           prefix="ctrl", parallel=1, timeout_s=60)
    assert out["kafka_clients"] == "3.9.1"
    return observed_of(out["results"])


def controller_port(broker) -> int:
    return broker.node.bound_ports["CONTROLLER"]


def test_describe_cluster(observed, combined):
    obs = observed("controller.describe_cluster")
    assert obs["nodes"] == [[0, "127.0.0.1", controller_port(combined)]]  # the voter, at its controller address
    assert (obs["controller"], obs["cluster_id"]) == (0, combined.node.config.cluster_id)


def test_describe_metadata_quorum(observed, combined):
    obs = observed("controller.describe_quorum")
    assert (obs["leader"], obs["voters"], obs["observers"]) == (0, [0], 0)
    assert obs["endpoints"] == {"0": [["CONTROLLER", "127.0.0.1", controller_port(combined)]]}


def test_describe_features(observed):
    obs = observed("controller.describe_features")
    assert obs["finalized"] == {"kraft.version": 1, "metadata.version": 21} and obs["epoch_known"] is True


@pytest.fixture(scope="module")
def combined41(tmp_path_factory):
    with combined_node(tmp_path_factory, "4.1") as broker:
        yield broker


@pytest.fixture(scope="module")
def observed4(java4, combined41):
    """Every call again with kafka-clients 4.x against 4.1 emulation (the 4.1 controller's API versions)."""
    out = java4.run("ControllerAdminDriver", SCENARIOS, combined41.bootstrap("CONTROLLER"), timeout=240,
                    prefix="ctrl4", parallel=1, timeout_s=60)
    return observed_of(out["results"])


def test_kafka_clients_4_against_a_4_1_controller(observed4, combined41):
    port = controller_port(combined41)
    assert observed4("controller.describe_cluster")["nodes"] == [[0, "127.0.0.1", port]]
    quorum = observed4("controller.describe_quorum")
    assert (quorum["leader"], quorum["voters"], quorum["endpoints"]) == (0, [0], {"0": [["CONTROLLER", "127.0.0.1",
                                                                                         port]]})
    assert observed4("controller.describe_features")["finalized"] == {
        "eligible.leader.replicas.version": 1, "group.version": 1, "kraft.version": 1, "metadata.version": 27,
        "transaction.version": 2}
    obs = observed4("controller.broker_config")
    assert (obs["alter"], obs["value"], obs["source"]) == (None, "2000000", "DYNAMIC_BROKER_CONFIG")


def test_acls_through_the_controller(observed, observed4):
    # kafka-clients 3.9 refuses them itself (its ACL calls go to brokers only) ...
    obs = observed("controller.acls")
    assert obs["create"]["chain"] == obs["describe"]["chain"] == [E + "UnsupportedEndpointTypeException"]
    # ... 4.x sends them to the controller (LeastLoadedBrokerOrActiveKController), here a 4.1 one
    obs = observed4("controller.acls")
    assert (obs["create"], obs["describe"]) == (None, None)
    assert obs["described"] == [["User:carol", "READ", "ALLOW"]]


def test_incremental_alter_and_describe_broker_config(observed):
    obs = observed("controller.broker_config")
    assert obs["alter"] is None
    assert (obs["value"], obs["source"]) == ("2000000", "DYNAMIC_BROKER_CONFIG")
