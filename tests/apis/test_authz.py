"""Enforcement with an authorizer, through the dispatch seam: what each API needs (apis/_authz.py)
and the errors Kafka answers when it is missing."""

from __future__ import annotations

import datetime

import pytest

from shim.apis import REGISTRY, _authz
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode as E
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.security.acls import AclBinding
from shim.security.acls import AclOperation as O
from shim.security.acls import AclPermissionType as A
from shim.security.acls import PatternType as P
from shim.security.acls import ResourceType as R
from shim.security.authorizer import bitfield
from shim.security.session import ConnectionSession

from node_support import NodeFactory

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ALICE = ConnectionSession("PLAINTEXT", "User:alice")


@pytest.fixture
def node(tmp_path):
    factory = NodeFactory(tmp_path)
    n = factory(authorizer_class_name=STANDARD, super_users="User:admin")
    n.logs.create_topic("mine", 1)
    n.logs.create_topic("theirs", 1)
    yield n
    factory.crash_all()


def allow(node, rtype, name, op, permission=A.ALLOW, pattern=P.LITERAL, principal="User:alice"):
    node.acls.change(add=[AclBinding(rtype, name, pattern, principal, "*", op, permission)])


async def call(node, key, version, build, session=ALICE):
    m = request_module(key, version)
    raw = await dispatch(node, encode_request(RequestHeader(key, version, 3, "tests"), build(m)), "/127.0.0.1", session)
    return decode_response(raw, key, version)[1]


def test_every_request_level_check_has_an_error_response():
    import sys
    for key in _authz.REQUEST:
        assert hasattr(sys.modules[REGISTRY[key].handler.__module__], "error_response"), REGISTRY[key].name


async def metadata(node, topics=None, auto_create=False, version=12):
    return await call(node, 3, version, lambda m: m.MetadataRequest(
        topics=None if topics is None else tuple(m.MetadataRequestTopic(name=t, topic_id=None) for t in topics),
        allow_auto_topic_creation=auto_create, include_topic_authorized_operations=True))


async def test_metadata_hides_undescribable_topics_and_refuses_named_ones(node):
    allow(node, R.TOPIC, "mine", O.READ)
    r = await metadata(node)
    assert [(t.name, t.error_code) for t in r.topics] == [("mine", E.none)]
    assert r.topics[0].topic_authorized_operations == bitfield([O.READ, O.DESCRIBE])
    r = await metadata(node, ["mine", "theirs", "nowhere"])
    assert [(t.name, t.error_code) for t in r.topics] == [
        ("mine", E.none), ("theirs", E.topic_authorization_failed), ("nowhere", E.topic_authorization_failed)]


async def test_metadata_by_topic_id_refuses_without_naming_the_topic(node):
    topic_id = node.logs.topics["theirs"].topic_id
    r = await call(node, 3, 12, lambda m: m.MetadataRequest(
        topics=(m.MetadataRequestTopic(name=None, topic_id=topic_id),), allow_auto_topic_creation=False,
        include_topic_authorized_operations=False))
    assert [(t.error_code, t.name, t.topic_id) for t in r.topics] == [(E.topic_authorization_failed, None, topic_id)]


async def test_auto_creation_needs_create_on_the_cluster_or_the_topic(node):
    allow(node, R.TOPIC, "new-", O.DESCRIBE, pattern=P.PREFIXED)
    r = await metadata(node, ["new-a"], auto_create=True)
    assert r.topics[0].error_code == E.topic_authorization_failed and "new-a" not in node.logs.topics
    allow(node, R.TOPIC, "new-a", O.CREATE)
    assert (await metadata(node, ["new-a"], auto_create=True)).topics[0].error_code == E.none
    allow(node, R.CLUSTER, "kafka-cluster", O.CREATE)
    assert (await metadata(node, ["new-b"], auto_create=True)).topics[0].error_code == E.none
    assert {"new-a", "new-b"} <= set(node.logs.topics)


async def init_producer_id(node, txn_id=None):
    r = await call(node, 22, 4, lambda m: m.InitProducerIdRequest(
        transactional_id=txn_id, transaction_timeout=datetime.timedelta(seconds=60), producer_id=-1, producer_epoch=-1))
    return r.error_code


async def test_idempotent_producer_needs_idempotent_write_or_write_on_some_topic(node):
    assert await init_producer_id(node) == E.cluster_authorization_failed
    allow(node, R.TOPIC, "mine", O.WRITE)
    assert await init_producer_id(node) == E.none


