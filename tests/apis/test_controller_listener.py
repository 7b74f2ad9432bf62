"""The controller listener (controller.listener.names) over loopback, with raw Kafka requests: it
serves the controller's APIs alone, as Kafka's ControllerServer does, and the broker listener is
unchanged beside it. Every wait is on an observed answer or end of stream."""

from __future__ import annotations

import datetime
import uuid

import pytest

from shim import Broker
from shim.apis import controller
from shim.errors import ErrorCode
from shim.protocol.kafka_releases import RELEASES
from tests.security.test_listeners_wire import closed, frame, metadata, open_to, roundtrip

COMBINED = {"process.roles": "broker,controller", "controller.listener.names": "CONTROLLER",
            "controller.quorum.voters": "0@127.0.0.1:9093"}


def combined(tmp_path, **fields) -> Broker:
    """Kafka's config/kraft/server.properties, on free ports (the map left to Kafka's default)."""
    return Broker(data_dir=tmp_path / "d", listeners="PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
                  extra=dict(COMBINED), **fields)


def api_versions(correlation_id: int = 1) -> bytes:
    return frame(18, 3, correlation_id, client_software_name="wire-test", client_software_version="1")


def describe_cluster(endpoint_type: int, version: int = 1, correlation_id: int = 1) -> bytes:
    typed = {"endpoint_type": endpoint_type} if version else {}  # v0 has no field: it asks for brokers
    return frame(60, version, correlation_id, include_cluster_authorized_operations=False, **typed)


async def test_each_listener_lists_its_own_apis(tmp_path):
    async with combined(tmp_path) as broker:
        keys = {}
        for listener in ("PLAINTEXT", "CONTROLLER"):
            reader, writer = await open_to(broker, listener)
            answer = await roundtrip(reader, writer, api_versions(), 18, 3)
            assert answer.error_code == ErrorCode.none
            keys[listener] = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
            writer.close()
        assert keys["CONTROLLER"] == {k: (low, high) for k, low, high in controller.advertised("3.9")}
        assert {52, 53, 54, 59, 62, 63, 70} <= set(keys["CONTROLLER"])  # raft's and the nodes' own
        assert not {0, 3, 8, 10, 11, 22} & set(keys["CONTROLLER"])  # Produce, Metadata, groups, producer ids
        assert {0, 3, 8, 10, 11, 22} <= set(keys["PLAINTEXT"]) and not {52, 62} & set(keys["PLAINTEXT"])


async def test_a_broker_api_on_the_controller_listener_closes_the_connection(tmp_path):
    async with combined(tmp_path) as broker:
        reader, writer = await open_to(broker, "CONTROLLER")
        produce = frame(0, 9, 1, transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=1), topic_data=())
        assert await roundtrip(reader, writer, produce, 0, 9) is None
        assert await closed(reader)
        reader, writer = await open_to(broker, "CONTROLLER")  # Metadata too
        assert await roundtrip(reader, writer, metadata(), 3, 12) is None
        reader, writer = await open_to(broker, "PLAINTEXT")  # the broker listener serves them
        answer = await roundtrip(reader, writer, metadata(), 3, 12)
        assert [(b.host, b.port) for b in answer.brokers] == [("127.0.0.1", broker.node.bound_ports["PLAINTEXT"])]


async def test_describe_cluster_on_each_listener(tmp_path):
    async with combined(tmp_path) as broker:
        plain, ctrl = broker.node.bound_ports["PLAINTEXT"], broker.node.bound_ports["CONTROLLER"]
        reader, writer = await open_to(broker, "CONTROLLER")
        answer = await roundtrip(reader, writer, describe_cluster(2), 60, 1)
        assert (answer.error_code, answer.endpoint_type, answer.controller_id) == (ErrorCode.none, 2, 0)
        assert [(b.broker_id, b.host, b.port) for b in answer.brokers] == [(0, "127.0.0.1", ctrl)]
        answer = await roundtrip(reader, writer, describe_cluster(1, correlation_id=2), 60, 1)
        assert (answer.error_code, answer.error_message) == (
            ErrorCode.mismatched_endpoint_type,
            "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER")
        answer = await roundtrip(reader, writer, describe_cluster(1, version=0, correlation_id=3), 60, 0)
        assert answer.error_code == ErrorCode.invalid_request  # v0 asks for brokers
        reader, writer = await open_to(broker, "PLAINTEXT")
        answer = await roundtrip(reader, writer, describe_cluster(1), 60, 1)
        assert (answer.error_code, answer.endpoint_type) == (ErrorCode.none, 1)
        assert [(b.broker_id, b.port) for b in answer.brokers] == [(0, plain)]  # not the controller listener
        answer = await roundtrip(reader, writer, describe_cluster(2, correlation_id=2), 60, 1)
        assert answer.error_code == ErrorCode.mismatched_endpoint_type


