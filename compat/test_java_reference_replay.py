"""More of Apache Kafka 3.9's client integration tests, replayed with kafka-clients on one broker:
PlaintextAdminIntegrationTest (CreatePartitions' errors, DescribeConfigs, AlterConfigs and
IncrementalAlterConfigs, log dirs, reassignments, elections, DescribeProducers, DescribeTransactions,
the Admin's abortTransaction, SCRAM users, describeCluster), PlaintextConsumerTest and its split
classes (seek, headers, timestamps, pause, max.poll.records, commits, null and empty group ids,
subscriptions, a static member's new partition, lag and lead metrics), PlaintextConsumerAssignTest,
PlaintextConsumerCallbackTest, BaseProducerSendTest, PlaintextProducerSendTest, ProducerCompressionTest,
ProducerFailureHandlingTest, ProducerSendWhileDeletionTest and ConsumerTopicCreationTest.
compat/java/ReferenceDriver.java runs this module's scenarios in one JVM (AdminReplay.java,
AdminStateReplay.java, ClientReplay.java, ConsumerMoreReplay.java, ProducerReplay.java); each test holds those Kafka tests' assertions. Where the Kafka test needs three
brokers, its brokers become the one broker n, and a broker that does not exist n+1 or n+12."""

from __future__ import annotations

import pytest

from compat.javarun import module_scenarios, observed_of

pytestmark = pytest.mark.compat(client="java")

INVALID_PARTITIONS, INVALID_ASSIGNMENT = "InvalidPartitionsException", "InvalidReplicaAssignmentException"
UNKNOWN = ["UnknownTopicOrPartitionException", "This server does not host this topic-partition."]


# the scenarios that take 4-7 s (most take 1-3 s), started first
LONGEST = ("consumer.basics", "producer.compression", "consumer.group_ids", "consumer.subscriptions",
           "consumer.lag_lead_metrics", "admin.abort_transaction", "consumer.close_during_rebalance")


@pytest.fixture(scope="module")
def prefix(compat_target) -> str:
    return compat_target.prefix + "-jrr"


@pytest.fixture(scope="module")
def observed(request, java_drivers, compat_target, prefix):
    out = java_drivers.run("ReferenceDriver", module_scenarios(request, first=LONGEST), compat_target.bootstrap_servers,
                           timeout=300, prefix=prefix, parallel=6, timeout_s=120)
    return observed_of(out["results"])


# ------------------------------------------------------------------------------------------- Admin

@pytest.mark.compat(scenario="admin.create_partitions_errors")
def test_create_partitions(observed, prefix):
    """PlaintextAdminIntegrationTest.testCreatePartitions (KRaft messages, ReplicationControlManager)."""
    obs = observed("admin.create_partitions_errors")
    t1, t2 = f"{prefix}-cp-topic-1", f"{prefix}-cp-topic-2"
    assert (obs["t1_validate_only"], obs["t1_after_validate_only"], obs["t1_grow"]) == (None, 1, None)
    assert (obs["t2_validate_only"], obs["t2_after_validate_only"], obs["t2_grow"]) == (None, 1, None)
    assert obs["t2_replicas"] == [[0], [0], [0]]  # the assignments given, relative to node n
    n = obs["node"]
    expected = {
        "decrease": [INVALID_PARTITIONS, f"The topic {t1} currently has 3 partition(s); 1 would not be an increase."],
        "noop": [INVALID_PARTITIONS, "Topic already has 3 partition(s)."],
        "noop_same_assignment": [INVALID_PARTITIONS, "Topic already has 3 partition(s)."],
        "unknown_topic": UNKNOWN,
        "negative": [INVALID_PARTITIONS, f"The topic {t1} currently has 3 partition(s); -22 would not be an increase."],
        # Kafka's three brokers give the replica count message; on one, the second replica is unregistered
        "unregistered_second_replica": [INVALID_ASSIGNMENT, f"The manual partition assignment includes broker {n + 1}, "
                                                            "but no such broker is registered."],
        "too_few_assignments": [INVALID_ASSIGNMENT, "Attempted to add 3 additional partition(s), but only 1 "
                                                    "assignment(s) were specified."],
        "too_many_assignments": [INVALID_ASSIGNMENT, "Attempted to add 1 additional partition(s), but only 2 "
                                                     "assignment(s) were specified."],
        "duplicate_brokers": [INVALID_ASSIGNMENT, f"The manual partition assignment includes the broker {n} more than once."],
        "unknown_broker": [INVALID_ASSIGNMENT, f"The manual partition assignment includes broker {n + 12}, but no such "
                                               "broker is registered."],
        "empty_assignments": [INVALID_ASSIGNMENT, "Attempted to add 1 additional partition(s), but only 0 assignment(s) "
                                                  "were specified."],
        "t1_partitions": 3, "t2_partitions": 3,
    }
    assert obs["validate_only"] == expected
    assert obs["for_real"] == expected
    assert obs["mixed"] == [None, [INVALID_PARTITIONS, f"The topic {t2} currently has 3 partition(s); "
                                                       "2 would not be an increase."]]
    assert obs["mixed_t2_partitions"] == 3
    assert obs["deleted"] == UNKNOWN


