"""Handlers that walked a 2 MiB request's entries in one turn of the event loop
(compat/fuzz/amplify.py: OffsetFetch v8 3.4 CPU s, DescribeShareGroupOffsets 3.4 s, DescribeQuorum
2.8 s, DescribeTopicPartitions 2.5 s, WriteTxnMarkers 2.9 s, AddPartitionsToTxn 1.6 s,
DeleteShareGroupState 2.5 s, ReadShareGroupStateSummary 1.6 s, ElectLeaders 1.2 s, DeleteGroups 0.6 s, LeaveGroup 0.9 s,
(Incremental)AlterConfigs 6.4 s; a request
may hold 100 MiB), and the whole-request error answers of OffsetFetch v8 (0.9 s), AddPartitionsToTxn
and ElectLeaders, now go through the Pacer
(shim/apis/_pace.py). Each case checks the loop's longest turn (tests/loop_stall.py, the loop
thread's CPU time) and that the answer is byte for byte the one given when the Pacer never yields
and when it yields after every entry. They bound only the loop thread's own CPU time, so they run on
the pytest-xdist workers (conftest.py, CPU_BOUND_ONLY).
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import uuid

import pytest

from shim.apis import _pace
from shim.apis.dispatch import dispatch
from shim.apis.registry import REGISTRY
from shim.config import BrokerConfig
from shim.control.mirror import error_codes
from shim.control.ops import call
from shim.coordinators.share.store import Change
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module
from shim.security.acls import AclBinding
from shim.security.acls import AclOperation as O
from shim.security.acls import AclPermissionType as A
from shim.security.acls import PatternType as P
from shim.security.acls import ResourceType as R

from loop_stall import stall_during


REQUEST_BYTES = 2 << 20


def _offset_fetch(n, node):
    m = request_module(9, 8)
    group = m.OffsetFetchRequestGroup(group_id="g", topics=(
        m.OffsetFetchRequestTopics(name="t", partition_indexes=(0,)),))
    return 9, 8, make(request_class(9, 8), groups=(group,) * n, require_stable=False)


def _share_offsets(n, node):
    m = request_module(90, 0)
    group = m.DescribeShareGroupOffsetsRequestGroup(group_id="s", topics=(
        m.DescribeShareGroupOffsetsRequestTopic(topic_name="t", partitions=(0,)),))
    return 90, 0, make(request_class(90, 0), groups=(group,) * n)


def _share_offsets_topics(n, node):
    m = request_module(90, 0)
    topics = tuple(m.DescribeShareGroupOffsetsRequestTopic(topic_name=f"u{i:07d}", partitions=(0,))
                   for i in range(n))
    return 90, 0, make(request_class(90, 0), groups=(m.DescribeShareGroupOffsetsRequestGroup(group_id="s",
                                                                                               topics=topics),))


def _quorum(n, node):
    m = request_module(55, 2)
    topic = m.TopicData(topic_name="__cluster_metadata", partitions=(m.PartitionData(partition_index=0),))
    return 55, 2, make(request_class(55, 2), topics=(topic,) * n)


def _quorum_partitions(n, node):
    m = request_module(55, 2)
    topic = m.TopicData(topic_name="__cluster_metadata", partitions=tuple(m.PartitionData(partition_index=i)
                                                                            for i in range(n)))
    return 55, 2, make(request_class(55, 2), topics=(topic,))


def _topic_partitions(n, node):
    m = request_module(75, 0)
    return 75, 0, make(request_class(75, 0), topics=tuple(m.TopicRequest(name=f"u{i:06d}") for i in range(n)),
                       response_partition_limit=2000, cursor=None)


def _topic_partitions_refused(n, node):
    m = request_module(75, 0)
    return 75, 0, make(request_class(75, 0), topics=(m.TopicRequest(name="u"),) * n, response_partition_limit=2000,
                       cursor=m.Cursor(topic_name="t", partition_index=0))


def _markers(n, node):
    m = request_module(27, 1)
    marker = m.WritableTxnMarker(producer_id=1000, producer_epoch=0, transaction_result=False, coordinator_epoch=0,
                                 topics=(m.WritableTxnMarkerTopic(name="t", partition_indexes=(0,)),))
    return 27, 1, make(request_class(27, 1), markers=(marker,) * n)


def _marker_partitions(n, node):
    m = request_module(27, 1)
    marker = m.WritableTxnMarker(producer_id=1000, producer_epoch=0, transaction_result=False, coordinator_epoch=0,
                                 topics=(m.WritableTxnMarkerTopic(name="u", partition_indexes=tuple(range(n))),))
    return 27, 1, make(request_class(27, 1), markers=(marker,))


def _add_partitions(n, node):
    m = request_module(24, 5)
    txn = m.AddPartitionsToTxnTransaction(transactional_id="x", producer_id=1000, producer_epoch=0, verify_only=False,
                                          topics=(m.AddPartitionsToTxnTopic(name="t", partitions=(0,)),))
    return 24, 5, make(request_class(24, 5), transactions=(txn,) * n)


def _add_partitions_v3(n, node):
    m = request_module(24, 3)
    return 24, 3, make(request_class(24, 3), v3_and_below_transactional_id="x", v3_and_below_producer_id=1000,
                       v3_and_below_producer_epoch=0,
                       v3_and_below_topics=(m.AddPartitionsToTxnTopic(name="t", partitions=tuple(range(n))),))


def _add_partitions_v3_topics(n, node):  # as many topic results to group as partitions
    m = request_module(24, 3)
    return 24, 3, make(request_class(24, 3), v3_and_below_transactional_id="x", v3_and_below_producer_id=1000,
                       v3_and_below_producer_epoch=0, v3_and_below_topics=tuple(
                           m.AddPartitionsToTxnTopic(name=f"u{i:07d}", partitions=(0,)) for i in range(n)))


def _delete_groups(n, node):
    return 42, 2, make(request_class(42, 2), groups_names=tuple(f"g{i:07d}" for i in range(n)))


def _leave_group(n, node):  # members unknown to a group that is not there: UNKNOWN_MEMBER_ID each
    m = request_module(13, 5)
    return 13, 5, make(request_class(13, 5), group_id="g", members=tuple(
        m.MemberIdentity(member_id=f"m{i:07d}", group_instance_id=None, reason=None) for i in range(n)))


def _alter_configs(key, version, n, node):  # unknown topics: UNKNOWN_TOPIC_OR_PARTITION each
    m = request_module(key, version)
    extra = {"config_operation": 0} if key == 44 else {}
    return key, version, make(request_class(key, version), validate_only=False, resources=tuple(
        m.AlterConfigsResource(resource_type=2, resource_name=f"u{i:07d}", configs=(
            m.AlterableConfig(name="retention.ms", value="1", **extra),)) for i in range(n)))


def _metadata(n, node):  # topic t named n times (700,000 in 2 MiB): answered once
    m = request_module(3, 4)
    return 3, 4, make(request_class(3, 4), topics=(m.MetadataRequestTopic(name="t"),) * n,
                      allow_auto_topic_creation=False)


def _list_offsets_v0(n, node):
    m = request_module(2, 0)
    return 2, 0, make(request_class(2, 0), replica_id=-1, topics=(m.ListOffsetsTopic(name="t", partitions=tuple(
        m.ListOffsetsPartition(partition_index=i % 4, timestamp=-1, max_num_offsets=1) for i in range(n))),))


def _list_offsets(n, node):  # distinct topics, unknown: each answered UNKNOWN_TOPIC_OR_PARTITION
    m = request_module(2, 7)
    return 2, 7, make(request_class(2, 7), replica_id=-1, isolation_level=0, topics=tuple(m.ListOffsetsTopic(
        name=f"u{i:07d}", partitions=(m.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1,
                                                             timestamp=-1),)) for i in range(n)))


def _describe_groups(key, n, node):  # group g named n times: answered n times, from one build
    return key, 1, make(request_class(key, 1), group_ids=("g",) * n, include_authorized_operations=False)


def _create_topics_refused(n, node):  # over 10,000 partitions in all: POLICY_VIOLATION on each topic
    m = request_module(19, 7)
    return 19, 7, make(request_class(19, 7), timeout=datetime.timedelta(seconds=30), validate_only=False,
                       topics=tuple(m.CreatableTopic(name=f"u{i:07d}", num_partitions=1000, replication_factor=1,
                                                     assignments=(), configs=()) for i in range(n)))


def _share_state(key, entity, n, node, by_partition, **partition):
    """Group s's state on t-0 named n times (its topic, or the partitions of one topic), or on t-0..3
    (t-3 does not exist) n times."""
    m, tid = request_module(key, 0), node.logs.topics["t"].topic_id
    if by_partition:
        topics = (getattr(m, entity)(topic_id=tid, partitions=tuple(
            m.PartitionData(partition=i % 4, **partition) for i in range(n))),)
    else:
        topics = (getattr(m, entity)(topic_id=tid, partitions=(m.PartitionData(partition=0, **partition),)),) * n
    return key, 0, make(request_class(key, 0), group_id="s", topics=topics)


def _elect_refused(n, node):  # election type 2: INVALID_REQUEST on each partition named
    m = request_module(43, 1)
    return 43, 1, make(request_class(43, 1), election_type=2, timeout=datetime.timedelta(seconds=30),
                       topic_partitions=(m.TopicPartitions(topic="t", partitions=tuple(range(n))),))


def _elect_topics(n, node):
    m = request_module(43, 2)
    return 43, 2, make(request_class(43, 2), election_type=0, timeout=datetime.timedelta(seconds=30),
                       topic_partitions=(m.TopicPartitions(topic="t", partitions=()),) * n)


def _find_coordinator(n, node):  # malformed share-partition keys: INVALID_REQUEST each
    return 10, 6, make(request_class(10, 6), key_type=2, coordinator_keys=("g",) * n)


def _share_fetch(n, node, forgotten=False):
    """A ShareFetch opening member m's session (epoch 0, so that every call is answered alike) over
    n partitions of t, 3 of which exist; or over t-0, forgetting t-0 n times."""
    m, tid = request_module(78, 1), node.logs.topics["t"].topic_id
    partitions = (0,) if forgotten else range(n)
    topic = m.FetchTopic(topic_id=tid, partitions=tuple(
        m.FetchPartition(partition_index=i, acknowledgement_batches=()) for i in partitions))
    return 78, 1, make(request_class(78, 1), group_id="s", member_id="m", share_session_epoch=0,
                       max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=1 << 20, max_records=10,
                       batch_size=10, topics=(topic,), forgotten_topics_data=(
                           m.ForgottenTopic(topic_id=tid, partitions=(0,)),) * (n if forgotten else 0))


def _alter_share_offsets_partitions(n, node):  # empty share group s: t's partitions 0-3 (t-3 unknown) n times
    if "s" not in node.share.groups:
        for epoch in (0, -1):  # joined and left
            node.share.heartbeat("s", "m", epoch, ("t",), None, ("c", "h"), 0)
    m = request_module(91, 0)
    return 91, 0, make(request_class(91, 0), group_id="s", topics=(m.AlterShareGroupOffsetsRequestTopic(
        topic_name="t", partitions=tuple(m.AlterShareGroupOffsetsRequestPartition(
            partition_index=i % 4, start_offset=0) for i in range(n))),))


def _update_features(n, node):  # distinct unknown features, in reverse order: every one refused, answered by name
    m = request_module(57, 1)
    return 57, 1, make(request_class(57, 1), timeout=datetime.timedelta(seconds=30), validate_only=False,
                       feature_updates=tuple(m.FeatureUpdateKey(feature=f"f{n - i:07d}", max_version_level=1,
                                                                upgrade_type=1) for i in range(n)))


def _alter_replica_log_dirs(n, node):  # distinct unknown topics, into the data directory
    m = request_module(34, 2)
    return 34, 2, make(request_class(34, 2), dirs=(m.AlterReplicaLogDir(
        path=str(node.logs.data_dir.absolute()), topics=tuple(
            m.AlterReplicaLogDirTopic(name=f"u{i:07d}", partitions=(0,)) for i in range(n))),))

def _describe_scram(n, node):  # unknown users: RESOURCE_NOT_FOUND each; every thousandth named twice
    m = request_module(50, 0)
    return 50, 0, make(request_class(50, 0), users=tuple(
        m.UserName(name=f"u{i - (i % 1000 == 999):07d}") for i in range(n)))


def _alter_scram(n, node):  # n deletions of unknown users, n upsertions stored (keys derived for each)
    m = request_module(51, 0)
    return 51, 0, make(request_class(51, 0), deletions=tuple(
        m.ScramCredentialDeletion(name=f"d{i:07d}", mechanism=1) for i in range(n)), upsertions=tuple(
        m.ScramCredentialUpsertion(name=f"u{i - (i % 1000 == 999):07d}", mechanism=1 + i % 2,
                                   iterations=4096 if i % 7 else 1, salt=b"s" * 16, salted_password=b"p" * 32)
        for i in range(n)))


def _alter_quotas(n, node):  # an entity each, every thousandth named twice, every seventh's value refused
    m = request_module(49, 1)
    return 49, 1, make(request_class(49, 1), validate_only=False, entries=tuple(m.EntryData(
        entity=(m.EntityData(entity_type="user", entity_name=f"u{i - (i % 1000 == 999):07d}"),),
        ops=(m.OpData(key="producer_byte_rate", value=1024.0 if i % 7 else 0.5, remove=False),)) for i in range(n)))


CASES = {
    "offset-fetch-v8-groups": _offset_fetch,
    "describe-share-group-offsets-groups": _share_offsets,
    "describe-share-group-offsets-topics": _share_offsets_topics,
    "describe-quorum-topics": _quorum,
    "describe-quorum-partitions": _quorum_partitions,
    "describe-topic-partitions-unknown": _topic_partitions,
    "describe-topic-partitions-refused": _topic_partitions_refused,
    "write-txn-markers": _markers,
    "write-txn-markers-partitions": _marker_partitions,
    "add-partitions-to-txn-v5": _add_partitions,
    "add-partitions-to-txn-v3-partitions": _add_partitions_v3,
    "add-partitions-to-txn-v3-topics": _add_partitions_v3_topics,
    "delete-share-group-state-topics": functools.partial(_share_state, 86, "DeleteStateData", by_partition=False),
    "delete-share-group-state-partitions": functools.partial(_share_state, 86, "DeleteStateData", by_partition=True),
    "read-share-group-state-summary-topics": functools.partial(_share_state, 87, "ReadStateSummaryData",
                                                               by_partition=False, leader_epoch=0),
    "read-share-group-state-summary-partitions": functools.partial(_share_state, 87, "ReadStateSummaryData",
                                                                   by_partition=True, leader_epoch=0),
    "elect-leaders-refused": _elect_refused,
    "delete-groups": _delete_groups,
    "leave-group-members": _leave_group,
    "list-offsets-topics": _list_offsets,
    "create-topics-refused": _create_topics_refused,
    "consumer-group-describe": functools.partial(_describe_groups, 69),
    "share-group-describe": functools.partial(_describe_groups, 77),
    "alter-configs": functools.partial(_alter_configs, 33, 2),
    "incremental-alter-configs": functools.partial(_alter_configs, 44, 1),
    "elect-leaders-topics": _elect_topics,
    "find-coordinator-keys": _find_coordinator,
    "share-fetch-partitions": _share_fetch,
    "alter-share-group-offsets-partitions": _alter_share_offsets_partitions,
    "describe-user-scram-credentials": _describe_scram,
    "alter-user-scram-credentials": _alter_scram,
    "alter-client-quotas": _alter_quotas,
    "update-features": _update_features,
    "alter-replica-log-dirs": _alter_replica_log_dirs,
    # the API's whole-request error answer (Kafka: getErrorResponse), through a control-plane fault
    "offset-fetch-v8-error": _offset_fetch,
    "add-partitions-to-txn-v3-error": _add_partitions_v3,
    "elect-leaders-error": _elect_refused,
}
# cases held to a tighter bound, most because their unpaced turn was under the common one:
# AddPartitionsToTxn's grouping of 120,000 topic results took 0.3 CPU s, ListOffsets' answer of
# 110,000 topics 0.17-0.19 s, Consumer- and ShareGroupDescribe 0.18 s for one group named 300,000
# times; FindCoordinator 0.09-0.15 s for a million keys none of which was valid (whether one was: a
# walk of them all in one turn), 0.08 s for a million valid ones (a dict per key, all freed in the
# turn the handler returned). ShareFetch's answer of 350,000 partitions was built and encoded in
# one turn (2.5 s). DescribeUserScramCredentials of 210,000 users took 0.9 CPU s, AlterClientQuotas
# of 45,000 entities 0.74 s, AlterUserScramCredentials of 27,000 users 0.6 s
BOUNDS = {"add-partitions-to-txn-v3-topics": 0.1, "list-offsets-topics": 0.1, "consumer-group-describe": 0.1,
          "share-group-describe": 0.1, "find-coordinator-keys": 0.06, "share-fetch-partitions": 0.1,
          "describe-user-scram-credentials": 0.1, "alter-user-scram-credentials": 0.1, "alter-client-quotas": 0.1}
FAULTED = {"offset-fetch-v8-error": "OffsetFetch", "add-partitions-to-txn-v3-error": "AddPartitionsToTxn",
           "elect-leaders-error": "ElectLeaders"}


@pytest.fixture
def broker(tmp_path):
    """A 4.1 node (share groups served) with topic t, share group s's state on t-0."""
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", group_initial_rebalance_delay_ms=0))
    node.logs.create_topic("t", 3)
    node.finalize_features({"share.version": 1})
    node.share.store.write_batches([Change(("s", node.logs.topics["t"].topic_id, 0), 5, (), state_epoch=1,
                                           leader_epoch=0, initialize=True)])
    yield node
    node.close()


