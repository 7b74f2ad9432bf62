"""Edge cases added after the replays: topic names, Admin listings, filters and validation, and
Spark's connector across cluster changes, restarts and its option checks."""

from __future__ import annotations

from .model import Scenario

SCENARIOS: list[Scenario] = [
    Scenario("consumer.topic_names", "invalid topic names and auto-creation",
             "partitionsFor, subscribe-then-poll and a producer's send of a name Kafka refuses fail with "
             "InvalidTopicException (unsubscribe still works); partitionsFor of an unknown topic creates it.",
             ("java",)),
    Scenario("admin.topic_edge_cases", "CreateTopics, DescribeTopics and DeleteTopics edge cases",
             "CreateTopics' result carries partitions, replication factor (also the broker's defaults) and the "
             "configs with their sources; a 249-character name is created, 250 is InvalidTopicException; a null "
             "config value is refused by CreateTopics and IncrementalAlterConfigs with Kafka's messages; an "
             "existing topic is TopicExistsException even with an impossible replication factor; describeTopics "
             "by id answers UnknownTopicIdException for an unknown id; deleteTopics by id deletes.", ("java",)),
    Scenario("admin.group_listing", "a classic group listed and described",
             "Two static members and a dynamic one of one group, each on its own topic: listConsumerGroups finds it "
             "Stable (also filtered by type CLASSIC and state STABLE, not under EMPTY); describeConsumerGroups shows "
             "three members with their client id, instance ids and partitions, the range assignor and READ, "
             "DELETE, DESCRIBE; an unknown group is DEAD (GroupIdNotFoundException with kafka-clients 4 against "
             "Kafka 4: DescribeGroups v6); removing one static member by instance id leaves two.", ("java",)),
    Scenario("admin.list_transactions", "ListTransactions filters",
             "Three transactional ids (committed, aborted, committed) listed by state, by producer id and by "
             "duration (KIP-994): an open transaction younger than the duration is left out.", ("java",)),
    Scenario("admin.describe_cluster_fenced", "describeCluster with fenced brokers (KIP-1073)",
             "kafka-clients 4 against a simulated three-broker kafka-shim emulating 4.0, one broker down: "
             "describeCluster lists the two up, with includeFencedBrokers the third too, fenced.", ("java",)),
    Scenario("admin.list_transactions_pattern", "listTransactions by transactional id pattern (KIP-1152)",
             "kafka-clients 4 against kafka-shim emulating 4.1: three transactional ids initialized, listed by "
             "a pattern the whole id must match (ListTransactions v2); a pattern that does not compile fails "
             "the call with InvalidRegularExpression.", ("java",)),
    Scenario("admin.reassign_keeping_replication_factor", "alterPartitionReassignments keeping the replication factor",
             "kafka-clients 4 against a simulated three-broker kafka-shim emulating 4.1: with "
             "allowReplicationFactorChange(false) (KIP-1101, AlterPartitionReassignments v1) a target of three "
             "brokers for a partition of two replicas fails with InvalidReplicationFactorException; a target of "
             "two passes.", ("java",)),
    Scenario("admin.incremental_alter_invalid", "IncrementalAlterConfigs validation",
             "Duplicate keys refuse their resource alone (InvalidRequestException), APPEND/SUBTRACT on a "
             "non-LIST config and an out-of-range value are InvalidConfigurationException with Kafka's "
             "messages; appending a present value or subtracting an absent one changes nothing.", ("java",)),
    Scenario("spark.cluster_changes", "Spark readStream across a leader move and a broker down and up",
             "A processingTime streaming read of a two-partition topic on a simulated three-broker kafka-shim "
             "while a partition leader moves and the other partition's leader goes down and comes back: every "
             "record exactly once.", ("spark",)),
    Scenario("spark.offset_readers", "Spark's Admin-based and consumer-based offset readers",
             "With useDeprecatedOffsetFetching=true the driver resolves offsets with a KafkaConsumer in a group "
             "of its own (named by kafka.group.id, or groupIdPrefix-<uuid>..., listed by the coordinator): batch "
             "reads of the transactional layout under both isolation levels and a read_committed stream held at "
             "the LSO by an open transaction, going on when it commits or aborts; startingTimestamp/endingTimestamp "
             "through the consumer's offsetsForTimes.",
             ("spark",)),
    Scenario("spark.topic_changes", "Spark readStream while partitions are added and topics deleted",
             "CreatePartitions under a running query: the new partitions are read from offset 0 (with either "
             "offset reader). A topic "
             "deleted and recreated: between runs on one checkpoint, failOnDataLoss=true fails saying the "
             "offset went back from 2 to 1; under a running subscribePattern "
             "query with failOnDataLoss=false, the recreated topic is read from offset 0.",
             ("spark",)),
    Scenario("spark.late_binding", "Spark batch DataFrame re-run after appends and retention",
             "One batch DataFrame with earliest/latest collected again: it sees records appended since, and "
             "after retention deleted old segments it starts at the new log start offset.",
             ("spark",)),
    Scenario("spark.txn_timeout", "Spark readStream across a transaction the coordinator aborts",
             "A read_committed query is held at the LSO by a transaction its producer leaves open; once "
             "transaction.timeout.ms has passed the coordinator aborts it, the LSO moves past the ABORT marker "
             "and the next batch reads the plain record behind the transaction, never the aborted one.",
             ("spark",)),
    Scenario("spark.broker_restart", "Spark readStream across a broker kill -9 and restart",
             "The broker is killed with SIGKILL and restarted on its data directory and port under a running "
             "read_committed query, with a transaction open: the query carries on, the transaction commits "
             "after the restart, and a query restarted from its checkpoint ends with every committed record "
             "exactly once.",
             ("spark",)),
    Scenario("spark.stream_timestamps", "Spark readStream from startingOffsetsByTimestamp / startingTimestamp",
             "Spark's testFromSpecificTimestamps and testFromGlobalTimestamp: a stream starts at the first offset "
             "stamped at or after each partition's timestamp, runs again from its checkpoint after appends and "
             "reads partitions added by CreatePartitions from offset 0. A starting timestamp no record reaches "
             "(Long.MaxValue too) fails the query unless startingOffsetsByTimestampStrategy=latest; an ending "
             "one reads to latest.",
             ("spark",)),
    Scenario("spark.available_now_checks", "Spark Trigger.AvailableNow with the topic recreated under it",
             "The topic is deleted and recreated with fewer partitions, or fewer records, while an availableNow "
             "query runs: planning the next batch Spark sees the broker's latest offsets short of the end it "
             "fetched at the start and fails with LOST_TOPIC_PARTITIONS_IN_END_OFFSET_WITH_TRIGGER_AVAILABLENOW "
             "or END_OFFSET_HAS_GREATER_OFFSET_FOR_TOPIC_PARTITION_THAN_LATEST_WITH_TRIGGER_AVAILABLENOW.",
             ("spark",)),
    Scenario("spark.record_columns", "Spark's key, value, timestamp and timestampType columns",
             "Null keys and values inside a committed transaction come out as nulls (read_committed stream); a "
             "CreateTime topic gives the producer's timestamp with timestampType 0, a LogAppendTime topic the "
             "broker's append time with timestampType 1.",
             ("spark",)),
]