@pytest.mark.compat(scenario="admin.describe_errors")
def test_describe_errors(observed):
    """testDescribeNonExistingTopic, testDescribeConfigsForTopic, testDescribeConfigsNonexistent (the
    client waits for a broker -1 that never appears), testIncludeDocumentation."""
    obs = observed("admin.describe_errors")
    assert (obs["existing_name"], obs["missing"]) == (True, UNKNOWN)
    assert obs["configs_existing"] is None
    assert obs["configs_unknown"] == UNKNOWN
    # Kafka's ConfigHelper runs Topic.validate before it looks the topic up
    assert obs["configs_invalid"] == ["InvalidTopicException", "Topic name is invalid: '(invalid topic)' contains one "
                                      "or more characters other than ASCII alphanumerics, '.', '_' and '-'"]
    # and so does its controller when the topic's configs are altered (ControllerConfigurationValidator)
    assert obs["alter_invalid"] == [obs["configs_invalid"]] * 2
    # and it validates the new configs before it looks for the topic (ConfigurationControlManager.validateAlterConfig)
    invalid_config = "InvalidConfigurationException"
    assert obs["alter_unknown"] == [
        "UnknownTopicOrPartitionException",
        [invalid_config, "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"],
        [invalid_config, "Can't APPEND to key compression.type because its type is not LIST."]]
    assert obs["configs_broker_minus_one"] == obs["configs_broker_logger_minus_one"] == "TimeoutException"
    with_docs, without_docs = obs["documentation_true"], obs["documentation_false"]
    assert with_docs["entries"] > 0 and with_docs["without"] == []
    assert without_docs["entries"] > 0 and without_docs["with"] == []


@pytest.mark.compat(scenario="admin.describe_alter_configs")
def test_describe_and_alter_configs(observed):
    """testDescribeAndAlterConfigs and checkValidAlterConfigs: the legacy AlterConfigs replaces every
    override of a topic (t1's max.message.bytes and retention.ms go back to their defaults)."""
    obs = observed("admin.describe_alter_configs")
    assert obs["described"] == 3
    assert obs["t1_max_message_bytes"] == ["500000", False, False, False]  # value, default, sensitive, read-only
    assert obs["t1_retention_ms"][0] == "60000000"
    assert obs["t2_max_message_bytes"] == ["1048588", True, False, False]
    assert obs["broker_id"][0] == str(obs["node"])
    assert obs["broker_compression_type"] == ["producer", True, False, False]
    assert obs["alter"] == [None, None]
    assert obs["described_with_duplicate"] == 2
    assert obs["after_alter"] == {"t1": ["1000", "1048588", "604800000"], "t2": ["0.9", "lz4"]}
    assert obs["validate_only"] == [None, None]
    assert obs["after_validate_only"] == ["1048588", "0.9"]