async def _faulted(node, case):
    """The case's API answered with its whole-request error, as a control-plane fault does."""
    if case in FAULTED:
        await call(node.control, "error", {"api": FAULTED[case], "error": "NOT_COORDINATOR", "count": 0})


def _frame(build, n, node):
    key, version, request = build(n, node)
    return key, version, encode_request(RequestHeader(key, version, 1, "c"), request)


def _sized(build, node):
    """As amplify.py fills a request: n entries for REQUEST_BYTES."""
    one, two = len(_frame(build, 1, node)[2]), len(_frame(build, 2, node)[2])
    return _frame(build, REQUEST_BYTES // (two - one), node)


@pytest.mark.parametrize("case", CASES)
async def test_a_2_mib_request_does_not_hold_the_loop(broker, case):
    key, version, frame = _sized(CASES[case], broker)
    await _faulted(broker, case)
    raw, stall = await stall_during(dispatch(broker, frame))
    assert len(raw) > len(frame) // 2  # every entry answered
    if case in FAULTED:
        assert ErrorCode.not_coordinator in error_codes(decode_response(raw, key, version)[1])
    if case == "write-txn-markers":  # every marker written, each its own control batch
        markers = decode_response(raw, key, version)[1].markers
        assert {p.error_code for m in markers for t in m.topics for p in t.partitions} == {0}
        assert broker.logs.get("t", 0).log_end_offset == len(markers) > 50_000
    if case == "update-features":  # each feature refused, by name
        results = decode_response(raw, key, version)[1].results
        names = [x.feature for x in results]
        assert names == sorted(names) and len(names) > 100_000 and {x.error_code for x in results} == {
            ErrorCode.invalid_update_version}
    assert stall.cpu < BOUNDS.get(case, 0.3), stall  # the prelude over the whole request and the encoding of the answer stay


@pytest.mark.parametrize("case", CASES)
async def test_the_paced_answer_is_the_unpaced_one(broker, case, monkeypatch):
    key, version, frame = _frame(CASES[case], 2000, broker)
    await _faulted(broker, case)
    answers = []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append(await dispatch(broker, frame))
    assert answers[0] == answers[1]
    decode_response(answers[0], key, version)  # a well-formed answer


@pytest.fixture
def authorized_broker(tmp_path):
    """The broker above with an authorizer: the anonymous client may READ (and DESCRIBE) group s, do
    anything to the topics starting u0000 (u0000000-u0000999), not to the others, and ALTER the
    cluster; it may WRITE transactional id x. Another principal's ACL names every topic u*, so each
    lookup weighs it, as on a shared cluster."""
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", group_initial_rebalance_delay_ms=0,
                             authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer"))
    node.logs.create_topic("t", 3)
    node.finalize_features({"share.version": 1})
    node.acls.change(add=[AclBinding(R.GROUP, "s", P.LITERAL, "User:ANONYMOUS", "*", O.READ, A.ALLOW),
                          AclBinding(R.TOPIC, "u0000", P.PREFIXED, "User:ANONYMOUS", "*", O.ALL, A.ALLOW),
                          AclBinding(R.CLUSTER, "kafka-cluster", P.LITERAL, "User:ANONYMOUS", "*", O.ALTER, A.ALLOW),
                          AclBinding(R.TRANSACTIONAL_ID, "x", P.LITERAL, "User:ANONYMOUS", "*", O.WRITE, A.ALLOW),
                          AclBinding(R.TOPIC, "u", P.PREFIXED, "User:other", "*", O.ALL, A.DENY)])
    yield node
    node.close()


async def test_share_group_offsets_authorize_each_topic_paced(authorized_broker, monkeypatch):
    """DescribeShareGroupOffsets asked the authorizer about 120,000 topics in one turn (0.6 CPU s)."""
    key, version, frame = _sized(_share_offsets_topics, authorized_broker)
    raw, stall = await stall_during(dispatch(authorized_broker, frame))
    topics = decode_response(raw, key, version)[1].groups[0].topics
    codes = {t.topic_name < "u0001": t.partitions[0].error_code for t in topics}
    assert codes == {True: ErrorCode.none, False: ErrorCode.topic_authorization_failed} and len(topics) > 100_000
    assert stall.cpu < 0.3, stall
    frame = _frame(_share_offsets_topics, 2000, authorized_broker)[2]
    answers = []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append(await dispatch(authorized_broker, frame))
    assert answers[0] == answers[1]


# the filters a 2 MiB request meets none of: each walked the whole request in one turn, once per rule
MISSES = ({"topic": "nope"}, {"topic": "t", "partition": 1 << 30}, {"partition": 1 << 30}, {"group_id": "nope"},
          {"transactional_id": "nope"}, {"transactional_id": "nope", "topic": "nope"})


@pytest.mark.parametrize("case", ["add-partitions-to-txn-v3-partitions", "offset-fetch-v8-groups"])
async def test_fault_rules_match_a_2_mib_request_paced(broker, case):
    """The control plane's filters walked the request for each rule in one turn: six rules held the
    loop 3.8 CPU s on 2 MiB of OffsetFetch groups. Now what the request names is walked once, paced,
    for every rule."""
    key, version, frame = _sized(CASES[case], broker)
    api = REGISTRY[key].name
    for match in MISSES:
        await call(broker.control, "error", {"api": api, "error": "NOT_COORDINATOR", "count": 0, **match})
    raw, stall = await stall_during(dispatch(broker, frame))
    assert ErrorCode.not_coordinator not in error_codes(decode_response(raw, key, version)[1])
    assert stall.cpu < 0.3, stall
    hit = {"add-partitions-to-txn-v3-partitions": {"topic": "t"}, "offset-fetch-v8-groups": {
        "group_id": "g", "topic": "t"}}[case]
    rule = await call(broker.control, "error", {"api": api, "error": "NOT_COORDINATOR", **hit})
    raw, stall = await stall_during(dispatch(broker, frame))
    assert ErrorCode.not_coordinator in error_codes(decode_response(raw, key, version)[1]) and stall.cpu < 0.3, stall
    rules = {r["rule"]: r for r in (await call(broker.control, "faults", {}))["rules"]}
    assert rules[rule["rule"]]["fired"] == 1 and {r["matched"] for r in rules.values()} == {0, 1}


def _offset_delete(n, node):
    m = request_module(47, 0)
    return 47, 0, make(request_class(47, 0), group_id="g", topics=(m.OffsetDeleteRequestTopic(
        name="t", partitions=tuple(m.OffsetDeleteRequestPartition(partition_index=i) for i in range(n))),))


async def _commit(node):
    m = request_module(8, 8)
    request = make(request_class(8, 8), group_id="g", generation_id_or_member_epoch=-1, member_id="",
                   group_instance_id=None, topics=(m.OffsetCommitRequestTopic(name="t", partitions=(
                       m.OffsetCommitRequestPartition(partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                                                      committed_metadata=""),)),))
    await dispatch(node, encode_request(RequestHeader(8, 8, 1, "c"), request))


async def test_offset_delete_paced(broker, monkeypatch):
    """OffsetDelete walked a 2 MiB request's partitions in one turn (0.2 CPU s of one partition
    named 500,000 times)."""
    await _commit(broker)
    key, version, frame = _sized(_offset_delete, broker)
    raw, stall = await stall_during(dispatch(broker, frame))
    r = decode_response(raw, key, version)[1]
    codes = [p.error_code for t in r.topics for p in t.partitions]
    assert r.error_code == ErrorCode.none and len(codes) > 200_000 and codes[:4] == [ErrorCode.none] * 3 + [
        ErrorCode.unknown_topic_or_partition]
    assert stall.cpu < 0.3, stall
    frame, answers = _frame(_offset_delete, 2000, broker)[2], []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        await _commit(broker)
        answers.append(await dispatch(broker, frame))
    assert answers[0] == answers[1] and answers[0].count(b"\x00\x03") >= 1997


def _client_quotas(n, node):  # one quota key named n times
    m = request_module(49, 1)
    return 49, 1, make(request_class(49, 1), validate_only=False, entries=(m.EntryData(
        entity=(m.EntityData(entity_type="user", entity_name="u"),),
        ops=(m.OpData(key="producer_byte_rate", value=1.0, remove=False),) * n),))


def _delete_acls(n, node):  # no authorizer: SECURITY_DISABLED for each filter, once they are all checked
    m = request_module(31, 0)
    return 31, 0, make(request_class(31, 0), filters=(m.DeleteAclsFilter(
        resource_type_filter=2, resource_name_filter=None, principal_filter=None, host_filter=None, operation=1,
        permission_type=1),) * n)


def _list_groups(n, node):  # a state filter naming one state n times (a million in 2 MiB)
    return 16, 4, make(request_class(16, 4), states_filter=("x",) * n)


@pytest.mark.parametrize("build, release", [(_metadata, "4.1"), (_list_offsets_v0, "3.9"), (_client_quotas, "4.1"),
                                            (_delete_acls, "3.9"), (_list_groups, "4.1")])
async def test_a_2_mib_request_answered_in_brief_does_not_hold_the_loop(tmp_path, monkeypatch, build, release):
    """Metadata walked 700,000 names in one turn before answering each topic once (0.22 CPU s);
    ListOffsets v0 (3.x) its 260,000 partitions (1.1 s). AlterClientQuotas built an error for each
    repeat of a quota key (0.28 s for 100,000), where one is answered. DeleteAcls checked its filters
    in one turn (0.18 s). ListGroups wrote its states filter in Kafka's case twice in one turn (for
    classic and consumer groups, then for share groups: 0.15-0.2 s for a million names)."""
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version=release))
    node.logs.create_topic("t", 3)
    try:
        key, version, frame = _sized(build, node)
        raw, stall = await stall_during(dispatch(node, frame))
        decode_response(raw, key, version)
        assert stall.cpu < 0.1, stall
        frame, answers = _frame(build, 2000, node)[2], []
        for slice_s in (1e9, 0.0):  # never yields; yields after every entry
            monkeypatch.setattr(_pace, "SLICE_S", slice_s)
            answers.append(await dispatch(node, frame))
        assert answers[0] == answers[1]
    finally:
        node.close()


