"""Replays of Apache Kafka's own client integration tests (compat/test_java_reference*.py and the
modules that run the same replay classes)."""

from __future__ import annotations

from .model import Scenario

SCENARIOS: list[Scenario] = [
    # After Apache Kafka's own client integration tests (TransactionsTest, PlaintextConsumer*Test,
    # PlaintextAdminIntegrationTest, PlaintextProducerSendTest; compat/test_java_reference.py).
    Scenario("txn.fencing_on_commit", "a fenced producer's commitTransaction",
             "Producer 1 writes to two topics in a transaction; producer 2 with the same transactional.id "
             "initialises (aborting it) and writes; producer 1's commitTransaction fails with "
             "ProducerFencedException; producer 2 commits and read_committed sees only its two records.", ("java",)),
    Scenario("txn.fencing_on_send_offsets", "a fenced producer's sendOffsetsToTransaction",
             "As txn.fencing_on_commit, producer 1's sendOffsetsToTransaction fails with ProducerFencedException.",
             ("java",)),
    Scenario("txn.fencing_on_add_partitions", "a fenced producer's next transaction",
             "Producer 1 aborts its transaction, producer 2 fences it; producer 1's next beginTransaction and send "
             "fail with ProducerFencedException (transaction version 1: AddPartitionsToTxn) or "
             "InvalidProducerEpochException (version 2: the Produce the leader verifies).", ("java",)),
    Scenario("txn.fencing_on_expiration", "the next send after the broker aborted a timed-out transaction",
             "transaction.timeout.ms=300, one record sent: the broker aborts the transaction (DescribeTransactions "
             "CompleteAbort); the next send fails with InvalidProducerEpochException to a partition already in "
             "the transaction, ProducerFencedException (version 1) to a new one; read_committed sees nothing.",
             ("java",)),
    Scenario("txn.offset_metadata", "sendOffsetsToTransaction keeps leader epoch and metadata",
             "OffsetAndMetadata(110, leaderEpoch 15, \"some metadata\") sent in a committed transaction is what "
             "the group's committed() answers.", ("java",)),
    Scenario("txn.send_offsets_rounds", "consume-transform-produce rounds, every other one aborted",
             "A group member copies 120 records between 4-partition topics in transactions with "
             "sendOffsetsToTransaction(groupMetadata), aborting every other one and seeking back to the committed "
             "offsets: the output has each record once, all committed, and the group offsets sum to 120.", ("java",)),
    Scenario("txn.send_offsets_group_id", "rounds with sendOffsetsToTransaction(offsets, groupId)",
             "testSendOffsetsWithGroupId: TxnOffsetCommit without generation or member id for an active group is "
             "committed; 120 records copied exactly once (kafka-clients 4 lacks the method).", ("java",)),
    Scenario("txn.basic", "an aborted then a committed transaction on two topics",
             "testBasicTransactions: log starts stay 0; read_committed sees 2 records, read_uncommitted 4.",
             ("java",)),
    Scenario("txn.fencing_on_send", "a fenced producer's next send",
             "testFencingOnSend: ProducerFencedException or InvalidProducerEpochException; only the new producer's "
             "records are committed.", ("java",)),
    Scenario("txn.consecutive_init", "initTransactions twice",
             "testConsecutivelyRunInitTransactions: the client's IllegalStateException.", ("java",)),
    Scenario("txn.undecided_data", "read_committed does not see undecided data",
             "A committed record, then another transaction's open records: read_committed reads only the "
             "committed one, seekToEnd puts it at 1 (the LSO) and offsetsForTimes finds nothing for the open "
             "records' timestamp, which read_uncommitted finds at offset 1.", ("java",)),
    Scenario("txn.delayed_fetch_aborted", "a fetch that waits in the broker still skips aborted records",
             "Interleaved transactions, one aborted: a read_committed consumer with fetch.min.bytes=100000 reads "
             "x=1 at 0 and x=2 at 3 only.", ("java",)),
    Scenario("txn.multiple_markers", "one transaction over 20 partitions",
             "2000 records aborted over 20 partitions of two topics, then 300 committed over 10: read_committed "
             "reads exactly the 300, read_uncommitted all 2300.", ("java",)),
    Scenario("txn.bump_epoch", "a timed-out batch, an abort that bumps the epoch, a commit",
             "On a simulated three-broker kafka-shim, the leader of a one-replica partition goes down: the "
             "transaction's batch for it times out (TimeoutException); once it is back the producer aborts, "
             "its epoch moves on (InitProducerId with its id and epoch, KIP-360, under transaction version 1) "
             "with the same producer id, and its next transaction over three topics commits.", ("java",)),
    Scenario("txn.failure_to_fence_epoch", "a coordinator under its min ISR bumps no epoch",
             "On a simulated three-broker kafka-shim with transaction.state.log.min.isr=2, two brokers go down: "
             "the coordinator's writes are refused (COORDINATOR_NOT_AVAILABLE), a second producer's "
             "initTransactions times out, and once the brokers are back a third producer of the same "
             "transactional id gets the first one's epoch plus one.", ("java",)),
    Scenario("txn.id_expiration", "an expired transactional id (transactional.id.expiration.ms)",
             "TransactionsExpirationTest.testBumpTransactionalEpochAfterInvalidProducerIdMapping: after an aborted "
             "transaction the id expires (DescribeTransactions: TransactionalIdNotFoundException, ListTransactions "
             "leaves it out); the producer's next send fails with InvalidPidMappingException; it aborts and gets a "
             "new producer id (kafka-clients 4: the error is fatal, testFatalErrorAfterInvalidProducerIdMapping, "
             "and a new instance takes the id over, under transaction version 1 and 2), and its next transaction "
             "commits four records.", ("java", "confluent-kafka")),
    Scenario("txn.producer_id_expiration", "a transactional producer's id expires from the partition",
             "TransactionsExpirationTest.testTransactionAfterProducerIdExpires: DescribeProducers stops listing "
             "the producer after producer.id.expiration.ms while the transactional id lives on; a new producer "
             "with the same transactional id gets the same producer id at the next epoch and commits.", ("java",)),
    Scenario("txn.id_expiration_producer_id_remains", "the transactional id expires before the producer id",
             "ProducerIdExpirationTest.testTransactionAfterTransactionIdExpiresButProducerIdRemains: the partition "
             "still lists the producer after its transactional id expired; the next send fails with "
             "InvalidPidMappingException, and after an abort the next transaction commits.", ("java",)),
    Scenario("producer.id_expiration", "an idempotent producer's state expires (producer.id.expiration.ms)",
             "ProducerIdExpirationTest.testProducerIdExpirationWithNoTransactions: DescribeProducers stops listing "
             "the idle producer; its next record (a sequence the broker no longer knows) is acknowledged and the "
             "producer is listed again.", ("java", "kafka-python")),
    Scenario("producer.id_expiration_dynamic", "producer.id.expiration.ms changed at runtime",
             "ProducerIdExpirationTest.testDynamicProducerIdExpirationMs on one broker: IncrementalAlterConfigs of "
             "the cluster default raises the expiration (described at once), then lowers it, and the producer "
             "expires again.", ("java",)),
    Scenario("txn.empty_abort_after_commit", "an empty transaction aborted after a commit",
             "commit, then beginTransaction and abortTransaction with nothing sent: no error, and the next "
             "transaction commits.", ("java",)),
    Scenario("txn.max_in_flight_one", "transactions with max.in.flight.requests.per.connection=1",
             "An aborted then a committed transaction over two topics: read_committed sees the two committed "
             "records only.", ("java",)),
    Scenario("consumer.invalid_offset", "no committed offset, then a seek past the end",
             "auto.offset.reset=none: a group with no committed offset gets NoOffsetForPartitionException; a seek to "
             "the high watermark is in range; one past it gets OffsetOutOfRangeException naming that offset.", ("java",)),
    Scenario("consumer.out_of_range_reset", "out-of-range offsets reset by the policy",
             "A seek past the end goes back to 0 under earliest and to the log end (10) under latest, where the "
             "next records arrive.", ("java",)),
    Scenario("consumer.group_max_size", "group.max.size refuses the member too many",
             "Against a broker with group.max.size=2, two members share a two-partition topic; a third one's poll "
             "fails with GroupMaxSizeReachedException and the two go on consuming.", ("java",)),
    Scenario("consumer.large_records", "fetch sizes (KIP-74)",
             "A record larger than fetch.max.bytes or max.partition.fetch.bytes comes back when it is first; "
             "behind a small record the first poll returns the small one alone.", ("java",)),
    Scenario("consumer.commit_metadata", "commit metadata, its limit, many partitions",
             "commitSync/commitAsync keep leader epoch and metadata (null metadata reads back empty); metadata "
             "over 4096 bytes is OffsetMetadataTooLargeException and changes nothing; committed() of 30 "
             "partitions answers each, null for the one never committed.", ("java",)),
    Scenario("consumer.delete_records", "the consumer after DeleteRecords",
             "After DeleteRecords to 5 seekToBeginning is 5, offsetsForTimes(0) is 5, a seek to 1 resets to 5 "
             "(OffsetOutOfRangeException with auto.offset.reset=none); DeleteRecords past the high watermark is "
             "OffsetOutOfRangeException; to the high watermark leaves beginning = end = 10 and no offset for "
             "timestamp 0.", ("java",)),
    Scenario("producer.record_too_large", "message.max.bytes and max.message.bytes",
             "A record filling the default 1048588-byte message.max.bytes exactly is written, one byte more is "
             "RecordTooLargeException; a topic's max.message.bytes=2048 refuses a 4000-byte record "
             "(MESSAGE_TOO_LARGE) and writes nothing.", ("java",)),
    Scenario("producer.acks0_errors", "acks=0 and a record the broker refuses",
             "An acks=0 producer's record over the topic's max.message.bytes is acknowledged with offset -1; "
             "the broker closes the connection (as Kafka does for an acks=0 Produce with an error) and the "
             "producer's next records arrive over a new one.", ("java",)),
    Scenario("producer.log_append_time", "message.timestamp.type=LogAppendTime",
             "Uncompressed and gzip batches on a LogAppendTime topic: RecordMetadata's timestamp is the broker's, "
             "consumers read that timestamp with type LogAppendTime.", ("java",)),
    Scenario("producer.partition_expansion", "sends before and after CreatePartitions",
             "A send to a partition the topic lacks times out after max.block.ms; once CreatePartitions adds it, "
             "its records start at offset 0 and the old partition's carry on.", ("java",)),
    Scenario("admin.group_admin", "the Admin's calls on a classic group with a member, then empty",
             "With a member: DeleteConsumerGroupOffsets is GroupSubscribedToTopicException (an unknown topic "
             "UnknownTopicOrPartitionException, an unknown group GroupIdNotFoundException), "
             "AlterConsumerGroupOffsets UnknownMemberIdException, removing an unknown instance "
             "UnknownMemberIdException, DeleteGroups GroupNotEmptyException; after removing every member they "
             "succeed.", ("java",)),
    # More of them (compat/test_java_reference_replay.py).
    Scenario("admin.create_partitions_errors", "CreatePartitions' errors and their messages",
             "PlaintextAdminIntegrationTest.testCreatePartitions on one broker, with and without validateOnly: a "
             "decrease, a no-op (with and without assignments), an unknown topic, -22, unregistered, duplicate "
             "and unknown brokers, too few, too many and no assignments each fail with Kafka's exception and "
             "message and change nothing; a mixed request grows one topic; a deleted topic is unknown.", ("java",)),
    Scenario("admin.describe_errors", "describing unknown and invalid topics, documentation",
             "An unknown topic is UnknownTopicOrPartitionException in DescribeTopics and DescribeConfigs, an "
             "invalid name InvalidTopicException (Topic.validate's message); includeDocumentation gives every "
             "entry its documentation, and none without it.", ("java",)),
    Scenario("admin.describe_alter_configs", "DescribeConfigs flags and the legacy AlterConfigs",
             "Overrides are neither default, sensitive nor read-only, defaults are default; AlterConfigs replaces "
             "a topic's overrides (the others go back to their defaults), a resource named twice is described "
             "once, validateOnly changes nothing.", ("java",)),
    Scenario("admin.alter_configs_invalid", "AlterConfigs with an invalid resource beside a valid one",
             "min.cleanable.dirty.ratio=1.1 is InvalidConfigurationException, the broker's zookeeper.connect "
             "InvalidRequestException, the valid topic beside them is altered (not under validateOnly).",
             ("java",)),
    Scenario("admin.incremental_alter_valid", "IncrementalAlterConfigs SET, APPEND, SUBTRACT, DELETE",
             "testValidIncrementalAlterConfigs: APPEND to a default list, SUBTRACT to empty, DELETE back to the "
             "default, validateOnly with and without an invalid value; APPEND to an empty and to a set "
             "leader.replication.throttled.replicas.", ("java",)),
    Scenario("admin.replica_log_dirs", "DescribeLogDirs, DescribeReplicaLogDirs, AlterReplicaLogDirs",
             "AlterReplicaLogDirs before the topic exists is UnknownTopicOrPartitionException; every partition is "
             "listed in a log dir with its sizes, and describeReplicaLogDirs names the same dir.", ("java",)),
    Scenario("admin.reassignment_errors", "reassignment and election errors",
             "Reassigning an unknown topic or partition is UnknownTopicOrPartitionException, to an unknown, "
             "negative or duplicated broker InvalidReplicaAssignmentException; no reassignment is listed for a "
             "quiet or a missing partition; an unclean election of unknown partitions is "
             "UnknownTopicOrPartitionException.", ("java",)),
    Scenario("admin.delete_records_edges", "DeleteRecords below the start, past the end, negative, compacted",
             "testDeleteRecordsWithException and Partition.deleteRecordsOnLeader: 5 moves the log start to 5, "
             "3 leaves it there, 20 (past the high watermark) and -2 are OffsetOutOfRangeException, a compacted "
             "topic PolicyViolationException.", ("java",)),
    Scenario("admin.broker_throttle_configs", "the broker's replication throttles set, changed, deleted",
             "testIncrementalAlterConfigsDeleteAndSetBrokerConfigs and ...DeleteBrokerConfigs: "
             "leader/follower.replication.throttled.rate and replica.alter.log.dirs.io.max.bytes.per.second are "
             "described with the values set, and no longer once deleted.", ("java",)),
    Scenario("admin.describe_producers", "DescribeProducers: idempotent, committed and open transactions",
             "testDescribeProducers: one entry per producer id with epoch 0; a coordinator epoch only once a marker "
             "ended its transaction; the open transaction's first offset (4).", ("java",)),
    Scenario("admin.describe_transactions", "DescribeTransactions through a transaction's states",
             "testDescribeTransactions: TransactionalIdNotFoundException before initTransactions, EMPTY, ONGOING "
             "with its partition, COMPLETE_COMMIT / COMPLETE_ABORT; the coordinator is the leader of the id's "
             "__transaction_state partition.", ("java",)),
    Scenario("admin.abort_transaction", "the Admin aborts an open transaction",
             "testAbortTransaction: abortTransaction with the producer's id, epoch and coordinator epoch writes the "
             "abort marker and read_committed reads past it.", ("java",)),
    Scenario("admin.scram_credentials", "SCRAM users described, altered and refused",
             "testDescribeUserScramCredentials; an unknown user RESOURCE_NOT_FOUND, one asked twice or altered twice "
             "DUPLICATE_RESOURCE, iterations outside 4096-16384 UNACCEPTABLE_CREDENTIAL, with Kafka's messages.",
             ("java",)),
    Scenario("admin.cluster_metadata", "describeCluster and describeTopics by name and id",
             "testListNodes, testDescribeCluster, testDescribeTopicsWithNames/WithIds: every broker's host:port, a "
             "controller among them, the topic id CreateTopics answered, UnknownTopicIdException.", ("java",)),
    Scenario("admin.fence_producers", "fenceProducers before and after a commit",
             "AdminFenceProducersTest: the Admin fences a transactional id; the producer's next send and its commit "
             "fail with ProducerFencedException (InvalidProducerEpochException allowed while the transaction is open).",
             ("java",)),
    Scenario("admin.client_quota_requests", "alterClientQuotas and describeClientQuotas",
             "ClientQuotasRequestTest: set, change, remove, validateOnly, IP quotas with a default, exact and partial "
             "filters, and Kafka's refusals of empty names, unknown keys, fractional byte rates, bad IPs and "
             "invalid entity and filter combinations.", ("java",)),
    Scenario("admin.list_offsets_max_timestamp", "ListOffsets earliest, latest and max timestamp",
             "ListOffsetsIntegrationTest (leader's append path): three records with timestamps 100, 999, 200 in one "
             "batch or three, uncompressed, gzip and on an lz4 topic: max timestamp at offset 1 with leader epoch 0; "
             "under LogAppendTime the first record of one batch, the last of three.", ("java",)),
    Scenario("admin.surface_misc", "internal topics, partition size limit, ACLs without an authorizer",
             "testListTopicsWithOptionListInternal, testDescribeTopicsWithOptionPartitionSizeLimitPerResponse, "
             "testAclOperations (SecurityDisabledException), testLogStartOffsetAfterDeleteRecords, "
             "testDescribeConfigsNonexistentForKraft.", ("java",)),
    Scenario("admin.create_delete_topics", "createTopics with validateOnly, again, and deleteTopics",
             "BaseAdminIntegrationTest.testCreateDeleteTopics: validateOnly answers the shapes and creates nothing, "
             "the topic ids answered are described, creating again fails TopicExistsException on every future.",
             ("java",)),
    Scenario("admin.group_configs", "IncrementalAlterConfigs and DescribeConfigs of a GROUP resource",
             "testIncrementalAlterAndDescribeGroupConfigs (kafka-clients 4, Kafka 4.1): a set value described as "
             "DYNAMIC_GROUP_CONFIG, a deleted one as the broker's default, validateOnly changes nothing, a session "
             "timeout under the broker's minimum is InvalidConfigurationException; a group never made is described "
             "with its defaults.", ("java",)),
    Scenario("admin.list_groups_by_type", "listGroups by type, protocol and state; describeShareGroups",
             "testShareGroups and testConsumerGroups' listings (kafka-clients 4, Kafka 4.1): a classic, a consumer "
             "and a share group listed by every filter, the share group described with its member, an unknown one "
             "DEAD, and the share group described as a consumer group DEAD.", ("java",)),
    Scenario("admin.consumer_protocol_groups", "the Admin's group calls on a consumer-protocol group",
             "testConsumerGroups with group.protocol=consumer (kafka-clients 4, Kafka 4.1): listed as Consumer and "
             "Stable, described with group and assignment epoch 3 and upgraded members, an unknown group "
             "GroupIdNotFoundException, committed offsets, members removed by instance id and all at once, the "
             "group deleted once empty, its offsets altered.", ("java",)),
    Scenario("admin.member_migration", "a classic and a consumer-protocol member in one group",
             "testConsumerGroupWithMemberMigration (kafka-clients 4, Kafka 4.1): the group becomes a consumer group "
             "of two members at group epoch 2, the classic one not upgraded, the other upgraded.", ("java",)),
    Scenario("admin.delete_offsets_consumer_protocol", "deleteConsumerGroupOffsets of a consumer-protocol group",
             "testDeleteConsumerGroupOffsets with group.protocol=consumer (kafka-clients 4, Kafka 4.1): "
             "GroupSubscribedToTopicException while subscribed, GroupIdNotFoundException for an unknown group, "
             "deleted once the member left.", ("java",)),
    Scenario("admin.create_topics_returns_configs", "the configs CreateTopics answers, with their sources",
             "testCreateTopicsReturnsConfigs (kafka-clients 4, Kafka 4.1): defaults, a cluster-wide and a per-broker "
             "dynamic value, static values and their synonyms (log.roll.hours), and the topic's own override, each "
             "with its source.", ("java",)),
    Scenario("admin.client_metrics_configs", "CLIENT_METRICS subscriptions made, refused, described and listed",
             "testListClientMetricsResources and testListConfigResources (kafka-clients 4, Kafka 4.1): a subscription "
             "and a group config listed by listClientMetricsResources and listConfigResources, per type and in all; "
             "ClientMetricsConfigs' refusals with Kafka's messages; the subscription described with its defaults and "
             "gone with its last key.", ("java",)),
    Scenario("consumer.assign_and_commit", "assign() and commits",
             "PlaintextConsumerAssignTest: commits before a position commit nothing, commits after consuming are "
             "what the group's next consumer sees and starts from.", ("java",)),
    Scenario("consumer.rebalance_callbacks", "calls inside the rebalance listener",
             "PlaintextConsumerCallbackTest: assign() refused, the assignment, beginningOffsets and position inside "
             "onPartitionsAssigned/Revoked; a seek and pause there hold.", ("java",)),
    Scenario("consumer.fetch_more", "fetch sizes and an out-of-range reset to latest",
             "PlaintextConsumerFetchTest: reset to the end known at the reset, a record over "
             "max.partition.fetch.bytes whole, a large record after a small one not in the first poll.", ("java",)),
    Scenario("consumer.lag_lead_metrics", "records-lag and records-lead",
             "The per-partition metrics from each Fetch answer: high watermark (last stable offset under "
             "read_committed) minus position, position minus log start; gone once unassigned.", ("java",)),
    Scenario("consumer.basics", "offset reset, partitionsFor, position timeout, pause across a rebalance",
             "PlaintextConsumerTest's testAutoOffsetReset, testPartitionsFor, testPositionRespectsTimeout, "
             "testGroupConsumption, testPauseStateNotPreservedByRebalance.", ("java",)),
    Scenario("consumer.topic_creation", "a consumer's allow.auto.create.topics",
             "ConsumerTopicCreationTest: a subscribed missing topic is created only when the consumer allows it.",
             ("java",)),
    Scenario("producer.compression", "6000 records per codec read back",
             "ProducerCompressionTest: none, gzip, snappy, lz4, zstd; offsets as sent, keys, headers, timestamps.",
             ("java",)),
    Scenario("producer.failure_handling", "a producer's refused sends",
             "ProducerFailureHandlingTest: RecordTooLargeException, a missing partition's TimeoutException, "
             "sends after close, InvalidTopicException for __consumer_offsets.", ("java",)),
    Scenario("producer.send_while_deletion", "a send after the topic was deleted",
             "ProducerSendWhileDeletionTest: the producer's next send succeeds on the topic created again.",
             ("java",)),
    Scenario("admin.elect_preferred", "a preferred election after a failover (simulated cluster)",
             "testElectPreferredLeaders: ElectionNotNeeded while the first replica leads, PreferredLeaderNotAvailable "
             "while it is down, leadership back to it once it is in the ISR again.", ("java",)),
    Scenario("admin.elect_unclean", "unclean elections of a leaderless partition (simulated cluster)",
             "testElectUncleanLeaders*: EligibleLeadersNotAvailable with no live replica, a stale replica elected "
             "and made the ISR, ElectionNotNeeded for a partition with a leader.", ("java",)),
    Scenario("producer.not_enough_replicas", "acks=all below min.insync.replicas (simulated cluster)",
             "ProducerFailureHandlingTest: a record near max.message.bytes written with min.insync.replicas=2; with a "
             "replica down NotEnoughReplicasException; written again once it is back.", ("java",)),
    Scenario("admin.describe_producers_follower", "describeProducers answered by a follower (simulated cluster)",
             "DescribeProducersOptions.brokerId: the follower describes the producer the leader does, a broker "
             "without a replica fails with NotLeaderOrFollowerException; a slowed follower describes the last "
             "sequence it fetched until it catches up.", ("java",)),
    Scenario("consumer.seek", "seekToEnd, seekToBeginning and seek",
             "PlaintextConsumerTest.testSeek on uncompressed and gzip batches: positions 50, 0 and 25 and the "
             "records there.", ("java",)),
    Scenario("consumer.records_and_times", "headers, CreateTime, offsetsForTimes, endOffsets",
             "A header read back; CreateTime timestamps of uncompressed and gzip records; offsetsForTimes finds "
             "offset and timestamp with leader epoch 0; endOffsets after 10000 records.", ("java",)),
    Scenario("consumer.pause_and_poll", "pause/resume, max.poll.records, poll(0)",
             "A paused partition polls nothing until resumed; max.poll.records=2 holds over 10000 records; poll(0) "
             "eventually returns records; with auto.offset.reset=none, NoOffsetForPartitionException.", ("java",)),
    Scenario("consumer.commit_positions", "positions and commits",
             "testPositionAndCommit, testCommitSpecifiedOffsets and testAutoCommitOnClose: committed offsets "
             "per partition, another member resumes there, close commits the sought positions.", ("java",)),
    Scenario("consumer.group_ids", "null and empty group ids",
             "Without group.id commits fail with InvalidGroupIdException and resets are per consumer; the group "
             "\"\" commits like any group (classic protocol).", ("java",)),
    Scenario("consumer.subscriptions", "pattern and list subscriptions",
             "A pattern picks matching topics and one created later, a second pattern replaces the first, a "
             "topic list grows and shrinks, listTopics counts partitions.", ("java",)),
    Scenario("consumer.static_new_partition", "a restarted static member sees a new partition",
             "testStaticConsumerDetectsNewPartitionCreatedAfterRestart with the classic protocol.", ("java",)),
    Scenario("producer.timestamp_bounds", "message.timestamp.{difference,before,after}.max.ms",
             "A record five hours off against a one-hour bound is InvalidTimestampException (uncompressed and "
             "gzip); at or within the bound it is written.", ("java",)),
    Scenario("producer.sends", "offsets, partitions and timestamps of sends",
             "BaseProducerSendTest: offsets and serialized sizes with null keys and values, a given partition, "
             "CreateTime in RecordMetadata, close and flush complete every send, batch.size=0, auto-creation.",
             ("java",)),
    Scenario("consumer.low_fetch_sizes", "fetch.max.bytes=500, max.partition.fetch.bytes=100 over 90 partitions",
             "PlaintextConsumerFetchTest.testLowMaxFetchSizeForRequestAndPartition: every one of 2700 records "
             "arrives, once, with its key, value and timestamp.", ("java",)),
    Scenario("consumer.commits_more", "async commits, a commit after subscribe, auto-commit on rebalance",
             "testAsyncCommit (five callbacks, offset 5), testSubscribeAndCommitSync, testAutoCommitOnRebalance "
             "(the sought positions 300 and 500 committed by the rebalance).", ("java",)),
    Scenario("consumer.log_append_time", "consuming a LogAppendTime topic",
             "testConsumeMessagesWithLogAppendTime: uncompressed and gzip records carry the broker's time.",
             ("java",)),
    Scenario("consumer.close_during_rebalance", "a member closes during a rebalance",
             "ConsumerBounceTest.testCloseDuringRebalance (broker up): a third member's join waits for the two "
             "others; one of them closes and the rebalance completes within 2 s.", ("java",)),
    Scenario("consumer.topic_unavailable", "subscribing before the topic exists",
             "ConsumerBounceTest.testSubscribeWhenTopicUnavailable (up to its restart): the topic created 2 s "
             "later, 1000 records sent arrive exactly.", ("java",)),
    # PlaintextConsumerPollTest's group cases against a broker of their own (compat/test_java_reference_groups.py).
    Scenario("consumer.max_poll_interval", "a member that stops polling past max.poll.interval.ms",
             "testMaxPollIntervalMs: after 3 s without poll (max.poll.interval.ms=1000) the member rejoins: "
             "two assignments, one revocation.", ("java",)),
    Scenario("consumer.slow_revocation", "a revocation callback longer than the session timeout",
             "testMaxPollIntervalMsDelayInRevocation: the callback sleeps 1.5 s (session.timeout.ms=1000) and "
             "its commitSync succeeds.", ("java",)),
    Scenario("consumer.slow_assignment", "an assignment callback longer than the session timeout",
             "testMaxPollIntervalMsDelayInAssignment: the member stays in the group (its commit succeeds, "
             "nothing is revoked).", ("java",)),
    Scenario("consumer.long_poll", "a poll longer than max.poll.interval.ms",
             "testMaxPollIntervalMsShorterThanPollTimeout: poll(2 s) with max.poll.interval.ms=1000 causes no "
             "rebalance.", ("java",)),
    Scenario("consumer.unsubscribe_topic", "subscribe to nothing", "testUnsubscribeTopic with "
             "session.timeout.ms=100: the assignment empties.", ("java",)),
    Scenario("consumer.member_stops_polling", "a member stops polling",
             "testMultiConsumerSessionTimeoutOnStopPolling: of three members one stops polling; the two others "
             "take its partitions.", ("java",)),
    Scenario("consumer.member_closes", "a member closes",
             "testMultiConsumerSessionTimeoutOnClose: of three members one closes; the two others take its "
             "partitions.", ("java",)),
    Scenario("consumer.offsets_compression", "offsets.topic.compression.codec",
             "GroupCoordinatorIntegrationTest: with offsets.topic.compression.codec=1 every batch the group "
             "coordinator writes to __consumer_offsets is gzip; the commit reads back, also after a restart.",
             ("java",)),
]