async def test_describe_cluster_on_the_controller_needs_alter_on_the_cluster(tmp_path):
    async with combined(tmp_path, authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                        allow_everyone_if_no_acl_found=False) as broker:
        reader, writer = await open_to(broker, "CONTROLLER")
        answer = await roundtrip(reader, writer, describe_cluster(2), 60, 1)
        assert answer.error_code == ErrorCode.cluster_authorization_failed
        reader, writer = await open_to(broker, "PLAINTEXT")  # the broker's needs nothing
        answer = await roundtrip(reader, writer, describe_cluster(1), 60, 1)
        assert answer.error_code == ErrorCode.none


async def test_describe_quorum_names_the_controller_listener(tmp_path):
    async with combined(tmp_path) as broker:
        reader, writer = await open_to(broker, "PLAINTEXT")
        answer = await roundtrip(reader, writer, frame(55, 2, 1, topics=(
            _quorum_topic(),)), 55, 2)
        listeners = [(lst.name, lst.port) for n in answer.nodes for lst in n.listeners]
        assert listeners == [("CONTROLLER", broker.node.bound_ports["CONTROLLER"])]


def _quorum_topic():
    from shim.protocol.messages import request_class

    m = __import__(request_class(55, 2).__module__, fromlist=["TopicData"])
    return m.TopicData(topic_name="__cluster_metadata", partitions=(m.PartitionData(partition_index=0),))


async def test_raft_requests_from_a_client_change_nothing(tmp_path):
    from shim.protocol.messages import request_class

    m = __import__(request_class(52, 1).__module__, fromlist=["TopicData"])

    def vote(cluster_id, topic, correlation_id):
        part = m.PartitionData(partition_index=0, replica_epoch=5, replica_id=7, last_offset_epoch=0, last_offset=0,
                               replica_directory_id=uuid.uuid4(), voter_directory_id=uuid.uuid4())
        return frame(52, 1, correlation_id, cluster_id=cluster_id, voter_id=0,
                     topics=(m.TopicData(topic_name=topic, partitions=(part,)),))

    async with combined(tmp_path) as broker:
        reader, writer = await open_to(broker, "CONTROLLER")
        answer = await roundtrip(reader, writer, vote("another-cluster", "__cluster_metadata", 1), 52, 1)
        assert answer.error_code == ErrorCode.inconsistent_cluster_id
        answer = await roundtrip(reader, writer, vote(None, "orders", 2), 52, 1)
        assert answer.error_code == ErrorCode.invalid_request
        answer = await roundtrip(reader, writer, vote(None, "__cluster_metadata", 3), 52, 1)
        assert answer.error_code == ErrorCode.unknown_server_error
        assert broker.node.quorum.epoch == 1  # no election, nothing written


async def test_broker_apis_stay_closed_under_each_release(tmp_path):
    for version in RELEASES:
        keys = {k for k, _, _ in controller.advertised(version)}
        assert 0 not in keys and 3 not in keys and 60 in keys and 18 in keys


@pytest.mark.parametrize("extra, message", [
    ({**COMBINED, "controller.listener.names": "CTRL"}, "must contain at least one value appearing in the 'listeners'"),
    ({**COMBINED, "controller.listener.names": "CONTROLLER,CTRL"}, "must only contain values appearing"),
    ({"process.roles": "broker,controller", "controller.listener.names": "CONTROLLER"},
     "either controller.quorum.bootstrap.servers must contain"),
    ({**COMBINED, "controller.quorum.voters": "3@127.0.0.1:9093"},
     "the node id 0 must be included in the set of voters"),
    ({**COMBINED, "process.roles": "broker", "controller.quorum.voters": "3@127.0.0.1:9093"},
     "must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker"),
    ({**COMBINED, "process.roles": "controller"}, "kafka-shim always plays a broker"),
])
def test_start_up_refusals(tmp_path, extra, message):
    with pytest.raises(ValueError, match=message):
        Broker(data_dir=tmp_path / "d", listeners="PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0", extra=extra,
               listener_security_protocol_map="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,CTRL:PLAINTEXT")


def test_all_listeners_controllers_leaves_no_broker_listener(tmp_path):
    with pytest.raises(ValueError, match="There must be at least one broker advertised listener"):
        Broker(data_dir=tmp_path / "d", listeners="CONTROLLER://127.0.0.1:0", extra=dict(COMBINED))