def _metadata_topics(n, node):  # distinct unknown topics, allow_auto_topic_creation off
    m = request_module(3, 12)
    return 3, 12, make(request_class(3, 12), topics=tuple(m.MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=f"u{i:07d}")
                                                          for i in range(n)), allow_auto_topic_creation=False,
                       include_topic_authorized_operations=False)


def _metadata_v3_refused(n, node):  # v3 creates unknown topics it may: these it may not even describe
    m = request_module(3, 3)
    return 3, 3, make(request_class(3, 3), topics=tuple(m.MetadataRequestTopic(name=f"w{i:07d}") for i in range(n)))


def _alter_share_offsets(n, node):
    m = request_module(91, 0)
    return 91, 0, make(request_class(91, 0), group_id="s", topics=tuple(m.AlterShareGroupOffsetsRequestTopic(
        topic_name=f"u{i:07d}", partitions=(m.AlterShareGroupOffsetsRequestPartition(
            partition_index=0, start_offset=0),)) for i in range(n)))


def _delete_acls_v3(n, node):  # one filter n times: matches none of the fixture's ACLs
    m = request_module(31, 3)
    return 31, 3, make(request_class(31, 3), filters=(m.DeleteAclsFilter(
        resource_type_filter=2, resource_name_filter="nope", pattern_type_filter=1, principal_filter=None,
        host_filter=None, operation=1, permission_type=1),) * n)


