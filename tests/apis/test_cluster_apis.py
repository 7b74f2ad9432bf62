"""The cluster-level APIs a single combined KRaft node answers: delegation tokens (38-41),
DescribeQuorum (55), UpdateFeatures (57), UnregisterBroker (64), ListConfigResources (74),
AddRaftVoter/RemoveRaftVoter (80/81), through dispatch as a client's bytes (the telemetry APIs:
test_telemetry_apis.py)."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import itertools
import uuid

import pytest

from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from kio.serial import entity_reader
from kio.static.primitive import i64

from shim.protocol.messages import RequestHeader, encode_request, make, request_module, response_class
from shim.security.session import ConnectionSession

from apis_support import call

TIMEOUT = datetime.timedelta(seconds=5)
LISTENERS = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"
_corr = itertools.count(1000)


async def call_as(node, session, api_key, version, build):
    m = request_module(api_key, version)
    corr = next(_corr)
    raw = await dispatch(node, encode_request(RequestHeader(api_key, version, corr, "t"), build(m)), "/127.0.0.1",
                         session)
    cls = _int_timestamps(response_class(api_key, version))
    header, used = entity_reader(cls.__header_schema__)(raw, 0)
    return entity_reader(cls)(raw, used)[0]


@functools.cache
def _int_timestamps(cls):
    """``cls`` with its timestamps read as plain int64: kio refuses the -1 Kafka sends in them."""
    spec = []
    for f in dataclasses.fields(cls):
        meta = dict(f.metadata)
        if meta.get("kafka_type") == "datetime_i64":
            meta["kafka_type"] = "int64"
        spec.append((f.name, i64 if meta.get("kafka_type") == "int64" else f.type, dataclasses.field(metadata=meta)))
    namespace = {k: getattr(cls, k) for k in ("__type__", "__flexible__", "__api_key__", "__header_schema__",
                                              "__version__")}
    return dataclasses.make_dataclass(cls.__name__, spec, namespace=namespace, frozen=True, slots=True, kw_only=True)


@pytest.fixture
def open_node(tmp_path):
    nodes = []

    def make(**fields) -> Node:
        nodes.append(Node(BrokerConfig(data_dir=tmp_path / "data", **fields)))
        return nodes[-1]

    yield make
    for n in nodes:
        n.close()


# -- delegation tokens (38-41) ----------------------------------------------------------------

def create_token(m, renewers=(), owner=None):
    return make(m.CreateDelegationTokenRequest,
                owner_principal_type="User" if owner else None, owner_principal_name=owner,
                renewers=tuple(m.CreatableRenewers(principal_type=t, principal_name=n) for t, n in renewers),
                max_lifetime=-1)


@pytest.mark.parametrize("version", range(4))
async def test_create_token_over_plaintext_is_not_allowed(open_node, version):
    node = open_node(listeners=LISTENERS)
    r = await call_as(node, ConnectionSession("PLAINTEXT"), 38, version, create_token)
    assert r.error_code == E.delegation_token_request_not_allowed
    assert (r.principal_type, r.principal_name) == ("User", "ANONYMOUS")
    assert r.issue_timestamp == r.expiry_timestamp == r.max_timestamp == -1
    assert r.token_id == "" and r.hmac == b""


async def test_create_token_by_an_authenticated_user_finds_tokens_disabled(open_node):
    node = open_node(listeners=LISTENERS)
    alice = ConnectionSession("SASL_PLAINTEXT", "User:alice")
    r = await call_as(node, alice, 38, 3, lambda m: create_token(m, owner="bob"))
    assert r.error_code == E.delegation_token_auth_disabled
    assert (r.principal_name, r.token_requester_principal_name) == ("bob", "alice")
    assert r.issue_timestamp == r.max_timestamp == 0  # the controller's defaults, not -1
    bad_renewer = await call_as(node, alice, 38, 3, lambda m: create_token(m, renewers=[("Group", "g")]))
    assert bad_renewer.error_code == E.invalid_principal_type


async def test_token_periods_take_any_int64(open_node):
    """kio reads these as timedelta, which overflows long before Long.MAX_VALUE; Kafka takes it."""
    node = open_node(listeners=LISTENERS)
    alice = ConnectionSession("SASL_PLAINTEXT", "User:alice")
    for version in range(4):
        r = await call_as(node, alice, 38, version, lambda m: make(m.CreateDelegationTokenRequest, renewers=(),
                                                                   owner_principal_type=None, owner_principal_name=None,
                                                                   max_lifetime=2**63 - 1))
        assert r.error_code == E.delegation_token_auth_disabled
    r = await call_as(node, alice, 39, 2, lambda m: make(m.RenewDelegationTokenRequest, hmac=b"h",
                                                         renew_period=-(2**63)))
    assert r.error_code == E.delegation_token_auth_disabled


async def test_ssl_needs_a_client_certificate_for_tokens(open_node):
    node = open_node(listeners=LISTENERS)
    anonymous = await call_as(node, ConnectionSession("SSL"), 41, 3, lambda m: m.DescribeDelegationTokenRequest(
        owners=None))
    named = await call_as(node, ConnectionSession("SSL", "User:CN=client"), 41, 3,
                          lambda m: m.DescribeDelegationTokenRequest(owners=None))
    assert anonymous.error_code == E.delegation_token_request_not_allowed
    assert named.error_code == E.delegation_token_auth_disabled and named.tokens == ()


@pytest.mark.parametrize("api_key", [39, 40])
@pytest.mark.parametrize("version", range(3))
async def test_renew_and_expire(open_node, api_key, version):
    node = open_node(listeners=LISTENERS)

    def build(m):
        name = "RenewDelegationTokenRequest" if api_key == 39 else "ExpireDelegationTokenRequest"
        period = "renew_period" if api_key == 39 else "expiry_time_period"
        return make(getattr(m, name), hmac=b"\x01\x02", **{period: -1})
    refused = await call_as(node, ConnectionSession("PLAINTEXT"), api_key, version, build)
    disabled = await call_as(node, ConnectionSession("SASL_PLAINTEXT", "User:alice"), api_key, version, build)
    assert (refused.error_code, refused.expiry_timestamp) == (E.delegation_token_request_not_allowed, -1)
    assert (disabled.error_code, disabled.expiry_timestamp) == (E.delegation_token_auth_disabled, 0)


# -- DescribeQuorum (55) ----------------------------------------------------------------------

def describe_quorum(m, topic="__cluster_metadata", partitions=(0,)):
    return m.DescribeQuorumRequest(topics=(m.TopicData(topic_name=topic, partitions=tuple(
        m.PartitionData(partition_index=p) for p in partitions)),))


@pytest.mark.parametrize("version", range(3))
async def test_describe_quorum_is_this_node_alone(node, version):
    r = await call(node, 55, version, describe_quorum)
    assert r.error_code == E.none
    [topic] = r.topics
    [p] = topic.partitions
    assert (topic.topic_name, p.partition_index, p.error_code) == ("__cluster_metadata", 0, E.none)
    assert p.leader_id == node.config.node_id and p.leader_epoch >= 1 and p.observers == ()
    [voter] = p.current_voters
    assert voter.replica_id == node.config.node_id and voter.log_end_offset == p.high_watermark > 0
    if version >= 1:
        assert voter.last_caught_up_timestamp > 0 and voter.last_fetch_timestamp > 0
    if version >= 2:
        assert voter.replica_directory_id == node.quorum.directory_id
        [n] = r.nodes
        assert n.node_id == node.config.node_id and [(l.host, l.port) for l in n.listeners] == [(node.host, node.port)]


async def test_describe_quorum_of_another_partition(node):
    r = await call(node, 55, 2, lambda m: describe_quorum(m, "t", (0, 1)))
    assert [(p.partition_index, p.error_code) for p in r.topics[0].partitions] == [
        (0, E.unknown_topic_or_partition), (1, E.unknown_topic_or_partition)]
    assert r.error_code == E.none and r.nodes == ()


async def test_the_directory_id_survives_a_restart(open_node):
    first = open_node()
    directory_id = first.quorum.directory_id
    first.close()
    assert open_node().quorum.directory_id == directory_id


# -- UpdateFeatures (57) ----------------------------------------------------------------------

def update(*updates, validate_only=False):
    def build(m):
        keys = tuple(m.FeatureUpdateKey(feature=f, max_version_level=level, **(
            {"upgrade_type": kind} if hasattr(m.FeatureUpdateKey, "upgrade_type") else {"allow_downgrade": kind > 1}))
            for f, level, kind in updates)
        extra = {"validate_only": validate_only} if hasattr(m.UpdateFeaturesRequest, "validate_only") else {}
        return m.UpdateFeaturesRequest(timeout=TIMEOUT, feature_updates=keys, **extra)
    return build


async def finalized(node):
    m = request_module(18, 4)
    r = await call(node, 18, 4, lambda m: m.ApiVersionsRequest(client_software_name="t", client_software_version="1"))
    return {f.name: f.max_version_level for f in r.finalized_features}, r.finalized_features_epoch


async def test_update_features_3_9_answers_each_feature(open_node):
    node = open_node()
    r = await call(node, 57, 1, update(("metadata.version", 20, 2), ("transaction.version", 1, 1),
                                       ("no.such.feature", 1, 1), ("kraft.version", 0, 1)))
    got = {x.feature: (x.error_code, x.error_message) for x in r.results}
    assert r.error_code == E.none and list(got) == sorted(got)
    assert got["metadata.version"] == (E.none, None)  # 3.9-IV0 changed no metadata: a safe downgrade
    assert got["transaction.version"] == (E.invalid_update_version, "Invalid update version 1 for feature "
                                          "transaction.version. Local controller 0 does not support this feature.")
    assert got["no.such.feature"][0] == E.invalid_update_version
    assert got["kraft.version"] == (E.invalid_update_version, "Invalid update version 0 for feature kraft.version. "
                                    "Can't downgrade the version of this feature without setting the upgrade type "
                                    "to either safe or unsafe downgrade.")
    before_epoch = node.quorum.epoch
    assert (await finalized(node))[0]["metadata.version"] == 20  # the valid one applied
    node.close()
    again = open_node()
    assert (await finalized(again)) == ({"metadata.version": 20, "kraft.version": 1}, before_epoch)


async def test_update_features_metadata_version_rules(node):
    r = await call(node, 57, 1, update(("metadata.version", 19, 2)))  # 3.9-IV0 and 3.8-IV0 changed no metadata
    assert r.results[0].error_code == E.none
    r = await call(node, 57, 1, update(("metadata.version", 14, 2)))  # 3.7-IV2 changed the metadata
    assert (r.results[0].error_code, r.results[0].error_message) == (
        E.invalid_update_version, "Invalid metadata.version 14. Refusing to perform the requested downgrade because "
                                  "it might delete metadata information.")
    r = await call(node, 57, 1, update(("metadata.version", 3, 2)))
    assert r.results[0].error_message == "Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0"
    r = await call(node, 57, 1, update(("metadata.version", 22, 1)))
    assert r.results[0].error_message.endswith("Local controller 0 only supports versions 1-21")
    r = await call(node, 57, 1, update(("metadata.version", 21, 2)))
    assert r.results[0].error_message.endswith("Can't downgrade to a newer version.")


async def test_update_features_validate_only_and_v0(node):
    epoch = node.quorum.epoch
    r = await call(node, 57, 1, update(("metadata.version", 20, 2), validate_only=True))
    assert r.results[0].error_code == E.none and node.quorum.level("metadata.version") == 21
    # v0's AllowDowngrade is not read by a KRaft controller: an upgrade only.
    r = await call(node, 57, 0, update(("metadata.version", 20, 2)))
    assert r.results[0].error_code == E.invalid_update_version
    assert node.quorum.epoch == epoch


async def test_update_features_4_0_is_all_or_nothing_and_switches_transaction_version(open_node):
    node = open_node(kafka_version="4.0")
    r = await call(node, 57, 2, update(("transaction.version", 1, 2), ("group.version", 5, 1)))
    assert r.error_code == E.invalid_update_version and "group.version" in r.error_message
    assert node.quorum.level("transaction.version") == 2 and node.txn.transaction_version == 2
    r1 = await call(node, 57, 1, update(("transaction.version", 1, 2), ("group.version", 5, 1)))
    assert {x.feature: x.error_code for x in r1.results} == {"transaction.version": E.invalid_update_version,
                                                              "group.version": E.invalid_update_version}
    r = await call(node, 57, 2, update(("transaction.version", 1, 2)))
    assert r.error_code == E.none
    assert (await finalized(node))[0]["transaction.version"] == 1
    assert node.txn.transaction_version == 1 and node.txn.log_value_version == 1


# -- UnregisterBroker (64), ListConfigResources (74) -----------------------------------------

async def test_unregister_broker(node):
    ok = await call(node, 64, 0, lambda m: m.UnregisterBrokerRequest(broker_id=node.config.node_id))
    other = await call(node, 64, 0, lambda m: m.UnregisterBrokerRequest(broker_id=7))
    assert (ok.error_code, other.error_code, other.error_message) == (E.none, E.broker_id_not_registered, None)


async def test_list_config_resources(open_node):
    node = open_node(kafka_version="4.1")
    node.logs.create_topic("b", 1)
    node.logs.create_topic("a", 1)
    v0 = await call(node, 74, 0, lambda m: m.ListConfigResourcesRequest())
    assert v0.error_code == E.none and v0.config_resources == ()  # no CLIENT_METRICS resources
    every = await call(node, 74, 1, lambda m: m.ListConfigResourcesRequest(resource_types=()))
    assert [(c.resource_name, c.resource_type) for c in every.config_resources] == [
        ("0", 8), ("0", 4), ("a", 2), ("b", 2)]
    topics = await call(node, 74, 1, lambda m: m.ListConfigResourcesRequest(resource_types=(2,)))
    assert [c.resource_name for c in topics.config_resources] == ["a", "b"]
    unknown = await call(node, 74, 1, lambda m: m.ListConfigResourcesRequest(resource_types=(2, 3)))
    assert unknown.error_code == E.unsupported_version and unknown.config_resources == ()


# -- AddRaftVoter (80), RemoveRaftVoter (81) --------------------------------------------------

def add_voter(voter_id, directory_id, cluster_id=None, listener="PLAINTEXT"):
    def build(m):
        return m.AddRaftVoterRequest(cluster_id=cluster_id, timeout=TIMEOUT, voter_id=voter_id,
                                     voter_directory_id=directory_id,
                                     listeners=(m.Listener(name=listener, host="localhost", port=9093),))
    return build


async def test_add_raft_voter(node):
    me, other = node.config.node_id, uuid.uuid4()
    dup = await call(node, 80, 0, add_voter(me, other))
    assert dup.error_code == E.duplicate_voter and f"ReplicaKey(id={me}, " in dup.error_message
    late = await call(node, 80, 0, add_voter(5, other))
    assert late.error_code == E.request_timed_out
    assert (await call(node, 80, 0, add_voter(5, None))).error_code == E.invalid_request
    assert (await call(node, 80, 0, add_voter(5, other, listener="CONTROLLER"))).error_code == E.invalid_request
    wrong = await call(node, 80, 0, add_voter(5, other, cluster_id="other"))
    assert wrong.error_code == E.inconsistent_cluster_id


async def test_remove_raft_voter_cannot_remove_the_only_voter(node):
    def remove(voter_id, directory_id):
        return lambda m: m.RemoveRaftVoterRequest(cluster_id=None, voter_id=voter_id, voter_directory_id=directory_id)
    me = await call(node, 81, 0, remove(node.config.node_id, node.quorum.directory_id))
    assert me.error_code == E.voter_not_found and me.error_message.startswith("Cannot remove voter ReplicaKey(id=0")
    assert (await call(node, 81, 0, remove(0, None))).error_code == E.invalid_request


# -- with an authorizer -----------------------------------------------------------------------

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


async def test_cluster_apis_need_their_cluster_operation(open_node):
    from shim.security.acls import AclBinding, AclOperation as O, AclPermissionType as A, PatternType as P
    from shim.security.acls import CLUSTER_NAME, ResourceType as R

    node = open_node(authorizer_class_name=STANDARD, listeners=LISTENERS)
    alice = ConnectionSession("SASL_PLAINTEXT", "User:alice")
    quorum = await call_as(node, alice, 55, 2, describe_quorum)
    features = await call_as(node, alice, 57, 1, update(("metadata.version", 21, 1)))
    unregister = await call_as(node, alice, 64, 0, lambda m: m.UnregisterBrokerRequest(broker_id=0))
    assert (quorum.error_code, quorum.topics) == (E.cluster_authorization_failed, ())
    assert (features.error_code, features.results) == (E.cluster_authorization_failed, ())
    assert unregister.error_code == E.cluster_authorization_failed
    node.acls.change(add=[AclBinding(R.CLUSTER, CLUSTER_NAME, P.LITERAL, "User:alice", "*", O.DESCRIBE, A.ALLOW)])
    assert (await call_as(node, alice, 55, 2, describe_quorum)).error_code == E.none
    # a token for someone else needs CREATE_TOKENS on that user
    other = await call_as(node, alice, 38, 3, lambda m: create_token(m, owner="bob"))
    assert other.error_code == E.delegation_token_authorization_failed
    own = await call_as(node, alice, 38, 3, create_token)
    assert own.error_code == E.delegation_token_auth_disabled