@pytest.mark.compat(scenario="admin.alter_configs_invalid")
def test_invalid_alter_configs(observed):
    """testInvalidAlterConfigs: an out-of-range topic value and a broker key that is not dynamic
    (zookeeper.connect) are refused, the valid resource beside them is altered (not with validateOnly)."""
    obs = observed("admin.alter_configs_invalid")
    errors = ["InvalidConfigurationException", None, "InvalidRequestException"]
    assert obs["for_real"] == obs["validate_only"] == errors
    assert obs["for_real_after"] == obs["validate_only_after"] == ["0.5", "producer", "snappy", "producer"]


@pytest.mark.compat(scenario="admin.incremental_alter_valid")
def test_valid_incremental_alter_configs(observed):
    """testValidIncrementalAlterConfigs, testAppendConfigToEmptyDefaultValue, testAppendConfigToExistentValue."""
    obs = observed("admin.incremental_alter_valid")
    assert obs["first"] == obs["second"] == [None, None]
    assert obs["first_t1"] == ["1000", "compact,delete", "604800000"]
    assert obs["first_t2"] == ["0.9", "lz4", "delete,compact"]
    assert obs["second_t1"] == ["delete", "1000", ""]
    assert obs["second_t2"] == [""]
    assert (obs["validate_only"], obs["validate_only_t1"]) == (None, ["delete"])
    error, message = obs["validate_only_invalid"]
    assert error == "InvalidConfigurationException" and "Invalid value zip for configuration compression.type" in message
    assert (obs["append_to_empty"], obs["append_to_existing"]) == (None, None)
    assert obs["appended"] == [["0:0"], ["1:1,0:0"]]


@pytest.mark.compat(scenario="admin.replica_log_dirs")
def test_log_dirs(observed):
    """testDescribeLogDirs, testDescribeReplicaLogDirs, testAlterReplicaLogDirs before the topic exists."""
    obs = observed("admin.replica_log_dirs")
    assert obs["alter_before_create"] == "UnknownTopicOrPartitionException"
    assert obs["partitions_listed"] == list(range(10))
    assert obs["sizes_present"] is True
    assert (obs["replica_dirs"], obs["replica_dir_mismatches"]) == (10, [])


@pytest.mark.compat(scenario="admin.reassignment_errors")
def test_reassignment_and_election_errors(observed):
    """testInvalidAlterPartitionReassignments, testListReassignmentsDoesNotShowNonReassigningPartitions,
    testListReassignmentsDoesNotShowDeletedPartitions, testElectUncleanLeadersForUnknownPartitions."""
    obs = observed("admin.reassignment_errors")
    assert obs["nonexistent"] == ["UnknownTopicOrPartitionException"] * 2
    assert obs["invalid_replicas"] == [INVALID_ASSIGNMENT] * 3
    assert obs["listed"] == [0, 0]
    assert obs["unclean_unknown"] == ["UnknownTopicOrPartitionException"] * 2


@pytest.mark.compat(scenario="admin.delete_records_edges")
def test_delete_records_edges(observed):
    """testDeleteRecordsWithException, and Partition.deleteRecordsOnLeader's other answers (DeleteRecords
    has no error message: the client's text for each code)."""
    obs = observed("admin.delete_records_edges")
    out_of_range = ["OffsetOutOfRangeException",
                    "The requested offset is not within the range of offsets maintained by the server."]
    assert obs["steps"] == [5, 5, out_of_range, out_of_range]
    assert obs["compacted"] == ["PolicyViolationException", "Request parameters do not satisfy the configured policy."]


@pytest.mark.compat(scenario="admin.broker_throttle_configs")
def test_broker_throttle_configs(observed):
    """testIncrementalAlterConfigsDeleteAndSetBrokerConfigs and testIncrementalAlterConfigsDeleteBrokerConfigs:
    [leader, follower, alter-log-dirs throttle] as described ("" when not described): DynamicConfig.Broker
    keys, whose type KafkaConfig.configType knows, so they are not hidden as sensitive."""
    obs = observed("admin.broker_throttle_configs")
    assert (obs["set"], obs["change"], obs["delete"]) == (None, None, None)
    assert obs["after_set"] == ["123", "456", ""]
    assert obs["after_change"] == ["", "654", "987"]
    assert obs["after_delete"] == ["", "", ""]