async def test_only_the_voter_of_a_simulated_cluster_binds_the_controller_listener(tmp_path):
    async with combined(tmp_path, brokers=2) as broker:
        node = broker.node
        assert set(node.node_endpoints[1]) == {"PLAINTEXT"}  # node 1 is a broker only
        reader, writer = await open_to(broker, "PLAINTEXT")
        answer = await roundtrip(reader, writer, metadata(), 3, 12)
        assert sorted((b.node_id, b.port) for b in answer.brokers) == [
            (0, node.bound_ports["PLAINTEXT"]), (1, node.node_endpoints[1]["PLAINTEXT"][1])]
        reader, writer = await open_to(broker, "CONTROLLER")
        answer = await roundtrip(reader, writer, describe_cluster(2), 60, 1)
        assert [(b.broker_id, b.port) for b in answer.brokers] == [(0, node.bound_ports["CONTROLLER"])]
        assert answer.controller_id == 0


def alter_logger(resource_type_incremental: bool = True, correlation_id: int = 1) -> bytes:
    from shim.protocol.messages import request_class

    key = 44 if resource_type_incremental else 33
    m = __import__(request_class(key, 1).__module__, fromlist=["AlterConfigsResource"])
    if resource_type_incremental:
        config = m.AlterableConfig(name="root", config_operation=0, value="DEBUG")
    else:
        config = m.AlterableConfig(name="root", value="DEBUG")
    resource = m.AlterConfigsResource(resource_type=8, resource_name="0", configs=(config,))
    return frame(key, 1, correlation_id, resources=(resource,), validate_only=True)


async def test_a_logger_through_the_controller_takes_cluster_action(tmp_path):
    from shim.security.acls import acl

    async with combined(tmp_path, authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                        super_users="User:admin") as broker:
        broker.add_acls(acl("User:ANONYMOUS", "ALTER_CONFIGS", cluster=True),
                        acl("User:ANONYMOUS", "ALTER", cluster=True))  # ALTER: the controller's DescribeCluster
        codes = {}
        for listener in ("PLAINTEXT", "CONTROLLER"):
            reader, writer = await open_to(broker, listener)
            codes[listener] = (await roundtrip(reader, writer, alter_logger(), 44, 1)).responses[0].error_code
        assert codes == {"PLAINTEXT": ErrorCode.none, "CONTROLLER": ErrorCode.cluster_authorization_failed}
        broker.add_acls(acl("User:ANONYMOUS", "CLUSTER_ACTION", cluster=True))
        reader, writer = await open_to(broker, "CONTROLLER")
        assert (await roundtrip(reader, writer, alter_logger(), 44, 1)).responses[0].error_code == ErrorCode.none
        answer = (await roundtrip(reader, writer, alter_logger(False, 2), 33, 1)).responses[0]  # legacy AlterConfigs
        assert (answer.error_code, answer.error_message) == (ErrorCode.invalid_request,
                                                           "Unexpected resource type BROKER_LOGGER.")


def controlled_shutdown_v1(correlation_id: int) -> bytes:
    """ControlledShutdown v1 (kio has no schema of it): header v1, then BrokerId."""
    import struct

    client = b"wire-test"
    payload = struct.pack(">hhih", 7, 1, correlation_id, len(client)) + client + struct.pack(">i", 0)
    return struct.pack(">i", len(payload)) + payload


@pytest.mark.parametrize("release, answered", [("3.9", True), ("4.0", False)])
async def test_controlled_shutdown_is_unhandled_on_a_3x_controller(tmp_path, release, answered):
    import struct

    async with combined(tmp_path, kafka_version=release) as broker:
        reader, writer = await open_to(broker, "CONTROLLER")
        body = await roundtrip(reader, writer, controlled_shutdown_v1(9), None)
        if not answered:  # 4.0 removed the API (ZooKeeper's): not enabled, the connection closes
            assert body is None
            return
        # advertised but not handled by ControllerApis: UNKNOWN_SERVER_ERROR, no remaining partitions
        assert struct.unpack(">ihi", body) == (9, ErrorCode.unknown_server_error.value, 0)


async def test_a_broker_only_node_may_advertise_its_controllers(tmp_path):
    # Kafka's effectiveAdvertisedBrokerListeners leaves a controller listener it does not bind out
    extra = {"process.roles": "broker", "controller.listener.names": "CONTROLLER",
             "controller.quorum.bootstrap.servers": "127.0.0.1:9093"}
    async with Broker(data_dir=tmp_path / "d", listeners="PLAINTEXT://127.0.0.1:0", extra=extra,
                      advertised_listeners="PLAINTEXT://broker.example:9092,CONTROLLER://ctrl.example:9093") as broker:
        assert set(broker.node.bound_ports) == {"PLAINTEXT"} and not broker.node.controller_listeners
        reader, writer = await open_to(broker, "PLAINTEXT")
        answer = await roundtrip(reader, writer, metadata(), 3, 12)
        assert [(b.host, b.port) for b in answer.brokers] == [("broker.example", 9092)]
