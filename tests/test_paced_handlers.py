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
from paced_cases import REQUEST_BYTES, _share_offsets_topics, _add_partitions_v3_topics, _metadata, _list_offsets_v0, _list_offsets, _share_fetch, CASES, BOUNDS, FAULTED, _frame, _sized



async def _both_ways(monkeypatch, send) -> list:
    """``send()``'s answers when the Pacer never yields and when it yields after every entry."""
    answers = []
    for slice_s in (1e9, 0.0):
        monkeypatch.setattr(_pace, "SLICE_S", slice_s)
        answers.append(await send())
    return answers


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
    unpaced, paced = await _both_ways(monkeypatch, lambda: dispatch(broker, frame))
    assert unpaced == paced
    decode_response(paced, key, version)  # a well-formed answer


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
    unpaced, paced = await _both_ways(monkeypatch, lambda: dispatch(authorized_broker, frame))
    assert unpaced == paced


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
        frame = _frame(build, 2000, node)[2]
        unpaced, paced = await _both_ways(monkeypatch, lambda: dispatch(node, frame))
        assert unpaced == paced
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
    frame = _frame(AUTHZ_CASES[case], 2000, authorized_broker)[2]
    unpaced, paced = await _both_ways(monkeypatch, lambda: dispatch(authorized_broker, frame))
    assert unpaced == paced


async def test_share_fetch_forgotten_topics_paced(broker, monkeypatch):
    """ShareFetch looked up the topic of each forgotten topic in one turn (0.12-0.17 CPU s for
    95,000 in the 2 MiB sweeps)."""
    build = functools.partial(_share_fetch, forgotten=True)
    key, version, frame = _sized(build, broker)
    raw, stall = await stall_during(dispatch(broker, frame))
    r = decode_response(raw, key, version)[1]
    assert r.error_code == ErrorCode.none and [p.partition_index for t in r.responses for p in t.partitions] == [0]
    assert stall.cpu < 0.05, stall
    frame = _frame(build, 2000, broker)[2]
    unpaced, paced = await _both_ways(monkeypatch, lambda: dispatch(broker, frame))
    assert unpaced == paced


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
    frame = _frame(_consumer_heartbeat_topics, 2000, authorized_broker)[2]
    unpaced, paced = await _both_ways(monkeypatch, lambda: dispatch(authorized_broker, frame))
    assert unpaced == paced


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