@pytest.mark.compat(scenario="admin.describe_producers")
def test_describe_producers(observed):
    """testDescribeProducers: [epoch, coordinator epoch, open transaction's first offset] per producer id.
    Only a producer whose transaction ended in a marker has a coordinator epoch (ProducerStateEntry's
    -1 before); the open transaction starts after 1 record, 2 committed ones and their marker."""
    obs = observed("admin.describe_producers")
    assert obs["idempotent"] == [[0, None, None]]
    assert obs["committed_read"] == 3
    assert obs["after_commit"] == [[0, None, None], [0, 0, None]]
    assert obs["ongoing"] == [[0, None, None], [0, 0, None], [0, None, 4]]


@pytest.mark.compat(scenario="admin.describe_transactions")
def test_describe_transactions(observed, prefix):
    """testDescribeTransactions, committed and aborted: TransactionalIdNotFoundException before
    initTransactions, EMPTY until a partition is added, then ONGOING with it; [state, coordinator is
    the leader of the id's __transaction_state partition, producer id known to the partition, epoch,
    partitions]."""
    obs = observed("admin.describe_transactions")
    tp = f"{prefix}-describe-txn-0"
    for outcome, done in (("commit", "COMPLETE_COMMIT"), ("abort", "COMPLETE_ABORT")):
        assert obs[outcome] == ["TransactionalIdNotFoundException", "EMPTY", ["EMPTY", True, True, 0, []],
                                ["ONGOING", True, True, 0, [tp]], [done, True, True, 0, []]], outcome


@pytest.mark.compat(scenario="admin.abort_transaction")
def test_abort_transaction(observed):
    """testAbortTransaction: the Admin's WriteTxnMarkers(abort) with the producer's id, epoch and
    coordinator epoch ends the open transaction, so a read_committed consumer reads past it to the
    plain record behind; an abort of a producer no longer in a transaction writes a marker too."""
    obs = observed("admin.abort_transaction")
    assert (obs["after_commit"], obs["while_open"], obs["abort"], obs["after_abort"]) == (1, 1, None, 2)
    assert obs["end"] == 5  # k1, its marker, k2, the plain record, the Admin's marker
    assert obs["abort_again"] is None


@pytest.mark.compat(scenario="admin.scram_credentials")
def test_scram_credentials(observed):
    """testDescribeUserScramCredentials, then ScramImage.describe's and ScramControlManager.alterCredentials'
    refusals: an unknown user is left out of all() (RESOURCE_NOT_FOUND counts as described), a user
    asked twice is DUPLICATE_RESOURCE, iterations outside 4096-16384 UNACCEPTABLE_CREDENTIAL, a user
    altered twice in one request DUPLICATE_RESOURCE (a deletion of nothing is refused first)."""
    obs = observed("admin.scram_credentials")
    sha256, sha512 = ["SCRAM_SHA_256", 4096], ["SCRAM_SHA_512", 8192]
    assert (obs["add"], obs["add_two"], obs["alter"], obs["delete"]) == (None, None, None, None)
    assert obs["one"] == {"tom": [sha256]}
    assert obs["all"] == {"tom": [sha256, sha512], "tom2": [sha256], "tom3": [sha256]}
    assert obs["tom2"] == {"tom2": [sha256]}
    nobody = obs["missing"][1]
    assert obs["missing"][0] is True and obs["missing"][2] is None
    assert nobody[0] == "ResourceNotFoundException"
    assert nobody[1].startswith("Attempt to describe a user credential that does not exist: ") and nobody[1].endswith("nobody")
    assert obs["twice"][0] == "DuplicateResourceException"
    assert obs["twice"][1].startswith("Cannot describe SCRAM credentials for the same user twice in a single request: ")
    not_found = ["ResourceNotFoundException", "Attempt to delete a user credential that does not exist"]
    assert obs["refused"] == {
        "dup": not_found, "ghost": not_found,
        "few": ["UnacceptableCredentialException", "Too few iterations"],
        "many": ["UnacceptableCredentialException", "Too many iterations"],
        "tom2": ["DuplicateResourceException", "A user credential cannot be altered twice in the same request"]}
    assert obs["after_delete"] == {"tom": [sha512], "tom2": [sha256], "tom3": [sha256]}


