"""The requests of tests/test_paced_handlers.py: for each case a builder of n entries (a 2 MiB
request, as compat/fuzz/amplify.py fills one: ``_sized``), the cases' bounds and their faults."""

from __future__ import annotations

import datetime
import functools

from shim.protocol.messages import RequestHeader, encode_request, make, request_class, request_module

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



def _frame(build, n, node):
    key, version, request = build(n, node)
    return key, version, encode_request(RequestHeader(key, version, 1, "c"), request)


def _sized(build, node):
    """As amplify.py fills a request: n entries for REQUEST_BYTES."""
    one, two = len(_frame(build, 1, node)[2]), len(_frame(build, 2, node)[2])
    return _frame(build, REQUEST_BYTES // (two - one), node)
