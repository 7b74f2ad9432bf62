"""CreatePartitions, DescribeLogDirs, AlterReplicaLogDirs, ElectLeaders and the partition
reassignment APIs through dispatch, with the answers a single-broker Kafka 3.9 gives."""

from __future__ import annotations

import datetime

import pytest

from shim.storage.producer_state import Origin

from kafka_codecs import encode_batch
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.storage.validation import validate_client_batch

from apis_support import call

CREATE_PARTITIONS, DESCRIBE_LOG_DIRS, ALTER_LOG_DIRS, ELECT, ALTER_REASSIGN, LIST_REASSIGN = 37, 35, 34, 43, 45, 46
TIMEOUT = datetime.timedelta(seconds=5)


def append(node, topic, partition, n=3):
    plog = node.logs.get(topic, partition)
    data = bytearray(encode_batch([(None, b"v%d" % i, (), 1_700_000_000_000) for i in range(n)]))
    plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)


async def create_partitions(node, *topics, version=3, validate_only=False):
    """topics: (name, count) or (name, count, assignments)."""
    def build(m):
        entries = []
        for name, count, *rest in topics:
            assignments = None if not rest else tuple(m.CreatePartitionsAssignment(broker_ids=tuple(a)) for a in rest[0])
            entries.append(m.CreatePartitionsTopic(name=name, count=count, assignments=assignments))
        return m.CreatePartitionsRequest(topics=tuple(entries), timeout=TIMEOUT, validate_only=validate_only)
    r = await call(node, CREATE_PARTITIONS, version, build)
    return {t.name: (t.error_code, t.error_message) for t in r.results}


# -- CreatePartitions -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(4))
async def test_create_partitions_grows_the_topic_durably(tmp_path, version):
    node = Node(BrokerConfig(data_dir=tmp_path))
    node.logs.create_topic("t", 1)
    assert await create_partitions(node, ("t", 3), version=version) == {"t": (E.none, None)}
    append(node, "t", 2)
    assert node.logs.get("t", 2).log_end_offset == 3
    node.close()
    again = Node(BrokerConfig(data_dir=tmp_path))
    try:
        assert again.logs.topics["t"].partitions == 3
        assert again.logs.get("t", 2).log_end_offset == 3
    finally:
        again.close()


async def test_create_partitions_not_an_increase(node):
    node.logs.create_topic("t", 2)
    same = await create_partitions(node, ("t", 2))
    fewer = await create_partitions(node, ("t", 1))
    assert same == {"t": (E.invalid_partitions, "Topic already has 2 partition(s).")}
    assert fewer == {"t": (E.invalid_partitions, "The topic t currently has 2 partition(s); 1 would not be an increase.")}
    assert node.logs.topics["t"].partitions == 2


async def test_create_partitions_validate_only_changes_nothing(node):
    node.logs.create_topic("t", 1)
    assert await create_partitions(node, ("t", 4), validate_only=True) == {"t": (E.none, None)}
    assert node.logs.topics["t"].partitions == 1 and ("t", 1) not in node.logs.logs


async def test_create_partitions_unknown_and_duplicate_topics(node):
    node.logs.create_topic("t", 1)
    got = await create_partitions(node, ("nope", 2), ("t", 2), ("t", 3))
    assert got["nope"] == (E.unknown_topic_or_partition, None)  # as Kafka: no message
    assert got["t"] == (E.invalid_request, "Duplicate topic name.")
    assert node.logs.topics["t"].partitions == 1


@pytest.mark.parametrize("assignments,ok", [
    ([[0], [0]], True),
    ([[0]], False),            # one assignment for two new partitions
    ([[0], [1]], False),       # another broker
    ([[0], []], False),        # empty
    ([[0], [0, 0]], False),    # this broker twice
])
async def test_create_partitions_manual_assignments(node, assignments, ok):
    node.logs.create_topic("t", 1)
    code, message = (await create_partitions(node, ("t", 3, assignments)))["t"]
    assert code == (E.none if ok else E.invalid_replica_assignment), message
    assert node.logs.topics["t"].partitions == (3 if ok else 1)