@pytest.mark.compat(scenario="admin.cluster_metadata")
def test_cluster_metadata(observed, compat_target):
    """testListNodes, testDescribeCluster (the controller a KRaft cluster names is one of its brokers),
    testDescribeTopicsWithNames and testDescribeTopicsWithIds (the id CreateTopics answered)."""
    obs = observed("admin.cluster_metadata")
    assert obs["nodes"] == sorted(compat_target.bootstrap_servers.split(","))
    assert obs["controller_is_a_broker"] is True and obs["cluster_id"]
    assert obs["id_by_name"] is True
    assert obs["by_ids"] == ["UnknownTopicIdException", "found"]


# ---------------------------------------------------------------------------------------- consumer

@pytest.mark.compat(scenario="consumer.seek")
def test_seek(observed):
    """PlaintextConsumerTest.testSeek, uncompressed and gzip batches: [position after seekToEnd, records
    polled there, position after seekToBeginning, the next record, position after seek(25), the next record]."""
    obs = observed("consumer.seek")
    for codec in ("plain", "gzip"):
        assert obs[codec] == [50, 0, 0, [0, "key 0", "value 0", 0, "CreateTime"],
                              25, [25, "key 25", "value 25", 25, "CreateTime"]], codec


@pytest.mark.compat(scenario="consumer.records_and_times")
def test_headers_timestamps_and_offsets(observed):
    """testHeaders, testConsumeMessagesWithCreateTime, testFetchOffsetsForTime, testEndOffsets."""
    obs = observed("consumer.records_and_times")
    assert obs["header"] == "headerValue"
    assert obs["create_time_plain"] is True and obs["create_time_gzip"] is True
    assert obs["negative_time"]["chain"] == ["java.lang.IllegalArgumentException"]
    # [offset, timestamp found (relative to the first record's), leader epoch]: a new topic's epoch is 0
    assert obs["offsets_for_times"] == [[0, 0, 0], [20, 20, 0]]
    assert obs["end_offsets"] == 10000


@pytest.mark.compat(scenario="consumer.pause_and_poll")
def test_pause_and_poll(observed):
    """testPartitionPauseAndResume; PlaintextConsumerPollTest's testMaxPollRecords,
    testPollEventuallyReturnsRecordsWithZeroTimeout and testNoOffsetForPartitionExceptionOnPollZero."""
    obs = observed("consumer.pause_and_poll")
    assert (obs["before_pause"], obs["paused_poll"], obs["after_resume"]) == (True, 0, True)
    assert obs["max_poll_records"] == [True, 2]
    assert obs["poll_zero_first"] == 10
    assert obs["poll_zero_no_offset"] == "NoOffsetForPartitionException"


@pytest.mark.compat(scenario="consumer.commit_positions")
def test_positions_and_commits(observed):
    """PlaintextConsumerCommitTest's testPositionAndCommit, testCommitSpecifiedOffsets, testAutoCommitOnClose."""
    obs = observed("consumer.commit_positions")
    assert obs["unassigned_committed"] is None
    assert obs["unassigned_position"]["chain"] == ["java.lang.IllegalStateException"]
    assert obs["position_and_commit"] == [0, 0, True, 5, 5]
    assert obs["other_member_next"] == [5, "key 0", "value 0", 5, "CreateTime"]
    assert obs["specified"] == [[3, None], True, [3, 5], "null", [3, 7]]
    assert obs["auto_commit_on_close"] == [300, 500]


