"""The group and transaction APIs while the coordinators load (shim.coordinators.loader,
shim.apis._loading): each answers as Kafka does for an id whose partition is still loading, and as
ever once the load is done. A node opened with ``load_later`` stays loading until its load runs."""

from __future__ import annotations

import pytest

from shim.config import BrokerConfig
from shim.node import Node
from shim.protocol.messages import make, request_module

from group_helpers import T0, TOPIC, E, call, offsets

LOADING = E.coordinator_load_in_progress


@pytest.fixture(params=["3.9", "4.0"])
def loading(request, nodes):
    """A node over a data directory holding a group's offsets and a transactional id, its
    coordinators not loaded yet."""
    seeded = nodes(kafka_version=request.param)
    seeded.logs.create_topic(TOPIC, 2)
    seeded.groups.commit_offsets("g", "", None, -1, offsets((0, 5)), T0)
    seeded.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    nodes.close(seeded)
    node = Node(BrokerConfig(data_dir=nodes.data_dir, **nodes.defaults, kafka_version=request.param), load_later=True)
    nodes.open.append(node)
    assert not node.loading.done
    return node


def _m(api, version):
    return request_module(api, version)


async def _group_answers(node) -> dict[str, int]:
    """The error code each group API answers for group ``g`` (and for an empty group id)."""
    m = _m(11, 5)
    protocols = (make(m.JoinGroupRequestProtocol, name="range", metadata=b""),)
    join = dict(session_timeout=10_000, rebalance_timeout=10_000, member_id="", protocol_type="consumer",
                protocols=protocols)
    topics8 = (make(_m(8, 2).OffsetCommitRequestTopic, name=TOPIC, partitions=(
        make(_m(8, 2).OffsetCommitRequestPartition, partition_index=0, committed_offset=9, committed_metadata=""),)),)
    fetch1 = (make(_m(9, 1).OffsetFetchRequestTopic, name=TOPIC, partition_indexes=(0,)),)
    group8 = (make(_m(9, 8).OffsetFetchRequestGroup, group_id="g", topics=None),)
    out = {
        "join": (await call(node, 11, 5, group_id="g", **join)).error_code,
        "join-empty-id": (await call(node, 11, 5, group_id="", **join)).error_code,
        "sync": (await call(node, 14, 3, group_id="g", generation_id=1, member_id="m", assignments=())).error_code,
        "heartbeat": (await call(node, 12, 3, group_id="g", generation_id=1, member_id="m")).error_code,
        "leave": (await call(node, 13, 3, group_id="g", members=(
            make(_m(13, 3).MemberIdentity, member_id="m"),))).error_code,
        "commit": (await call(node, 8, 2, group_id="g", member_id="", topics=topics8)).topics[0].partitions[0]
        .error_code,
        "fetch-v1": (await call(node, 9, 1, group_id="g", topics=fetch1)).topics[0].partitions[0].error_code,
        "fetch-v5": (await call(node, 9, 5, group_id="g", topics=None)).error_code,
        "fetch-v8": (await call(node, 9, 8, groups=group8)).groups[0].error_code,
        "describe": (await call(node, 15, 3, groups=("g",), include_authorized_operations=False)).groups[0]
        .error_code,
        "list": (await call(node, 16, 3)).error_code,
        "delete": (await call(node, 42, 1, groups_names=("g",))).results[0].error_code,
        "find": (await call(node, 10, 3, key="g", key_type=0)).error_code,
        "consumer-heartbeat": (await call(node, 68, 0, group_id="kip848", member_id="m", member_epoch=0,
                                          instance_id=None, rack_id=None, rebalance_timeout=30_000,
                                          subscribed_topic_names=(TOPIC,), server_assignor=None,
                                          topic_partitions=())).error_code,
    }
    return out