def _offset_fetch_topics(version, n, node):  # group s's offsets of distinct topics, none committed
    m = request_module(9, version)
    if version < 8:
        return 9, version, make(request_class(9, version), group_id="s", require_stable=False, topics=tuple(
            m.OffsetFetchRequestTopic(name=f"u{i:07d}", partition_indexes=(0,)) for i in range(n)))
    return 9, version, make(request_class(9, version), require_stable=False, groups=(m.OffsetFetchRequestGroup(
        group_id="s", topics=tuple(m.OffsetFetchRequestTopics(name=f"u{i:07d}", partition_indexes=(0,))
                                   for i in range(n))),))


def _delete_records_topics(n, node):
    m = request_module(21, 2)
    return 21, 2, make(request_class(21, 2), timeout=datetime.timedelta(seconds=30), topics=tuple(
        m.DeleteRecordsTopic(name=f"u{i:07d}", partitions=(m.DeleteRecordsPartition(partition_index=0, offset=0),))
        for i in range(n)))


def _create_partitions_topics(n, node):
    m = request_module(37, 3)
    return 37, 3, make(request_class(37, 3), timeout=datetime.timedelta(seconds=30), validate_only=True, topics=tuple(
        m.CreatePartitionsTopic(name=f"u{i:07d}", count=2, assignments=None) for i in range(n)))