async def test_create_partitions_bounded_per_request(node, monkeypatch):
    from shim.apis import k37_create_partitions

    assert k37_create_partitions.MAX_NEW_PARTITIONS_PER_REQUEST == 10_000  # Kafka's bound; smaller below
    monkeypatch.setattr(k37_create_partitions, "MAX_NEW_PARTITIONS_PER_REQUEST", 10)
    for name in "abc":
        node.logs.create_topic(name, 1)
    got = await create_partitions(node, ("a", 7), ("b", 6), ("c", 5))
    assert [got[n][0] for n in "abc"] == [E.none, E.unknown_server_error, E.none]
    assert [node.logs.topics[n].partitions for n in "abc"] == [7, 1, 5]
    monkeypatch.undo()
    huge = await create_partitions(node, ("b", 2**31 - 1))
    assert huge["b"][0] == E.unknown_server_error and node.logs.topics["b"].partitions == 1


# -- DescribeLogDirs / AlterReplicaLogDirs --------------------------------------------------------

async def describe_log_dirs(node, topics, version=4):
    def build(m):
        wanted = None if topics is None else tuple(
            m.DescribableLogDirTopic(topic=t, partitions=tuple(ps)) for t, ps in topics.items())
        return m.DescribeLogDirsRequest(topics=wanted)
    return await call(node, DESCRIBE_LOG_DIRS, version, build)


@pytest.mark.parametrize("version", range(5))
async def test_describe_log_dirs_every_partition(node, version):
    node.logs.create_topic("a", 2)
    node.logs.create_topic("b", 1)
    append(node, "a", 1, n=5)
    r = await describe_log_dirs(node, None, version)
    assert getattr(r, "error_code", E.none) == E.none  # v3+
    [result] = r.results
    assert result.log_dir == str(node.config.data_dir.absolute())
    sizes = {(t.name, p.partition_index): (p.partition_size, p.offset_lag, p.is_future_key)
             for t in result.topics for p in t.partitions}
    assert sizes == {(name, i): (plog.size_bytes(), 0, False) for (name, i), plog in node.logs.logs.items()}
    assert sizes[("a", 1)][0] > 0 and sizes[("a", 0)][0] == 0
    if version >= 4:
        assert result.total_bytes >= result.usable_bytes > 0


async def test_describe_log_dirs_named_partitions_skip_unknown(node):
    node.logs.create_topic("a", 2)
    r = await describe_log_dirs(node, {"a": [1, 7], "missing": [0]})
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in r.results[0].topics] == [("a", [1])]


async def alter_log_dirs(node, dirs, version=2):
    def build(m):
        return m.AlterReplicaLogDirsRequest(dirs=tuple(
            m.AlterReplicaLogDir(path=path, topics=tuple(
                m.AlterReplicaLogDirTopic(name=t, partitions=tuple(ps)) for t, ps in topics.items()))
            for path, topics in dirs))
    r = await call(node, ALTER_LOG_DIRS, version, build)
    return {(t.topic_name, p.partition_index): p.error_code for t in r.results for p in t.partitions}


@pytest.mark.parametrize("version", range(3))
async def test_alter_replica_log_dirs(node, version):
    node.logs.create_topic("t", 1)
    here = str(node.config.data_dir.absolute())
    got = await alter_log_dirs(node, [(here, {"t": [0, 5], "x" * 250: [0]}), ("/elsewhere", {"u": [0]})], version)
    assert got == {("t", 0): E.none, ("t", 5): E.unknown_topic_or_partition,
                   ("x" * 250, 0): E.invalid_topic_exception, ("u", 0): E.log_dir_not_found}
    assert await alter_log_dirs(node, [(here, {"t": [0]}), ("/elsewhere", {"t": [0]})]) == {("t", 0): E.log_dir_not_found}


# -- ElectLeaders ---------------------------------------------------------------------------------

async def elect(node, partitions, version=2, election_type=0):
    def build(m):
        wanted = None if partitions is None else tuple(
            m.TopicPartitions(topic=t, partitions=tuple(ps)) for t, ps in partitions.items())
        fields = dict(topic_partitions=wanted, timeout=TIMEOUT)
        if version >= 1:
            fields["election_type"] = election_type
        return m.ElectLeadersRequest(**fields)
    return await call(node, ELECT, version, build)