async def test_transactional_ids_need_write(node):
    assert await init_producer_id(node, "tx") == E.transactional_id_authorization_failed
    allow(node, R.TRANSACTIONAL_ID, "tx", O.WRITE)
    assert await init_producer_id(node, "tx") == E.none
    allow(node, R.TRANSACTIONAL_ID, "tx", O.WRITE, A.DENY)
    assert await init_producer_id(node, "tx") == E.transactional_id_authorization_failed


async def test_find_coordinator_needs_describe(node):
    async def find(key_type, key):
        r = await call(node, 10, 4, lambda m: m.FindCoordinatorRequest(key_type=key_type, coordinator_keys=(key,)))
        return r.coordinators[0].error_code
    assert await find(0, "g") == E.group_authorization_failed
    assert await find(1, "tx") == E.transactional_id_authorization_failed
    assert not {"__consumer_offsets", "__transaction_state"} & set(node.logs.topics)  # refused before creating
    allow(node, R.GROUP, "g", O.READ)  # READ implies DESCRIBE
    allow(node, R.TRANSACTIONAL_ID, "tx", O.WRITE)
    assert (await find(0, "g"), await find(1, "tx")) == (E.coordinator_not_available,) * 2  # creating the topics
    assert (await find(0, "g"), await find(1, "tx")) == (E.none, E.none)


async def test_join_group_needs_read_on_the_group(node):
    def join(m):
        return m.JoinGroupRequest(group_id="g", session_timeout=datetime.timedelta(seconds=10),
                                  rebalance_timeout=datetime.timedelta(seconds=10), member_id="",
                                  group_instance_id=None, protocol_type="consumer", reason=None,
                                  protocols=(m.JoinGroupRequestProtocol(name="range", metadata=b""),))
    r = await call(node, 11, 9, join)
    assert (r.error_code, r.generation_id, r.member_id) == (E.group_authorization_failed, -1, "")
    allow(node, R.GROUP, "g", O.READ)
    assert (await call(node, 11, 9, join)).error_code == E.member_id_required


async def test_produce_needs_write_on_each_topic(node):
    r = await call(node, 0, 9, lambda m: m.ProduceRequest(transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=1), topic_data=(
        m.TopicProduceData(name="theirs", partition_data=(m.PartitionProduceData(index=0, records=None),)),)))
    assert r.responses[0].partition_responses[0].error_code == E.topic_authorization_failed


async def test_transactional_produce_needs_write_on_its_transactional_id(node):
    from kafka_codecs import encode_batch
    allow(node, R.TOPIC, "mine", O.WRITE)
    txn_batch = encode_batch([(None, b"v", [], 1_700_000_000_000)], producer_id=7, producer_epoch=0, base_sequence=0,
                             is_transactional=True)

    async def produce(txn_id, records):
        r = await call(node, 0, 9, lambda m: m.ProduceRequest(
            transactional_id=txn_id, acks=-1, timeout=datetime.timedelta(seconds=1), topic_data=(m.TopicProduceData(
                name="mine", partition_data=(m.PartitionProduceData(index=0, records=records),)),)))
        return r.responses[0].partition_responses[0].error_code
    assert await produce("tx", txn_batch) == E.transactional_id_authorization_failed
    assert await produce(None, txn_batch) == E.transactional_id_authorization_failed
    # a transactional id on a request without transactional records is not checked (Kafka's rule)
    assert await produce("tx", None) != E.transactional_id_authorization_failed


@pytest.mark.parametrize("version", [12, 15])
async def test_a_follower_fetch_needs_cluster_action(node, version):
    allow(node, R.TOPIC, "mine", O.READ)

    def fetch(replica_id):
        def build(m):
            from shim.protocol.messages import make
            ids = {"replica_id": replica_id} if version < 15 else {"replica_state": make(
                m.ReplicaState, replica_id=replica_id, replica_epoch=-1)}
            part = make(m.FetchPartition, partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                        log_start_offset=-1, partition_max_bytes=1024)
            topic = make(m.FetchTopic, topic="mine", topic_id=node.logs.topics["mine"].topic_id, partitions=(part,))
            return make(m.FetchRequest, **ids, max_wait=0, min_bytes=0, max_bytes=1024, isolation_level=0,
                        session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=(), topics=(topic,))
        return build

    async def code(replica_id):
        r = await call(node, 1, version, fetch(replica_id))
        return r.responses[0].partitions[0].error_code
    assert await code(-1) == E.none  # a consumer with READ
    assert await code(1) == E.topic_authorization_failed  # a follower without CLUSTER_ACTION
    allow(node, R.CLUSTER, "kafka-cluster", O.CLUSTER_ACTION)
    assert await code(1) == E.none