# an ACL lookup per name (or, for DeleteAcls, a filter read per entry) in one turn, measured at 2 MiB
AUTHZ_CASES = {
    "metadata-topics": _metadata_topics,  # 0.95 CPU s for 200,000 names
    "metadata-v3-refused": _metadata_v3_refused,  # 0.7-1 s: answered in the turn that creates topics
    "delete-acls": _delete_acls_v3,  # 0.73 s for 50,000 filters
    "alter-share-group-offsets-topics": _alter_share_offsets,  # 1.1 s for 48,000 refused topics
    "offset-fetch-v7-topics": functools.partial(_offset_fetch_topics, 7),  # 0.64 s for 140,000 topics
    "offset-fetch-v8-topics": functools.partial(_offset_fetch_topics, 8),  # 0.56 s
    "list-offsets-topics": _list_offsets,  # 0.29 s for 110,000 topics
    "delete-records-topics": _delete_records_topics,  # 0.32 s
    "add-partitions-to-txn-v3-topics": _add_partitions_v3_topics,  # 0.65 s
    "create-partitions-topics": _create_partitions_topics,  # 0.5 s
}
# the others at 0.15: unpaced, some took only 0.3-0.5 s on a quiet machine (0.02-0.13 s paced)
AUTHZ_BOUNDS = {"delete-acls": 0.3, "metadata-v3-refused": 0.3, "offset-fetch-v7-topics": 0.3, "offset-fetch-v8-topics": 0.3}