async def _txn_answers(node, describe: bool = True) -> dict[str, int]:
    """The error code each transaction API answers for transactional id ``tx`` (DescribeTransactions
    only while loading: kio cannot read the -1 start time of a loaded transaction that is Empty)."""
    add3 = (make(_m(24, 3).AddPartitionsToTxnTopic, name=TOPIC, partitions=(0,)),)
    add4 = (make(_m(24, 4).AddPartitionsToTxnTransaction, transactional_id="tx", producer_id=0, producer_epoch=0,
                 verify_only=True, topics=(make(_m(24, 4).AddPartitionsToTxnTopic, name=TOPIC, partitions=(0,)),)),)
    tc = (make(_m(28, 3).TxnOffsetCommitRequestTopic, name=TOPIC, partitions=(
        make(_m(28, 3).TxnOffsetCommitRequestPartition, partition_index=0, committed_offset=1,
             committed_metadata=""),)),)
    ids = dict(transactional_id="tx", producer_id=0, producer_epoch=0)
    add4_answer = await call(node, 24, 4, transactions=add4)
    init = await call(node, 22, 3, transactional_id="tx", transaction_timeout=60_000)
    out = {
        "init": init.error_code, "init-epoch": init.producer_epoch,
        "init-bad-timeout": (await call(node, 22, 3, transactional_id="tx", transaction_timeout=0)).error_code,
        "init-idempotent": (await call(node, 22, 3, transactional_id=None, transaction_timeout=60_000)).error_code,
        "add-partitions-v3": (await call(node, 24, 3, v3_and_below_transactional_id="tx", v3_and_below_producer_id=0,
                                         v3_and_below_producer_epoch=0, v3_and_below_topics=add3))
        .results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
        "add-partitions-v4-top": add4_answer.error_code,
        "add-partitions-v4": add4_answer.results_by_transaction[0].topic_results[0].results_by_partition[0]
        .partition_error_code,
        "add-offsets": (await call(node, 25, 3, group_id="g", **ids)).error_code,
        "end": (await call(node, 26, 3, committed=True, **ids)).error_code,
        "txn-offset-commit": (await call(node, 28, 3, group_id="g", topics=tc, **ids)).topics[0].partitions[0]
        .error_code,
        "txn-offset-commit-empty-group": (await call(node, 28, 3, group_id="", topics=tc, **ids)).topics[0]
        .partitions[0].error_code,
        "list": (await call(node, 66, 0, state_filters=(), producer_id_filters=())).error_code,
        "find": (await call(node, 10, 3, key="tx", key_type=1)).error_code,
    }
    if describe:
        described = (await call(node, 65, 0, transactional_ids=("tx", ""))).transaction_states
        out["describe"], out["describe-empty-id"] = (s.error_code for s in described)
    return out


async def test_group_apis_answer_kafkas_codes_while_loading(loading):
    got = await _group_answers(loading)
    before_4 = loading.config.kafka_version < "4.0"
    assert got == {
        "join": LOADING, "join-empty-id": E.invalid_group_id,
        # Kafka 3.9: GroupCoordinator.handleSyncGroup; 4.x: the load error
        "sync": E.rebalance_in_progress if before_4 else LOADING,
        "heartbeat": E.none,  # answered blindly while the group loads
        "leave": LOADING, "commit": LOADING, "fetch-v1": LOADING, "fetch-v5": LOADING, "fetch-v8": LOADING,
        "describe": LOADING, "list": LOADING, "delete": LOADING, "find": E.none,
        # KIP-848 is off under 3.9: refused as ever, before the coordinator is asked
        "consumer-heartbeat": E.unsupported_version if before_4 else LOADING,
    }
    assert loading.loading.refused[11] == 1  # the empty group id was its handler's


async def test_group_apis_serve_the_loaded_state_once_the_load_is_done(loading):
    loading.loading.run_now()
    fetched = await call(loading, 9, 5, group_id="g", topics=None)
    assert [(t.name, p.partition_index, p.committed_offset) for t in fetched.topics for p in t.partitions] == [
        (TOPIC, 0, 5)]
    got = await _group_answers(loading)
    assert LOADING not in got.values()
    assert got["describe"] == E.none and got["list"] == E.none


async def test_txn_apis_answer_kafkas_codes_while_loading(loading):
    got = await _txn_answers(loading)
    assert got == {
        "init": LOADING, "init-epoch": -1, "init-bad-timeout": E.invalid_transaction_timeout, "init-idempotent": E.none,
        "add-partitions-v3": LOADING, "add-partitions-v4-top": E.none, "add-partitions-v4": LOADING,
        "add-offsets": LOADING, "end": LOADING, "txn-offset-commit": LOADING,
        "txn-offset-commit-empty-group": E.invalid_group_id, "describe": LOADING,
        "describe-empty-id": E.invalid_request,
        "list": LOADING, "find": E.none,
    }