@pytest.mark.parametrize("version,election_type", [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1)])
async def test_elect_leaders_not_needed(node, version, election_type):
    node.logs.create_topic("t", 2)
    r = await elect(node, {"t": [0, 1, 9], "nope": [0]}, version, election_type)
    got = {(t.topic, p.partition_id): p.error_code for t in r.replica_election_results for p in t.partition_result}
    assert got == {("t", 0): E.election_not_needed, ("t", 1): E.election_not_needed,
                   ("t", 9): E.unknown_topic_or_partition, ("nope", 0): E.unknown_topic_or_partition}


async def test_elect_leaders_all_partitions_lists_topics_without_partitions(node):
    node.logs.create_topic("t", 2)
    r = await elect(node, None)
    assert r.error_code == E.none
    assert [(t.topic, t.partition_result) for t in r.replica_election_results] == [("t", ())]


async def test_elect_leaders_unknown_election_type(node):
    node.logs.create_topic("t", 1)
    r = await elect(node, {"t": [0]}, election_type=5)
    assert r.error_code == E.invalid_request
    assert [p.error_code for p in r.replica_election_results[0].partition_result] == [E.invalid_request]


# -- partition reassignments ----------------------------------------------------------------------

async def alter_reassignments(node, targets):
    def build(m):
        return m.AlterPartitionReassignmentsRequest(timeout=TIMEOUT, topics=tuple(
            m.ReassignableTopic(name=t, partitions=tuple(
                m.ReassignablePartition(partition_index=p, replicas=None if r is None else tuple(r))
                for p, r in parts.items()))
            for t, parts in targets.items()))
    r = await call(node, ALTER_REASSIGN, 0, build)
    assert r.error_code == E.none
    return {(t.name, p.partition_index): p.error_code for t in r.responses for p in t.partitions}


async def test_alter_partition_reassignments(node):
    node.logs.create_topic("t", 4)
    me = node.config.node_id
    got = await alter_reassignments(node, {"t": {0: [me], 1: [me + 1], 2: None, 3: [], 7: [me]}, "nope": {0: [me]}})
    assert got == {("t", 0): E.none, ("t", 1): E.invalid_replica_assignment, ("t", 2): E.no_reassignment_in_progress,
                   ("t", 3): E.invalid_replica_assignment, ("t", 7): E.unknown_topic_or_partition,
                   ("nope", 0): E.unknown_topic_or_partition}


@pytest.mark.parametrize("version, allow", [(0, None), (1, True), (1, False)])
async def test_alter_partition_reassignments_replication_factor_change(tmp_path, version, allow):
    """v1 (KIP-1101): AllowReplicationFactorChange false refuses a valid target of another size
    than the partition's replicas with INVALID_REPLICATION_FACTOR (Kafka 4.1's
    validatePartitionReplicationFactorUnchanged); a target of the same size, and v0, pass."""
    node = Node(BrokerConfig(data_dir=tmp_path, brokers=3, kafka_version="4.1"))
    try:
        node.logs.create_topic("t", 2)
        node.cluster.set_replication_factor("t", 2)

        def build(m):
            extra = {} if allow is None else {"allow_replication_factor_change": allow}
            return m.AlterPartitionReassignmentsRequest(timeout=TIMEOUT, topics=(m.ReassignableTopic(name="t", partitions=(
                m.ReassignablePartition(partition_index=0, replicas=(0, 1, 2)),
                m.ReassignablePartition(partition_index=1, replicas=(2, 0)))),), **extra)
        r = await call(node, ALTER_REASSIGN, version, build)
    finally:
        node.close()
    got = [(p.error_code, p.error_message) for p in r.responses[0].partitions]
    grows = (E.invalid_replication_factor, "The replication factor is changed from 2 to 3") if allow is False else (
        E.none, None)
    assert (r.error_code, got) == (E.none, [grows, (E.none, None)])


@pytest.mark.parametrize("named", [None, {"t": [0, 1], "nope": [0]}])
async def test_list_partition_reassignments_is_empty(node, named):
    node.logs.create_topic("t", 2)
    await alter_reassignments(node, {"t": {0: [node.config.node_id]}})

    def build(m):
        topics = None if named is None else tuple(
            m.ListPartitionReassignmentsTopics(name=t, partition_indexes=tuple(ps)) for t, ps in named.items())
        return m.ListPartitionReassignmentsRequest(timeout=TIMEOUT, topics=topics)
    r = await call(node, LIST_REASSIGN, 0, build)
    assert (r.error_code, r.topics) == (E.none, ())