@pytest.mark.compat(scenario="consumer.group_ids")
def test_null_and_empty_group_ids(observed):
    """testConsumingWithNullGroupId, testConsumingWithEmptyGroupId: the group "" commits like any group
    (the second consumer starts at the first one's committed offset 1)."""
    obs = observed("consumer.group_ids")
    invalid = "org.apache.kafka.common.errors.InvalidGroupIdException"
    assert obs["null_commit"]["chain"] == obs["null_committed"]["chain"] == [invalid]
    assert obs["null_counts"] == [3, 0, 2]
    assert obs["empty_group"] == [[1, 0], None, [1, 1], None]


@pytest.mark.compat(scenario="consumer.subscriptions")
def test_subscriptions(observed):
    """PlaintextConsumerSubscriptionTest's testPatternSubscription, testPatternUnsubscription,
    testSubsequentPatternSubscription, testExpandingTopicSubscriptions, testShrinkingTopicSubscriptions;
    PlaintextConsumerTest.testListTopics."""
    obs = observed("consumer.subscriptions")

    def parts(*topics):
        return sorted(f"{t}-{p}" for t in topics for p in (0, 1))
    assert obs["pattern"] == parts("tblablac", "topic")
    assert obs["pattern_new_topic"] == parts("tblablac", "topic", "tsomec")
    assert obs["pattern_unsubscribed"] == 0
    assert obs["subsequent_first"] == parts("foo", "topic")
    assert obs["subsequent_second"] == parts("bar", "foo")
    assert obs["expanding_first"] == obs["shrinking"] == parts("topic")
    assert obs["expanding_second"] == parts("other", "topic")
    assert obs["list_topics"] == {"tblab1": 2, "tblablac": 2, "tblablak": 2, "topic": 2, "tsomec": 2}


@pytest.mark.compat(scenario="consumer.static_new_partition")
def test_static_member_detects_new_partition(observed):
    """testStaticConsumerDetectsNewPartitionCreatedAfterRestart (classic protocol)."""
    obs = observed("consumer.static_new_partition")
    assert obs == {"first": ["static-foo-0"], "restarted": ["static-foo-0"],
                   "grown": ["static-foo-0", "static-foo-1"]}


@pytest.mark.compat(scenario="consumer.assign_and_commit")
def test_assign_and_commit(observed):
    """PlaintextConsumerAssignTest, every case: a commit before any position commits nothing (async and
    sync), commits after consuming, a second consumer of the group sees them, a committed offset 10
    is where the next member of the group starts."""
    obs = observed("consumer.assign_and_commit")
    assert obs["commit_async_not_committed"] == ["ok", None, True]
    assert obs["commit_sync_not_committed"] == [None, True]
    assert obs["commit_sync_all_consumed"] == [True, 10000]
    assert obs["assign_and_consume"] == obs["skipping_position"] == [True, 10]
    assert obs["fetch_committed"] == [True, 100, 100]
    assert obs["committed_twice"] == [100, 100]
    assert (obs["commit_ten"], obs["consume_from_committed"]) == (10, [10, True])


@pytest.mark.compat(scenario="consumer.rebalance_callbacks")
def test_rebalance_callbacks(observed):
    """PlaintextConsumerCallbackTest: inside onPartitionsAssigned and onPartitionsRevoked, assign() is
    refused, the assignment holds the partition, beginningOffsets and position answer 0; a seek and
    pause there hold until resumed, then the records from offset 100 come."""
    obs = observed("consumer.rebalance_callbacks")
    refused = ["IllegalStateException", "Subscription to topics, partitions and pattern are mutually exclusive"]
    for when in ("assigned", "revoked"):
        assert obs[f"assign_on_{when}"] == refused
        assert obs[f"assignment_on_{when}"] is True
        assert obs[f"beginning_offsets_on_{when}"] == 0
    assert obs["position_on_assigned"] == 0
    assert obs["seek_and_pause"] == [True, True]