async def test_txn_apis_serve_the_loaded_state_once_the_load_is_done(loading):
    loading.loading.run_now()
    got = await _txn_answers(loading, describe=False)
    assert LOADING not in got.values()
    assert (got["init"], got["init-epoch"]) == (E.none, 1)  # the loaded id's next epoch


def test_nothing_to_load_is_loaded_at_once(nodes):
    node = Node(BrokerConfig(data_dir=nodes.data_dir, **nodes.defaults), load_later=True)
    nodes.open.append(node)
    assert node.loading.done


async def test_a_held_load_serves_once_released_and_loaded_sessions_start_then(tmp_path):
    """A Broker opens its listeners with the load held; once released, a loaded member that never
    heartbeats is removed one session after the load, by the broker's own timer."""
    import asyncio

    from shim import Broker
    from shim.coordinators.group import GroupState

    from group_helpers import join, sync

    data = tmp_path / "data"
    seeded = Node(BrokerConfig(data_dir=data, group_min_session_timeout_ms=100, group_initial_rebalance_delay_ms=0))
    seeded.logs.create_topic(TOPIC, 1)
    pending = join(seeded.groups, session=300)
    member, generation = pending.result.member_id, pending.result.generation_id
    assert sync(seeded.groups, member, generation, {member: b"a"}).result.error == E.none
    seeded.close()
    broker = Broker(data_dir=data, listen="127.0.0.1:0", group_min_session_timeout_ms=100)
    broker.hold_coordinator_load = True
    await broker.start()
    try:
        node = broker.node
        assert not node.loading.done and "g" not in node.groups.groups  # listening, not loaded
        broker.release_coordinator_load()
        await broker.coordinators_loaded()
        assert node.groups.groups["g"].state is GroupState.STABLE
        # no heartbeat comes: the broker's timer removes the member one session after the load
        await asyncio.wait_for(_until(lambda: node.groups.groups["g"].state is GroupState.EMPTY), 10)
    finally:
        await broker.stop()


async def _until(condition) -> None:
    import asyncio

    while not condition():
        await asyncio.sleep(0.01)


async def test_offset_fetch_v0_is_refused_without_waiting_for_the_load(nodes):
    """Kafka 3.9's OffsetFetch v0 read ZooKeeper: a KRaft broker refuses it before asking the group
    coordinator, loading or not (KafkaApis.handleOffsetFetchRequestFromZookeeper)."""
    seeded = nodes()
    seeded.logs.create_topic(TOPIC, 2)
    seeded.groups.commit_offsets("g", "", None, -1, offsets((0, 5)), T0)  # something to load
    nodes.close(seeded)
    node = Node(BrokerConfig(data_dir=nodes.data_dir, **nodes.defaults), load_later=True)
    nodes.open.append(node)
    assert not node.loading.done
    topics = (make(_m(9, 1).OffsetFetchRequestTopic, name=TOPIC, partition_indexes=(0,)),)
    codes = [(await call(node, 9, v, group_id="g", topics=topics)).topics[0].partitions[0].error_code for v in (1, 0)]
    assert codes == [LOADING, E.unsupported_version]


# With an authorizer: alice may use group g, transactional id tx and topics t and "gone" (which does
# not exist); group h, transactional id ty and topic "theirs" are not hers.
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@pytest.fixture(params=["3.9", "4.0", "4.1"])
def guarded(request, nodes):
    """A loading node (as ``loading``) with an authorizer and alice's ACLs; 4.1's with share groups."""
    from shim.security.acls import AclBinding, AclOperation, AclPermissionType, PatternType, ResourceType

    seeded = nodes(kafka_version=request.param)
    if request.param >= "4.1":
        seeded.finalize_features({"share.version": 1})
    seeded.logs.create_topic(TOPIC, 2)
    seeded.logs.create_topic("theirs", 1)
    seeded.groups.commit_offsets("g", "", None, -1, offsets((0, 5)), T0)
    seeded.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    nodes.close(seeded)
    node = Node(BrokerConfig(data_dir=nodes.data_dir, **nodes.defaults, kafka_version=request.param,
                             authorizer_class_name=STANDARD, super_users="User:admin"), load_later=True)
    nodes.open.append(node)
    node.acls.change(add=[AclBinding(kind, name, PatternType.LITERAL, "User:alice", "*", AclOperation.ALL,
                                     AclPermissionType.ALLOW)
                          for kind, name in ((ResourceType.GROUP, "g"), (ResourceType.TRANSACTIONAL_ID, "tx"),
                                             (ResourceType.TOPIC, TOPIC), (ResourceType.TOPIC, "gone"))])
    assert not node.loading.done
    return node