@pytest.mark.parametrize("case", AUTHZ_CASES)
async def test_a_2_mib_request_the_acls_check_does_not_hold_the_loop(authorized_broker, case, monkeypatch):
    key, version, frame = _sized(AUTHZ_CASES[case], authorized_broker)
    raw, stall = await stall_during(dispatch(authorized_broker, frame))
    codes = set(error_codes(decode_response(raw, key, version)[1]))
    assert case == "delete-acls" or ErrorCode.topic_authorization_failed in codes, codes
    assert len(raw) > len(frame) // 4 and stall.cpu < AUTHZ_BOUNDS.get(case, 0.15), stall
    frame, answers = _frame(AUTHZ_CASES[case], 2000, authorized_broker)[2], []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append(await dispatch(authorized_broker, frame))
    assert answers[0] == answers[1]


async def test_share_fetch_forgotten_topics_paced(broker, monkeypatch):
    """ShareFetch looked up the topic of each forgotten topic in one turn (0.12-0.17 CPU s for
    95,000 in the 2 MiB sweeps)."""
    build = functools.partial(_share_fetch, forgotten=True)
    key, version, frame = _sized(build, broker)
    raw, stall = await stall_during(dispatch(broker, frame))
    r = decode_response(raw, key, version)[1]
    assert r.error_code == ErrorCode.none and [p.partition_index for t in r.responses for p in t.partitions] == [0]
    assert stall.cpu < 0.05, stall
    frame, answers = _frame(build, 2000, broker)[2], []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append(await dispatch(broker, frame))
    assert answers[0] == answers[1]