@pytest.mark.compat(scenario="consumer.fetch_more")
def test_fetch_more(observed):
    """PlaintextConsumerFetchTest: testFetchOutOfRangeOffsetResetConfigLatest (reset to the end known
    before the next records: 10), testFetchRecordLargerThanMaxPartitionFetchBytes (KIP-74: the record
    comes whole), testFetchHonoursFetchSizeIfLargeRecordNotFirst and ...MaxPartitionFetchBytes... (the
    first poll has the small record alone)."""
    obs = observed("consumer.fetch_more")
    assert obs["out_of_range_latest"] == [True, 0, 10, 10]
    assert obs["larger_than_max_partition_fetch_bytes"] == [1, 0, "key", 10 * 1024 + 1]
    assert obs["fetch_size_large_not_first"] == obs["partition_fetch_bytes_large_not_first"] == [1, 0, "small", "value"]


@pytest.mark.compat(scenario="consumer.lag_lead_metrics")
def test_lag_and_lead_metrics(observed):
    """PlaintextConsumerTest's per-partition lag and lead metrics, which the client derives from each
    Fetch answer: lag = high watermark - position, lead = position - log start offset (after
    DeleteRecords to 50 too), both gone once the partition is no longer assigned; under read_committed
    the lag is measured to the last stable offset (an open transaction at offset 10: lag 0)."""
    obs = observed("consumer.lag_lead_metrics")
    polled = obs["assign"][0]
    assert obs["assign"] == [polled, 1000.0 - polled, float(polled)]
    assert obs["lead_after_delete_records"] == [True, True]
    assert obs["assign_moved"] == obs["subscribe_moved"] == [None, None]
    assigned, polled = obs["subscribe"][:2]
    assert obs["subscribe"] == [1, polled, 1000.0 - 50 - polled, float(polled)]  # from the log start, 50
    assert obs["read_committed"] == [10, 10, 0.0, 10.0]


@pytest.mark.compat(scenario="consumer.basics")
def test_consumer_basics(observed):
    """PlaintextConsumerTest's testAutoOffsetReset, testPartitionsFor, testPositionRespectsTimeout,
    testGroupConsumption and testPauseStateNotPreservedByRebalance."""
    obs = observed("consumer.basics")
    assert (obs["auto_offset_reset"], obs["partitions_for"], obs["group_consumption"]) == (True, 2, 0)
    assert obs["position_timeout"][0] == "TimeoutException"
    assert obs["pause_not_preserved"] == [True, 0, True, True]


# ---------------------------------------------------------------------------------------- producer

@pytest.mark.compat(scenario="producer.timestamp_bounds")
def test_timestamp_bounds(observed):
    """PlaintextProducerSendTest: testSendWithInvalidBeforeAndAfterTimestamp (a bound of one hour, a
    record five hours off: InvalidTimestampException, uncompressed and gzip),
    testValidBeforeAndAfterTimestampsAtThreshold and ...WithinThreshold (those sends succeed)."""
    obs = observed("producer.timestamp_bounds")
    refused = "org.apache.kafka.common.errors.InvalidTimestampException"
    for config in ("message.timestamp.difference.max.ms", "message.timestamp.before.max.ms",
                   "message.timestamp.after.max.ms"):
        assert obs[config] == {"invalid": [refused, refused], "at_threshold": [None, None],
                               "within": [None, None]}, config


@pytest.mark.compat(scenario="producer.sends")
def test_sends(observed):
    """BaseProducerSendTest: testSendOffset ([offset, partition, serialized key and value sizes], then
    the offset after 100 more), testSendToPartition, testSendCompressedMessageWithCreateTime and
    ...NonCompressed... (each RecordMetadata carries its record's timestamp), testClose, testFlush,
    testBatchSizeZero; PlaintextProducerSendTest.testAutoCreateTopic."""
    obs = observed("producer.sends")
    assert obs["send_offset"] == [[0, 0, 3, 5], [1, 0, 3, -1], [2, 0, -1, 5], [3, 0, 3, 5], 104]
    assert obs["to_partition_acks"] is True and obs["to_partition_read"] == [100, True]
    assert obs["create_time_none"] == obs["create_time_gzip"] == [100]
    assert obs["close"] == [True, 100]
    assert obs["flush"] == [True, True]
    assert obs["batch_size_zero"] == [100]
    assert obs["auto_create"] == 0