async def _as_alice(node, api_key: int, version: int, **fields):
    from shim.apis.dispatch import dispatch
    from shim.protocol.messages import RequestHeader, decode_response, encode_request
    from shim.security.session import ConnectionSession

    frame = encode_request(RequestHeader(api_key, version, 7, "loading-tests"), make(request_module(
        api_key, version).__dict__[_REQUEST_CLASS[api_key]], **fields))
    raw = await dispatch(node, frame, "/127.0.0.1", ConnectionSession("PLAINTEXT", "User:alice"))
    return decode_response(raw, api_key, version)[1]


_REQUEST_CLASS = {8: "OffsetCommitRequest", 9: "OffsetFetchRequest", 15: "DescribeGroupsRequest",
                  24: "AddPartitionsToTxnRequest", 28: "TxnOffsetCommitRequest", 42: "DeleteGroupsRequest",
                  65: "DescribeTransactionsRequest", 69: "ConsumerGroupDescribeRequest",
                  77: "ShareGroupDescribeRequest", 90: "DescribeShareGroupOffsetsRequest",
                  91: "AlterShareGroupOffsetsRequest", 92: "DeleteShareGroupOffsetsRequest"}


def _codes(topics, partitions: str = "partitions", code: str = "error_code") -> dict:
    return {(t.name, p.partition_index): getattr(p, code) for t in topics for p in getattr(t, partitions)}


def _commit_topics(api, version, *names):
    m = _m(api, version)
    prefix = "OffsetCommitRequest" if api == 8 else "TxnOffsetCommitRequest"
    return tuple(make(getattr(m, prefix + "Topic"), name=n, partitions=(make(
        getattr(m, prefix + "Partition"), partition_index=0, committed_offset=9, committed_metadata=""),))
        for n in names)


async def test_offset_commits_answer_their_topic_checks_before_the_load_error(guarded):
    """Kafka: KafkaApis.handleOffsetCommitRequest and handleTxnOffsetCommitRequest answer denied
    topics TOPIC_AUTHORIZATION_FAILED and unknown ones UNKNOWN_TOPIC_OR_PARTITION themselves, and
    hand the coordinator (loading) the rest; TxnOffsetCommit v0-1 gets COORDINATOR_NOT_AVAILABLE."""
    names = (TOPIC, "theirs", "gone")
    want = {(TOPIC, 0): LOADING, ("theirs", 0): E.topic_authorization_failed,
            ("gone", 0): E.unknown_topic_or_partition}
    commit = await _as_alice(guarded, 8, 8, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                             group_instance_id=None, topics=_commit_topics(8, 8, *names))
    assert _codes(commit.topics) == want
    ids = dict(transactional_id="tx", group_id="g", producer_id=0, producer_epoch=0)
    assert _codes((await _as_alice(guarded, 28, 3, generation_id=-1, member_id="", group_instance_id=None,
                                   topics=_commit_topics(28, 3, *names), **ids)).topics) == want
    old = await _as_alice(guarded, 28, 1, topics=_commit_topics(28, 1, *names), **ids)
    assert _codes(old.topics) == {**want, (TOPIC, 0): E.coordinator_not_available}
    only_refused = await _as_alice(guarded, 8, 8, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                                   group_instance_id=None, topics=_commit_topics(8, 8, "theirs"))
    assert _codes(only_refused.topics) == {("theirs", 0): E.topic_authorization_failed}
    # counted once a request, and only where the coordinator was left something to ask
    assert (guarded.loading.refused[8], guarded.loading.refused[28]) == (1, 2)