async def test_share_group_heartbeat_subscribed_names_paced(tmp_path, monkeypatch):
    """ShareGroupHeartbeat made sets of its subscribed names in one turn, and the group made them
    again (0.05 CPU s for a million names, 0.12 s in the 2 MiB sweeps); each name now goes on
    once, paced. A member joining a fresh node each time, so that each answer is the first."""
    def frame(group, n):
        return encode_request(RequestHeader(76, 1, 1, "c"), make(
            request_class(76, 1), group_id=group, member_id="m" * 22, member_epoch=0, rack_id=None,
            subscribed_topic_names=("t",) * n))

    async def join(n, slice_s=None, name="t"):
        node = Node(BrokerConfig(data_dir=tmp_path / name, kafka_version="4.1", group_initial_rebalance_delay_ms=0))
        node.logs.create_topic("t", 3)
        node.finalize_features({"share.version": 1})
        try:
            await dispatch(node, frame("w", 1))  # the internal topics made by a first group, not measured
            if slice_s is not None:
                monkeypatch.setattr(_pace, "SLICE_S", slice_s)
            return await stall_during(dispatch(node, frame("s", n)))
        finally:
            node.close()

    raw, stall = await join(REQUEST_BYTES // 2)
    r = decode_response(raw, 76, 1)[1]
    assert r.error_code == ErrorCode.none and r.member_epoch == 1, r
    assert stall.cpu < 0.03, stall
    answers = [(await join(2000, slice_s, f"n{slice_s}"))[0] for slice_s in (1e9, 0.0)]
    assert answers[0] == answers[1]


def _consumer_heartbeat_topics(n, node):  # a new member subscribing to distinct topics, most not describable
    return 68, 1, make(request_class(68, 1), group_id="s", member_id="m" * 22, member_epoch=0, instance_id=None,
                       rack_id=None, rebalance_timeout=datetime.timedelta(seconds=30),
                       subscribed_topic_names=tuple(f"u{i:07d}" for i in range(n)), subscribed_topic_regex=None,
                       server_assignor=None, topic_partitions=())


async def test_consumer_group_heartbeat_asks_the_acls_paced(authorized_broker, monkeypatch):
    """ConsumerGroupHeartbeat asked the ACLs about 230,000 subscribed names in one turn (1.3 CPU s)."""
    key, version, frame = _sized(_consumer_heartbeat_topics, authorized_broker)
    raw, stall = await stall_during(dispatch(authorized_broker, frame))
    assert decode_response(raw, key, version)[1].error_code == ErrorCode.topic_authorization_failed
    assert stall.cpu < 0.15, stall
    frame, answers = _frame(_consumer_heartbeat_topics, 2000, authorized_broker)[2], []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append(await dispatch(authorized_broker, frame))
    assert answers[0] == answers[1]


def _share_acknowledge(n, node):  # in member m's session (epoch 1): n partitions of t, 3 of which exist
    m = request_module(79, 1)
    return 79, 1, make(request_class(79, 1), group_id="s", member_id="m", share_session_epoch=1, topics=(
        m.AcknowledgeTopic(topic_id=node.logs.topics["t"].topic_id, partitions=tuple(
            m.AcknowledgePartition(partition_index=i, acknowledgement_batches=()) for i in range(n))),))


async def test_share_acknowledge_answer_paced(broker, monkeypatch):
    """ShareAcknowledge built the answer's partitions in one turn: 1.3 CPU s for 350,000 partition
    indexes of one topic, all but three UNKNOWN_TOPIC_OR_PARTITION. Each call acknowledges in a
    session ShareFetch has just opened."""
    async def acknowledge(frame):
        await dispatch(broker, encode_request(RequestHeader(78, 1, 1, "c"), _share_fetch(1, broker)[2]))
        return await stall_during(dispatch(broker, frame))

    key, version, frame = _sized(_share_acknowledge, broker)
    raw, stall = await acknowledge(frame)
    r = decode_response(raw, key, version)[1]
    codes = [p.error_code for t in r.responses for p in t.partitions]
    assert r.error_code == ErrorCode.none and len(codes) > 300_000 and codes[3] == ErrorCode.unknown_topic_or_partition
    assert stall.cpu < 0.1, stall
    frame, answers = _frame(_share_acknowledge, 2000, broker)[2], []
    for slice_s in (1e9, 0.0):  # never yields; yields after every entry
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append((await acknowledge(frame))[0])
    assert answers[0] == answers[1]


async def test_update_features_checks_again_what_another_changed_between_slices(broker, monkeypatch):
    """Kafka's controller checks and applies an UpdateFeatures in one event. Paced, another may
    finalize between its slices: transaction.version 2 -> 1 (SAFE_DOWNGRADE), checked, then set to 0
    by another request, is then a downgrade to a newer version, refused, and nothing changes."""
    def update(*keys):
        m = request_module(57, 2)
        return encode_request(RequestHeader(57, 2, 1, "c"), make(
            request_class(57, 2), timeout=datetime.timedelta(seconds=30), validate_only=False, feature_updates=tuple(
                m.FeatureUpdateKey(feature=f, max_version_level=level, upgrade_type=t) for f, level, t in keys)))

    checked, check = {}, broker.quorum.check_update

    def check_update(feature, level, upgrade_type):
        checked[feature] = broker.quorum.level("transaction.version")
        check(feature, level, upgrade_type)

    monkeypatch.setattr(broker.quorum, "check_update", check_update)
    monkeypatch.setattr(_pace, "SLICE_S", 0.0)
    assert broker.quorum.level("transaction.version") == 2
    first = asyncio.ensure_future(dispatch(broker, update(
        ("transaction.version", 1, 2), *((f"f{i:04d}", 0, 1) for i in range(2000)))))
    while "transaction.version" not in checked:
        await asyncio.sleep(0)
    r = decode_response(await dispatch(broker, update(("transaction.version", 0, 2))), 57, 2)[1]
    assert r.error_code == ErrorCode.none and broker.quorum.level("transaction.version") == 0
    assert "f1999" not in checked  # the other request landed while the first was checking
    r = decode_response(await first, 57, 2)[1]
    assert r.error_code == ErrorCode.invalid_update_version and "newer version" in r.error_message, r
    assert broker.quorum.level("transaction.version") == 0 and checked["f1999"] == 0