async def test_admin_apis_need_their_cluster_operation(node):
    r = await call(node, 50, 0, lambda m: m.DescribeUserScramCredentialsRequest(users=None))
    assert r.error_code == E.cluster_authorization_failed
    allow(node, R.CLUSTER, "kafka-cluster", O.ALTER)  # ALTER implies DESCRIBE
    assert (await call(node, 50, 0, lambda m: m.DescribeUserScramCredentialsRequest(users=None))).error_code == E.none


async def test_describe_cluster_operations_come_from_the_authorizer(node):
    async def ops(session=ALICE):
        r = await call(node, 60, 0, lambda m: m.DescribeClusterRequest(include_cluster_authorized_operations=True),
                       session)
        return r.cluster_authorized_operations
    assert await ops() == 0
    allow(node, R.CLUSTER, "kafka-cluster", O.DESCRIBE)
    assert await ops() == bitfield([O.DESCRIBE])
    assert await ops(ConnectionSession("PLAINTEXT", "User:admin")) == bitfield(
        [O.CREATE, O.CLUSTER_ACTION, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS, O.IDEMPOTENT_WRITE, O.ALTER, O.DESCRIBE])


async def test_create_topics_needs_create_and_shows_configs_with_describe_configs(node):
    def create(m):
        return m.CreateTopicsRequest(timeout=datetime.timedelta(seconds=5), validate_only=False, topics=(
            m.CreatableTopic(name="made", num_partitions=1, replication_factor=1, assignments=(), configs=()),))
    r = await call(node, 19, 7, create)
    assert (r.topics[0].error_code, r.topics[0].error_message) == (E.topic_authorization_failed, "Authorization failed.")
    allow(node, R.TOPIC, "made", O.CREATE)
    r = await call(node, 19, 7, create)
    assert (r.topics[0].error_code, r.topics[0].topic_config_error_code) == (E.none, E.topic_authorization_failed)
    assert r.topics[0].configs == ()


async def test_delete_topics_needs_delete(node):
    def delete(m):
        return m.DeleteTopicsRequest(topics=(m.DeleteTopicState(name="theirs", topic_id=None),),
                                     timeout=datetime.timedelta(seconds=5))
    assert (await call(node, 20, 6, delete)).responses[0].error_code == E.topic_authorization_failed
    allow(node, R.TOPIC, "theirs", O.DELETE)
    assert (await call(node, 20, 6, delete)).responses[0].error_code == E.none
    assert "theirs" not in node.logs.topics


async def test_configs_need_describe_configs_and_alter_configs(node):
    def describe(m):
        return m.DescribeConfigsRequest(include_synonyms=False, include_documentation=False, resources=(
            m.DescribeConfigsResource(resource_type=2, resource_name="mine", configuration_keys=None),
            m.DescribeConfigsResource(resource_type=4, resource_name="", configuration_keys=None),
            # CLIENT_METRICS: DESCRIBE_CONFIGS on the cluster, as Kafka's ConfigHelper authorizes it
            m.DescribeConfigsResource(resource_type=16, resource_name="sub", configuration_keys=None)))
    r = await call(node, 32, 4, describe)
    assert [x.error_code for x in r.results] == [E.topic_authorization_failed] + [E.cluster_authorization_failed] * 2
    allow(node, R.TOPIC, "mine", O.ALTER_CONFIGS)  # implies DESCRIBE_CONFIGS
    assert [x.error_code for x in (await call(node, 32, 4, describe)).results] == [
        E.none, E.cluster_authorization_failed, E.cluster_authorization_failed]
    allow(node, R.CLUSTER, "kafka-cluster", O.DESCRIBE_CONFIGS)
    assert [x.error_code for x in (await call(node, 32, 4, describe)).results] == [E.none] * 3

    def alter(m):
        return m.IncrementalAlterConfigsRequest(validate_only=True, resources=(m.AlterConfigsResource(
            resource_type=2, resource_name="theirs", configs=(m.AlterableConfig(
                name="retention.ms", config_operation=0, value="1000"),)),))
    assert (await call(node, 44, 1, alter)).responses[0].error_code == E.topic_authorization_failed