async def test_group_apis_answer_denied_groups_before_the_load_error(guarded):
    """Kafka: OffsetFetch v8+, DescribeGroups, DeleteGroups (and ConsumerGroupDescribe) answer each
    group the principal may not use GROUP_AUTHORIZATION_FAILED before asking the coordinator."""
    m9 = _m(9, 8)
    fetch = await _as_alice(guarded, 9, 8, require_stable=False, groups=tuple(
        make(m9.OffsetFetchRequestGroup, group_id=g, topics=None) for g in ("g", "h")))
    assert {g.group_id: g.error_code for g in fetch.groups} == {"g": LOADING, "h": E.group_authorization_failed}
    described = await _as_alice(guarded, 15, 5, groups=("g", "h"), include_authorized_operations=True)
    assert {g.group_id: g.error_code for g in described.groups} == {"g": LOADING, "h": E.group_authorization_failed}
    deleted = await _as_alice(guarded, 42, 2, groups_names=("g", "h"))
    assert {r.group_id: r.error_code for r in deleted.results} == {"g": LOADING, "h": E.group_authorization_failed}
    if guarded.config.kafka_version >= "4.0":
        consumer = await _as_alice(guarded, 69, 0, group_ids=("g", "h"), include_authorized_operations=False)
        assert {g.group_id: g.error_code for g in consumer.groups} == {
            "g": LOADING, "h": E.group_authorization_failed}


async def test_txn_apis_answer_their_own_checks_before_the_load_error(guarded):
    """Kafka: DescribeTransactions answers a denied id TRANSACTIONAL_ID_AUTHORIZATION_FAILED before
    asking the coordinator; AddPartitionsToTxn v0-3 fails a
    transaction naming a denied or unknown topic (the rest OPERATION_NOT_ATTEMPTED) without it."""
    described = await _as_alice(guarded, 65, 0, transactional_ids=("tx", "ty"))
    assert [s.error_code for s in described.transaction_states] == [LOADING, E.transactional_id_authorization_failed]
    m = _m(24, 3)

    async def add(*names):
        answer = await _as_alice(guarded, 24, 3, v3_and_below_transactional_id="tx", v3_and_below_producer_id=0,
                                 v3_and_below_producer_epoch=0, v3_and_below_topics=tuple(
                                     make(m.AddPartitionsToTxnTopic, name=n, partitions=(0,)) for n in names))
        return {(t.name, p.partition_index): p.partition_error_code for t in answer.results_by_topic_v3_and_below
                for p in t.results_by_partition}

    assert await add(TOPIC, "theirs") == {(TOPIC, 0): E.operation_not_attempted,
                                          ("theirs", 0): E.topic_authorization_failed}
    assert await add(TOPIC, "gone") == {(TOPIC, 0): E.operation_not_attempted,
                                        ("gone", 0): E.unknown_topic_or_partition}
    assert await add(TOPIC) == {(TOPIC, 0): LOADING}


async def test_share_group_apis_answer_denied_groups_and_topics_before_the_load_error(guarded):
    """Kafka 4.1: ShareGroupDescribe and DescribeShareGroupOffsets answer each denied group
    GROUP_AUTHORIZATION_FAILED, Alter- and DeleteShareGroupOffsets a denied group on the request and
    a request whose topics are all denied the topics' errors, before asking the coordinator."""
    if guarded.config.kafka_version < "4.1":
        pytest.skip("share groups: Kafka 4.1")
    described = await _as_alice(guarded, 77, 1, group_ids=("g", "h"), include_authorized_operations=False)
    assert {g.group_id: g.error_code for g in described.groups} == {"g": LOADING, "h": E.group_authorization_failed}
    m90, m91, m92 = _m(90, 0), _m(91, 0), _m(92, 0)
    offsets = await _as_alice(guarded, 90, 0, groups=tuple(
        make(m90.DescribeShareGroupOffsetsRequestGroup, group_id=g, topics=None) for g in ("g", "h")))
    assert {g.group_id: g.error_code for g in offsets.groups} == {"g": LOADING, "h": E.group_authorization_failed}

    async def alter(group, *names):
        return await _as_alice(guarded, 91, 0, group_id=group, topics=tuple(
            make(m91.AlterShareGroupOffsetsRequestTopic, topic_name=n, partitions=(
                make(m91.AlterShareGroupOffsetsRequestPartition, partition_index=0, start_offset=0),))
            for n in names))

    async def delete(group, *names):
        return await _as_alice(guarded, 92, 0, group_id=group, topics=tuple(
            make(m92.DeleteShareGroupOffsetsRequestTopic, topic_name=n) for n in names))

    for change, topic_code in ((alter, lambda t: t.partitions[0].error_code), (delete, lambda t: t.error_code)):
        assert (await change("h", TOPIC)).error_code == E.group_authorization_failed
        assert (await change("g", TOPIC)).error_code == LOADING
        only_denied = await change("g", "theirs")
        assert (only_denied.error_code, [topic_code(t) for t in only_denied.responses]) == (
            E.none, [E.topic_authorization_failed])