@pytest.mark.compat(scenario="consumer.low_fetch_sizes")
def test_low_fetch_sizes(observed):
    """PlaintextConsumerFetchTest.testLowMaxFetchSizeForRequestAndPartition."""
    obs = observed("consumer.low_fetch_sizes")
    assert obs == {"assigned": True, "received": 2700, "expected": 2700, "same_records": True}


@pytest.mark.compat(scenario="consumer.commits_more")
def test_more_commits(observed):
    """PlaintextConsumerCommitTest's testAsyncCommit ([successes, last error, committed]),
    testSubscribeAndCommitSync and testAutoCommitOnRebalance."""
    obs = observed("consumer.commits_more")
    assert obs["async"] == [5, None, 5]
    assert (obs["subscribe_assigned"], obs["subscribe_commit_sync"]) == (True, None)
    assert obs["rebalanced"] is True
    assert obs["auto_commit_on_rebalance"] == [300, 500]


@pytest.mark.compat(scenario="consumer.log_append_time")
def test_consume_log_append_time(observed):
    """PlaintextConsumerTest.testConsumeMessagesWithLogAppendTime."""
    assert observed("consumer.log_append_time") == {"plain": True, "gzip": True}


@pytest.mark.compat(scenario="consumer.close_during_rebalance")
def test_close_during_rebalance(observed):
    """ConsumerBounceTest.testCloseDuringRebalance with the broker up: the closing member sends
    LeaveGroup, so the rebalance waiting for it completes within the Kafka test's 2 s."""
    obs = observed("consumer.close_during_rebalance")
    assert (obs["first"], obs["second"], obs["third_blocked"]) == (True, True, True)
    assert obs["third_done"] is True


@pytest.mark.compat(scenario="consumer.topic_unavailable")
def test_subscribe_when_topic_unavailable(observed):
    """ConsumerBounceTest.testSubscribeWhenTopicUnavailable up to its broker restart."""
    obs = observed("consumer.topic_unavailable")
    assert (obs["unacked"], obs["received"]) == (0, 1000)


@pytest.mark.compat(scenario="producer.compression")
def test_producer_compression(observed):
    """ProducerCompressionTest.testCompression for none, gzip, snappy, lz4 and zstd: 6000 records
    (no key; a key; a key and a header) at offsets 0..5999, read back as sent: no mismatch."""
    obs = observed("producer.compression")
    assert obs == {codec: [] for codec in ("none", "gzip", "snappy", "lz4", "zstd")}


@pytest.mark.compat(scenario="producer.failure_handling")
def test_producer_failure_handling(observed):
    """ProducerFailureHandlingTest: testTooLargeRecordWithAckOne (over the topic's max.message.bytes),
    testInvalidPartition (the client's TimeoutException), testSendAfterClosed and
    testCannotSendToInternalTopic (Kafka: ReplicaManager refuses appends to internal topics)."""
    obs = observed("producer.failure_handling")
    assert obs["too_large_acks1"] == "RecordTooLargeException"
    assert obs["invalid_partition"] == "TimeoutException"
    assert obs["sends"] == [None, None, None]
    assert obs["internal_offsets"] == "InvalidTopicException"
    closed = {"chain": ["java.lang.IllegalStateException"], "message": "Cannot perform operation after producer has been closed"}
    assert obs["after_close"] == [closed] * 3


@pytest.mark.compat(scenario="producer.send_while_deletion")
def test_send_while_deletion(observed):
    """ProducerSendWhileDeletionTest.testSendWithTopicDeletionMidWay on one broker: the producer's send
    after the topic was deleted succeeds on the topic its Metadata request creates again."""
    assert observed("producer.send_while_deletion") == {"before": True, "deleted": True, "after": None,
                                                         "recreated": True}


@pytest.mark.compat(scenario="consumer.topic_creation")
def test_consumer_topic_creation(observed):
    """ConsumerTopicCreationTest with auto.create.topics.enable=true: the missing subscribed topic is
    created with allow.auto.create.topics=true only (Metadata's AllowAutoTopicCreation)."""
    assert observed("consumer.topic_creation") == {"created": [True, False]}