async def test_client_metrics_subscriptions_need_alter_configs_on_the_cluster(node):
    # Kafka: AuthHelper/ConfigAdminManager authorize CLIENT_METRICS as a cluster resource
    def alter(m):
        return m.IncrementalAlterConfigsRequest(validate_only=False, resources=(m.AlterConfigsResource(
            resource_type=16, resource_name="sub", configs=(m.AlterableConfig(
                name="interval.ms", config_operation=0, value="1000"),)),))
    refused = await call(node, 74, 0, lambda m: m.ListConfigResourcesRequest())
    assert (refused.error_code, refused.config_resources) == (E.cluster_authorization_failed, ())
    allow(node, R.CLUSTER, "kafka-cluster", O.DESCRIBE_CONFIGS)
    assert (await call(node, 44, 1, alter)).responses[0].error_code == E.cluster_authorization_failed
    assert node.client_metrics_configs.names() == []
    allow(node, R.CLUSTER, "kafka-cluster", O.ALTER_CONFIGS)
    assert (await call(node, 44, 1, alter)).responses[0].error_code == E.none
    assert node.client_metrics_configs.names() == ["sub"]
    listed = await call(node, 74, 0, lambda m: m.ListConfigResourcesRequest())
    assert [c.resource_name for c in listed.config_resources] == ["sub"]  # DESCRIBE_CONFIGS on the cluster


async def test_delete_groups_needs_delete_on_each_group(node):
    allow(node, R.GROUP, "mine", O.DELETE)
    r = await call(node, 42, 2, lambda m: m.DeleteGroupsRequest(groups_names=("mine", "theirs")))
    assert {x.group_id: x.error_code for x in r.results} == {
        "mine": E.group_id_not_found, "theirs": E.group_authorization_failed}


async def test_consumer_group_heartbeat_needs_read_on_the_group_and_describe_on_its_topics(tmp_path):
    factory = NodeFactory(tmp_path)
    node = factory(authorizer_class_name=STANDARD, super_users="User:admin", kafka_version="4.1")
    node.logs.create_topic("mine", 1)
    node.logs.create_topic("theirs", 1)

    def heartbeat(topics):
        return call(node, 68, 1, lambda m: m.ConsumerGroupHeartbeatRequest(
            group_id="g", member_id="m", member_epoch=0, rebalance_timeout=datetime.timedelta(seconds=30),
            subscribed_topic_names=topics, topic_partitions=()))
    def describe():
        return call(node, 69, 1, lambda m: m.ConsumerGroupDescribeRequest(group_ids=("g",),
                                                                         include_authorized_operations=True))
    try:
        assert (await heartbeat(("mine",))).error_code == E.group_authorization_failed
        assert (await describe()).groups[0].error_code == E.group_authorization_failed
        allow(node, R.GROUP, "g", O.READ)  # READ implies DESCRIBE
        assert (await heartbeat(("mine", "theirs"))).error_code == E.topic_authorization_failed
        allow(node, R.TOPIC, "mine", O.DESCRIBE)
        r = await heartbeat(("mine",))
        assert (r.error_code, r.member_epoch) == (E.none, 1)
        d = (await describe()).groups[0]
        assert (d.error_code, d.group_state, d.authorized_operations) == (E.none, "Stable",
                                                                          bitfield([O.READ, O.DESCRIBE]))
    finally:
        factory.crash_all()


async def test_a_refused_produce_answers_each_partition_once(node):
    # Kafka: ProduceRequest.getErrorResponse walks the request keyed by partition (partitionSizes)
    from kafka_codecs import encode_batch
    allow(node, R.TOPIC, "mine", O.WRITE)
    txn_batch = encode_batch([(None, b"v", [], 1_700_000_000_000)], producer_id=7, producer_epoch=0, base_sequence=0,
                             is_transactional=True)
    r = await call(node, 0, 9, lambda m: m.ProduceRequest(
        transactional_id="tx", acks=-1, timeout=datetime.timedelta(seconds=1), topic_data=tuple(m.TopicProduceData(
            name="mine", partition_data=(m.PartitionProduceData(index=0, records=txn_batch),
                                         m.PartitionProduceData(index=0, records=txn_batch))) for _ in range(2))))
    got = [(t.name, [(p.index, p.error_code) for p in t.partition_responses]) for t in r.responses]
    assert got == [("mine", [(0, E.transactional_id_authorization_failed)])]


async def test_describe_producers_needs_read_and_says_so(node):
    """Kafka's handleDescribeProducersRequest: a topic without READ is TOPIC_AUTHORIZATION_FAILED
    with ApiError's default message; an invalid name is refused before authorization."""
    allow(node, R.TOPIC, "mine", O.READ)
    r = await call(node, 61, 0, lambda m: m.DescribeProducersRequest(topics=(
        m.TopicRequest(name="mine", partition_indexes=(0,)), m.TopicRequest(name="theirs", partition_indexes=(0,)),
        m.TopicRequest(name="..", partition_indexes=(0,)))))
    got = [(p.error_code, p.error_message) for t in r.topics for p in t.partitions]
    assert got == [(E.none, None), (E.topic_authorization_failed, "Topic authorization failed."),
                   (E.invalid_topic_exception, "Topic name is invalid: '..' is not allowed")]
