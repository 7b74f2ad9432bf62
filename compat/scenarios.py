"""The catalogue of compatibility scenarios: what a client does and what it must observe.

Every scenario also holds on Apache Kafka 3.9: run the suites with ``--kafka-bootstrap`` (or
``KAFKA_SHIM_TARGET``) pointing at one to check that a scenario is not testing a shim quirk.

How a test fills a cell of the matrix (``python -m compat.matrix``):

* mark it ``@pytest.mark.compat(client="java", scenario="txn.seed")`` (a module-level
  ``pytestmark = pytest.mark.compat(client=...)`` merges with a test-level ``scenario=``), or
* for tests written without the marker, add a pattern to ``NODE_IDS`` below.

Several tests may fill one cell (e.g. one per isolation level); the cell passes only if all do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CLIENTS: dict[str, str] = {
    "java": "Java kafka-clients 3.9.1 (producer, consumer, Admin)",
    "spark-pattern": "Spark 4.0 Kafka connector's calls, replayed in Java with kafka-clients 3.9.1",
    "spark": "PySpark 4.0 with spark-sql-kafka-0-10",
    "kcat": "kcat 1.7 (librdkafka)",
    "confluent-kafka": "confluent-kafka-python (librdkafka 2.x)",
    "kafka-python": "kafka-python 3.0",
    "aiokafka": "aiokafka 0.14",
}

PY = ("confluent-kafka", "kafka-python", "aiokafka")


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    spec: str
    applies_to: tuple[str, ...]


def _codec(codec: str) -> Scenario:
    return Scenario(
        f"produce_consume.{codec}", f"produce/consume, compression {codec}",
        f"Produce records with compression.type={codec}, keys (one null), headers (repeated keys, null or "
        "empty values) and explicit CreateTime timestamps; an assign() consumer reads them back identical, "
        "in order, at contiguous offsets from 0, and its position ends at the log end.",
        ("java", "kcat", *PY))


SCENARIOS: list[Scenario] = [
    *(_codec(c) for c in ("none", "gzip", "snappy", "lz4", "zstd")),
    Scenario("producer.idempotent_default", "default idempotent producer",
             "The client's default producer (Java: idempotent, acks=all) writes 10 records to each of 2 partitions: "
             "offsets 0..9 on each, read back once each; DescribeProducers shows one producer id per partition "
             "with epoch 0, last sequence 9 and no open transaction.",
             ("java", *PY)),
    Scenario("producer.idempotent_retries", "lost produce responses retried without duplicates",
             "A proxy drops chosen Produce responses after the broker appended the batch; the idempotent producer "
             "retries with the same sequence numbers and the partition ends with exactly N records, each "
             "acknowledged once at its own offset.",
             ("java", *PY)),
    Scenario("broker.kill9_recovery", "kill -9 under an idempotent produce stream",
             "SIGKILL the broker mid-stream, restart it on the same data directory: nothing acknowledged moves "
             "or vanishes and the same producer carries on without duplicates.",
             ("confluent-kafka",)),
    Scenario("txn.seed", "aborted + plain + committed",
             "Txn A writes a-1, a-2 and aborts; a plain producer writes plain-1; txn B writes b-1, b-2 and commits "
             "(offsets a 0-1, ABORT 2, plain 3, b 4-5, COMMIT 6). read_committed sees exactly plain-1, b-1, b-2 "
             "at 3, 4, 5; read_uncommitted sees a-1, a-2, plain-1, b-1, b-2 at 0, 1, 3, 4, 5; both positions "
             "end at 7 and the end offset is 7 under both isolation levels.",
             ("java", "kcat", *PY)),
    Scenario("txn.open_lso_commit", "open txn holds the LSO, then commits",
             "p-0 (0), an open txn's t-1 (1), plain p-2, p-3 (2, 3): read_uncommitted reads all four while "
             "read_committed stops at p-0 with position and end offset 1 (the LSO; ListOffsets latest under "
             "READ_COMMITTED = 1, READ_UNCOMMITTED = 4). After the commit (marker 4) read_committed continues "
             "with t-1, p-2, p-3 and reaches 5.",
             ("java", "kcat", *PY)),
    Scenario("txn.open_lso_abort", "open txn holds the LSO, then aborts",
             "As txn.open_lso_commit, but the transaction aborts: read_committed then skips t-1 and reads p-2, "
             "p-3, reaching position 5.",
             ("java", "kcat", *PY)),
    Scenario("txn.interleaved", "interleaved transactions, small fetches",
             "Two transactions write one record at a time in turn on one partition (30 each, a plain record "
             "after every 10 pairs); one aborts, then the other commits (markers 63, 64). Consumers with "
             "max.partition.fetch.bytes=256, so fetches end inside the transactions: read_committed sees the "
             "committed and plain records in order, read_uncommitted all 63, both reach 65.",
             ("java", *PY)),
    Scenario("txn.zombie_fencing", "zombie fencing",
             "Producer 1 (transactional.id Z) writes zombie-1 in an open txn; producer 2 with the same id "
             "initialises (aborting it), writes fencer-1 and commits. Producer 1's next send and its commit fail "
             "with ProducerFencedException or InvalidProducerEpochException; read_committed sees only fencer-1, "
             "read_uncommitted zombie-1 and fencer-1, never zombie-2.",
             ("java", *PY)),
    Scenario("txn.timeout", "transaction timeout",
             "transaction.timeout.ms=2000, one record sent and left open: the broker aborts the transaction "
             "(ABORT marker at 1, LSO 2, DescribeTransactions CompleteAbort) and fences the producer, whose next "
             "send and commit fail with ProducerFencedException or InvalidProducerEpochException; "
             "read_committed sees nothing and reaches 2.",
             ("java", *PY)),
    Scenario("consumer.position_past_markers", "position advances past markers",
             "A partition holding only two aborted transactions (records 0, 1, 3, markers 2, 4): a read_committed "
             "consumer's polls return no records yet its position reaches 5, also after seeking onto a marker; "
             "read_uncommitted returns 0, 1, 3 and reaches 5.",
             ("java", "kcat", *PY)),
    Scenario("consumer.group_commit", "consumer group commit and resume",
             "A subscribe()d consumer reads 3 records and commitSync()s; committed() and the Admin show offset 3; "
             "a new member of the group reads only the 2 records written afterwards.",
             ("java", *PY)),
    Scenario("consumer.pinned_old_api_version", "a consumer pinned to an old broker version commits offsets",
             "kafka-python with api_version=(0, 8, 2), which commits with OffsetCommit v1 (Kafka 3.9 serves v0-9; "
             "4.0 removed v0-1, KIP-896): an assign() consumer reads 5 records, commits offset 3 with metadata, "
             "and committed() and a new consumer of the group (api_version=(0, 9), OffsetCommit v2) resume from "
             "it.", ("kafka-python",)),
    Scenario("consumer.commit_below_min_isr", "a commit while the group's offsets partition is under its min ISR",
             "On a simulated three-broker kafka-shim with min.insync.replicas=2, the followers of the group's "
             "__consumer_offsets partition go down: the coordinator's acks=all write is refused and commits are "
             "answered COORDINATOR_NOT_AVAILABLE (Java: commitAsync's RetriableCommitFailedException, commitSync "
             "retrying until its timeout; confluent-kafka: the synchronous commit's error); the committed offset "
             "stays, and once the followers are back the same commit succeeds.", ("java", "confluent-kafka")),
    Scenario("consumer.fetch_sessions", "incremental fetch sessions over many partitions",
             "Many partitions (Java 24, kafka-python 12); each round writes a transaction to a few partitions "
             "(every third aborted) and a plain record to another (Java also keeps a second transaction open on "
             "partition 5 over rounds 3-8). After each round a read_committed consumer (Java's with client.rack "
             "set) and a read_uncommitted one, both assigned every partition with max.partition.fetch.bytes=256, "
             "poll up to their end offsets: read_committed returns exactly the committed and plain records of "
             "each partition in order, read_uncommitted all of them. kafka-shim's tests also check that the "
             "consumers' fetches were answered incrementally (KIP-227).",
             ("java", "kafka-python")),
    Scenario("eos.send_offsets", "exactly-once pipeline (subscribe)",
             "consume (read_committed, group member) → transform → produce in a txn with "
             "sendOffsetsToTransaction(offsets, consumer.groupMetadata()): a committed round of 3 records "
             "moves the group offset to 3 and publishes out-in-0..2; an aborted round of 2 leaves the offset at 3 "
             "and nothing visible to read_committed.",
             ("java", *PY)),
    Scenario("eos.send_offsets_assign", "exactly-once pipeline (assign, no membership)",
             "As eos.send_offsets with an assign()ed consumer carrying a group.id (generation -1, no "
             "JoinGroup): TxnOffsetCommit for a group with no members.",
             ("java",)),
    Scenario("consumer.group_rebalance", "three members share six partitions, one leaves, all restart",
             "Three subscribe()d members of one group (kafka-python range, aiokafka roundrobin, confluent-kafka "
             "cooperative-sticky) split a 6-partition topic 2/2/2 and each record reaches the owner of its "
             "partition once; one member leaves and the other two take its partitions (3/3); after all commit "
             "and close, new members resume at the committed offsets and see only later records.",
             PY),
    Scenario("consumer.group_protocol_consumer", "the consumer group protocol (KIP-848): 1 -> 3 -> 1 members",
             "With group.protocol=consumer against Kafka 4.1 emulation, one member owns six partitions, two more "
             "join and the broker's uniform assignor splits them 2/2/2 (each partition at one member at a time), "
             "two leave and the first owns all six again, it subscribes to a second topic and gets its partitions "
             "too; each record reaches the owner of its partition once and, after all close, a new member resumes "
             "at the committed offsets. Running members carry on through a broker restart (clean or kill -9) "
             "with the same member and group epochs; a restart with another broker.rack moves the group epoch "
             "once (KIP-1101: partition racks are in the group's metadata hash).",
             ("confluent-kafka", "java")),
    Scenario("share.groups", "share groups (KIP-932): queues with per-group isolation",
             "Against Kafka 4.1 emulation with share.version=1, three ShareConsumers of one group share a topic "
             "and every record is delivered once; in explicit mode a released record comes back with a higher "
             "delivery count, a rejected one never does and one released every time is delivered five times "
             "(group.share.delivery.count.limit) and archived; a read_committed and a read_uncommitted share group "
             "(share.isolation.level set through IncrementalAlterConfigs on the GROUP) read a topic a "
             "transactional producer commits, aborts and leaves open: the first never sees an aborted or open "
             "record, the second sees them all. The Admin side: a share group's start offsets are listed, altered "
             "and deleted (the next member receives from the altered offset, then from share.auto.offset.reset), "
             "refused while a member is in, and the empty group is deleted; an assigned partition is listed (with no "
             "start offset) before its first fetch; a classic consumer of a share group's "
             "id is refused (INCONSISTENT_GROUP_PROTOCOL).",
             ("confluent-kafka", "java")),
    Scenario("share.durability", "share groups survive kill -9 of the broker mid-consumption",
             "Against Kafka 4.1 emulation, a share consumer in explicit mode accepts and commits records; the "
             "broker is killed (SIGKILL) part-way and restarted on the same data directory; the consumer, still "
             "running, recovers its share session and consumes on. No record whose acknowledgement succeeded is "
             "delivered again and every record is acknowledged in the end; the group keeps its members and epoch. "
             "A partition has share state from its assignment, before any fetch (listed with no start offset), "
             "and keeps it across kill -9; share.auto.offset.reset=latest then applies at the first fetch. A "
             "restart with another broker.rack moves the group epoch once (KIP-1101).",
             ("confluent-kafka", "java")),
    Scenario("telemetry", "client telemetry (KIP-714) against a broker without a telemetry receiver",
             "With enable.metrics.push on (the default of librdkafka 2.5+ and kafka-clients 3.7+), a producer, a "
             "consumer and an Admin work as usual and never send GetTelemetrySubscriptions or PushTelemetry, "
             "which the broker does not advertise; ApiVersions lists neither.",
             ("confluent-kafka", "java")),
    Scenario("share.acknowledgements", "explicit share acknowledgements: accept, release, reject, delivery limit",
             "With share.acknowledgement.mode=explicit a share consumer accepts, releases and rejects records: a "
             "released record comes back with its delivery count one higher, a rejected or accepted one never "
             "does, and a record released every time is delivered group.share.delivery.count.limit times and then "
             "archived.",
             ("java",)),
    Scenario("consumer.group_protocol_migration", "a classic group becomes a consumer group and back",
             "Two classic members (range) split six partitions 3/3; a group.protocol=consumer member joins and "
             "the group becomes a consumer group (ListGroups type consumer) in which the classic members go on "
             "with JoinGroup/SyncGroup while the broker assigns 2/2/2; when it leaves the group is classic again "
             "and the two members are back at 3/3; each record reaches its partition's owner once, commits hold.",
             ("confluent-kafka", "java")),
    Scenario("consumer.group_configs", "KIP-848 GROUP configs: a group's own session timeout and heartbeat",
             "IncrementalAlterConfigs on a GROUP resource sets consumer.session.timeout.ms and "
             "consumer.heartbeat.interval.ms; DescribeConfigs shows the broker's values as DEFAULT_CONFIG and the "
             "group's as GROUP_CONFIG; a value outside group.consumer.min/max.* is INVALID_CONFIG; a killed "
             "group.protocol=consumer member is fenced after the group's session timeout, not the broker's.",
             ("confluent-kafka", "java")),
    Scenario("consumer.group_protocol_static_classic", "a static classic member replaces itself in a consumer group",
             "A classic consumer with group.instance.id joins a consumer group beside a group.protocol=consumer "
             "member; it stops without leaving and a new process with the same instance id takes its place and "
             "its partitions without a rebalance (the group epoch does not move).",
             ("aiokafka", "kafka-python")),
    Scenario("consumer.group_protocol_switch", "a classic member of a consumer group switches to the consumer protocol",
             "Two members join a consumer group with JoinGroup/SyncGroup beside a group.protocol=consumer member; "
             "one sends ConsumerGroupHeartbeat with its member id and epoch and is a consumer-protocol member "
             "from then on (describeConsumerGroups: upgraded; its classic Heartbeat UNKNOWN_MEMBER_ID); the "
             "group stays a consumer group when the other consumer-protocol member leaves, and becomes classic "
             "only when the switched member leaves too.",
             ("java",)),
    Scenario("consumer.static_session_expiry", "a closed static member expires at its session timeout",
             "A classic consumer with group.instance.id closes without LeaveGroup; its group is Empty "
             "session.timeout.ms after its last request (the closing commit), not a second later, and "
             "DeleteGroups deletes it then.",
             ("confluent-kafka",)),
    Scenario("consumer.unstable_offsets", "RequireStable waits for a pending transactional commit",
             "A transaction holds a pending TxnOffsetCommit for the group; a read_committed consumer asking "
             "for its committed offset is answered UNSTABLE_OFFSET_COMMIT and keeps retrying, and gets the "
             "transaction's offset once it commits.",
             ("confluent-kafka", "kafka-python")),
    Scenario("eos.kill_restart", "exactly-once pipeline under SIGKILL",
             "A consume → transform → produce processor (read_committed, transactional producer, offsets sent "
             "to the transaction) is SIGKILLed at random points and restarted, and the broker is SIGKILLed and "
             "restarted on the same port: read_committed, the output holds each input record exactly once. "
             "Java (kafka-clients 4.x) and confluent-kafka also run it as consumer group protocol members "
             "(KIP-848) against Kafka 4.1 emulation.",
             (*PY, "java")),
    Scenario("broker.restart_groups", "group state and offsets survive a broker restart",
             "Members of a stable group keep running while the broker is stopped (cleanly, or with SIGKILL) and "
             "restarted on the same data directory: the group comes back Stable with the same members and "
             "generation, no rebalance happens, committed offsets are unchanged, and consumption continues.",
             ("aiokafka",)),
    Scenario("admin.topics", "create/describe/delete topics",
             "createTopics(3 partitions) succeeds, again fails with TopicExistsException; describeTopics gives 3 "
             "partitions led by the one node, 1 replica, 1 ISR and a topic id; listTopics lists it; "
             "deleteTopics removes another topic.",
             # aiokafka: AIOKafkaAdminClient describes topics with Metadata v5 at most, so all but the topic id.
             ("java", *PY)),
    Scenario("admin.topic_configs", "topic configs: create, describe, alter",
             "createTopics with compression.type=gzip and retention.ms succeeds; a bad value and an unknown name "
             "fail with INVALID_CONFIG; describeConfigs gives the overrides as DYNAMIC_TOPIC_CONFIG and "
             "segment.ms as a default; an incremental SET/DELETE and a legacy AlterConfigs change what is described.",
             ("java", "confluent-kafka", "kafka-python")),
    Scenario("admin.broker_configs", "broker configs: describe, alter",
             "describeConfigs(broker 0) lists listeners, message.max.bytes and the other broker configs, "
             "auto.create.topics.enable read-only; a dynamic log.retention.ms for broker 0 is described as "
             "DYNAMIC_BROKER_CONFIG and removed again; a read-only config is refused with INVALID_REQUEST.",
             ("java", "confluent-kafka", "kafka-python")),
    Scenario("topic.compression_zstd", "topic compression.type=zstd",
             "A topic created with compression.type=zstd stores zstd batches whatever codec the producer used "
             "(none, gzip, lz4, snappy), and every client reads them back.",
             ("java", "kcat", "confluent-kafka", "kafka-python", "aiokafka")),
    Scenario("admin.list_offsets_isolation", "ListOffsets with isolation levels",
             "Offsets 0-1 plain, 2 committed txn, 3 COMMIT, 4 open txn, 5 plain: earliest 0; latest 6 "
             "(READ_UNCOMMITTED) and 4 = LSO (READ_COMMITTED); with record timestamps after the marker's, forTimestamp "
             "finds 1 under both and the record at 5 only under READ_UNCOMMITTED (-1 under READ_COMMITTED); with "
             "records stamped before it, a lookup past record 2 finds the COMMIT marker at 3 under both (markers "
             "count). After the commit latest is 7 under both.",
             # Not aiokafka: AIOKafkaAdminClient has no ListOffsets call (only its consumer looks offsets up,
             # always with the consumer's own isolation level).
             ("java", "confluent-kafka", "kafka-python")),
    Scenario("txn.delete_records_open", "DeleteRecords past the start of an open transaction",
             "Offsets 0-1 plain, 2-3 an open txn, 4 plain: latest is 5, and 2 = LSO under READ_COMMITTED. "
             "DeleteRecords to 3 moves earliest to 3 and the READ_COMMITTED latest with it (the LSO never stays "
             "below the log start offset); to the high watermark (-1) moves both to 5. A read_committed consumer "
             "from the beginning starts at 5, reads p-5 once the txn commits (marker at 6) and ends at 7.",
             ("java",)),
    Scenario("admin.transactions", "DescribeTransactions / ListTransactions / DescribeProducers",
             "An open txn over 2 partitions is listed Ongoing and described with its producer id, epoch, timeout "
             "and both partitions; DescribeProducers gives each partition's first offset of the txn. After the "
             "commit: CompleteCommit, no partitions, no open txn start offset, coordinator epoch known.",
             ("java",)),
    Scenario("admin.abort_hanging", "abortTransaction of a hanging txn",
             "p-0, an open txn's hang-1, p-2 (LSO 1): an AbortTransactionSpec built from DescribeProducers "
             "(producer id, epoch, coordinator epoch) makes the Admin send WriteTxnMarkers; the LSO moves to 4 "
             "and read_committed sees p-0 and p-2 only.",
             ("java",)),
    Scenario("admin.create_partitions", "CreatePartitions",
             "A 2-partition topic: validateOnly to 6 changes nothing; growing to 4 gives 4 partitions; 4 again "
             "and 3 fail with InvalidPartitionsException; an assignment naming another broker fails with "
             "InvalidReplicaAssignmentException and one naming the only broker succeeds; an unknown topic fails "
             "with UnknownTopicOrPartitionException; a new partition takes records from offset 0.",
             ("java", *PY)),
    Scenario("admin.log_dirs", "DescribeLogDirs / AlterReplicaLogDirs",
             "The one broker has one log dir without error, with total and usable bytes; the topic's partitions "
             "are listed with their sizes (0 when empty), offset lag 0, not future. Moving a replica to its own "
             "dir succeeds; to a dir that is not configured fails with LogDirNotFoundException.",
             ("java", "kafka-python")),
    Scenario("admin.internal_topics", "FindCoordinator / Metadata / DescribeConfigs",
             "A group's first FindCoordinator (listing its offsets) and a transactional id's (initTransactions) "
             "leave __consumer_offsets and __transaction_state created as Kafka creates them: listed only when "
             "internal topics are asked for, internal, 50 partitions each, compacted (cleanup.policy=compact as "
             "a topic config), segment.bytes 104857600, compression.type producer for __consumer_offsets and "
             "uncompressed for __transaction_state (topic configs).",
             ("java", "confluent-kafka")),
    Scenario("admin.elect_leaders", "ElectLeaders",
             "Preferred and unclean elections of an existing partition are not needed (ElectionNotNeededException), "
             "of a missing partition UnknownTopicOrPartitionException; an election over all partitions (a null "
             "list) reports none of the topic's (kafka-python sends the list of every partition instead, and "
             "each is not needed).",
             ("java", "confluent-kafka", "kafka-python")),
    Scenario("admin.reassignments", "Alter/ListPartitionReassignments",
             "Reassigning a partition to the only broker succeeds at once; to another broker fails with "
             "InvalidReplicaAssignmentException; cancelling fails with NoReassignmentInProgressException; no "
             "reassignment is ever listed and every partition keeps one replica.",
             ("java", "kafka-python")),
    Scenario("admin.client_quotas", "Describe/AlterClientQuotas",
             "Quotas set on a user, a user+client-id and an ip entity are described back with exact and strict "
             "filters; a fractional byte rate is refused with InvalidRequestException; removed values disappear; "
             "an ip filter combined with a user filter fails with InvalidRequestException.",
             # No Python client in scope has DescribeClientQuotas/AlterClientQuotas calls.
             ("java",)),
    Scenario("admin.describe_topics_paged", "DescribeTopicPartitions paged",
             "describeTopics of a 5- and a 3-partition topic with partitionSizeLimitPerResponse=2 follows the "
             "broker's cursor and describes every partition of both; an unknown topic fails with "
             "UnknownTopicOrPartitionException.",
             ("java", "kafka-python")),
    Scenario("admin.authorized_operations", "authorized operations without an authorizer",
             "Asked for, describeCluster, describeTopics and describeConsumerGroups list every operation Kafka "
             "supports for the resource type (cluster 7, topic 8, group READ/DESCRIBE/DELETE); not asked for, "
             "none (null).",
             ("java",)),
    Scenario("security.acls", "the seed and a group under exactly the ACLs Kafka requires",
             "With StandardAuthorizer, over SASL_SSL with SCRAM-SHA-512, a principal holding WRITE on the topic and "
             "its transactional ids and READ on the topic and its group runs txn.seed (kcat: consumes and produces "
             "it) and reads plain-1, b-1, b-2 read_committed in a consumer group, committing past them; with any "
             "one of those ACLs taken away the client raises Kafka's TRANSACTIONAL_ID_, TOPIC_ or "
             "GROUP_AUTHORIZATION_FAILED.",
             ("java", "kcat", *PY)),
    Scenario("admin.acls", "CreateAcls, DescribeAcls, DeleteAcls",
             "As a super user: a LITERAL ALLOW and a PREFIXED DENY are created, a CLUSTER ACL not named "
             "kafka-cluster is InvalidRequestException, a MATCH filter finds the PREFIXED one for a name under its "
             "prefix, and filters by name delete both.",
             ("java",)),
    Scenario("admin.metadata_quorum", "DescribeQuorum",
             "describeMetadataQuorum of a single combined node: the controller leads with a positive epoch and "
             "high watermark, is the only voter (log end offset at least the high watermark, fetch and catch-up "
             "times; a directory id when formatted --standalone) with one endpoint, and there are no observers.",
             ("java",)),
    Scenario("admin.features", "DescribeFeatures / UpdateFeatures",
             "describeFeatures shows metadata.version 21 (and kraft.version 1 when formatted --standalone) "
             "finalized, metadata.version 1-21 "
             "supported, with an epoch; validateOnly updates: the current metadata.version as an upgrade passes, "
             "a lower one as an upgrade, an unknown feature and a level above the supported range fail with "
             "InvalidUpdateVersionException; nothing changes.",
             ("java",)),
    Scenario("admin.delegation_tokens", "delegation tokens over PLAINTEXT",
             "create, describe, renew and expire delegation tokens over a PLAINTEXT listener fail with "
             "UnsupportedByAuthenticationException (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED).",
             ("java",)),
    Scenario("admin.client_metrics_resources", "ListClientMetricsResources",
             "listClientMetricsResources on a cluster without client-metrics configs lists none (KIP-714; "
             "ListConfigResources v0 since Kafka 4.1).",
             ("java",)),
    Scenario("admin.unregister_broker", "UnregisterBroker",
             "unregisterBroker of an id no broker has fails with BrokerIdNotRegisteredException.",
             ("java",)),
    Scenario("quota.produce_throttle", "a producer_byte_rate quota throttles a producer",
             "With producer_byte_rate=10240 on its client id, a producer sending 1 KiB records one at a time "
             "reports a throttle time (Java: produce-throttle-time-max; librdkafka: the broker's throttle "
             "statistics) after about 100 KiB, Kafka's 10-second window; a producer with another client id is "
             "never throttled.",
             ("java", "confluent-kafka")),
    Scenario("quota.fetch_throttle", "a consumer_byte_rate quota throttles a consumer",
             "With consumer_byte_rate=20480 on its client id (Java: 16384, so that a reader slowed by a busy "
             "machine still crosses it), a consumer reading 200 KiB reports a throttle time "
             "(librdkafka: the broker's throttle statistics; Java: fetch-throttle-time-max) and still reads every "
             "record once, in order: a throttled Fetch is answered empty and the client asks again later.",
             ("java", "confluent-kafka")),
    Scenario("legacy.message_formats", "old protocol versions, message formats 0 and 1",
             "A client pinned to an old broker version (kafka-python api_version 0.8.2, 0.9, 0.10.1: Produce "
             "v0/v1/v2, Fetch v0/v1/v3, ListOffsets v0/v0/v1) writes records with magic 0 or 1 messages, plain "
             "or compressed, and reads them back at offsets 0..n-1 with their keys and values (and, with magic 1, "
             "their timestamps); the end offset is n.",
             ("kafka-python",)),
    Scenario("metadata.list", "metadata listing",
             "The client lists brokers and topics: one broker at the advertised address, the topic with its "
             "partitions and that broker as leader.",
             ("kcat",)),
    Scenario("spark.batch_read", "Spark batch read, both isolation levels",
             "A 3-partition topic holds plain records, an aborted txn (over all partitions), a committed txn and "
             "an open txn followed by a plain record. The driver's describeTopics + listOffsets(earliest, "
             "latest, isolation) and the executors' late binding agree; reading each [earliest, latest) record "
             "by record with invisible gaps skipped and failOnDataLoss=true yields exactly the committed/plain "
             "records before the LSO (read_committed) or every non-marker record (read_uncommitted).",
             ("spark-pattern", "spark")),
    Scenario("spark.offset_probes", "Spark executor fetch at every offset",
             "InternalKafkaConsumer.fetch(offset) (seek, poll, position, seekToBeginning/seekToEnd) at every "
             "offset in [earliest, latest) returns the next visible record or, on a marker/aborted tail, no "
             "record with the position moved past it — never a timeout or out-of-range.",
             ("spark-pattern",)),
    Scenario("spark.micro_batches", "Spark micro-batches across a commit",
             "A first micro-batch reads up to the latest offset (the LSO under read_committed); after the open "
             "transaction commits the next one reads [previous latest, new latest): the txn's record and the "
             "plain record behind it under read_committed, nothing but the marker under read_uncommitted.",
             ("spark-pattern", "spark")),
    Scenario("spark.write", "Spark df.write to Kafka",
             "df.write.format('kafka') appends rows (idempotent producer) behind an open transaction; "
             "read_uncommitted sees them at once, read_committed only after that transaction commits.",
             ("spark",)),
    Scenario("spark.offsets_json", "Spark startingOffsets/endingOffsets as JSON",
             "Per-partition offsets (inside an aborted range, inside a committed one, -2 earliest, -1 latest) "
             "bound a batch read: read_committed yields the committed/plain records in [start, end) with -1 the "
             "LSO, read_uncommitted every non-marker record with -1 the high watermark.",
             ("spark",)),
    Scenario("spark.offsets_by_timestamp", "Spark starting/endingOffsetsByTimestamp",
             "ListOffsets by timestamp gives the first offset stamped at or after it below the fetchable end "
             "(LSO under read_committed, else the high watermark), else none: an ending timestamp matching a "
             "record past the LSO ends read_committed at latest; a starting timestamp past every record fails "
             "the read, or starts at latest with startingOffsetsByTimestampStrategy=latest.",
             ("spark",)),
    Scenario("spark.headers", "Spark includeHeaders",
             "includeHeaders=true gives each record's headers in order, repeated keys, empty and null values "
             "kept; a record without headers has an empty array.",
             ("spark",)),
    Scenario("spark.stream_txn_restart", "Spark readStream under a concurrent transactional producer",
             "A transactional producer commits and aborts over 2 partitions (with plain records between) while "
             "a readStream query (availableNow runs, or a processingTime trigger) writes a parquet sink and is "
             "stopped and restarted from its checkpoint mid-stream: the sink holds every committed and plain "
             "record exactly once and no aborted one under read_committed, every record once under "
             "read_uncommitted.",
             ("spark",)),
    Scenario("spark.rate_limits", "Spark maxOffsetsPerTrigger / minOffsetsPerTrigger",
             "maxOffsetsPerTrigger splits availableNow into batches of that many offsets, markers and aborted "
             "records counted, batches ending on a marker or inside an aborted range yield exactly the visible "
             "records of their range; minOffsetsPerTrigger holds a batch back until that many offsets are "
             "available or maxTriggerDelay has passed.",
             ("spark",)),
    Scenario("spark.data_loss", "Spark failOnDataLoss after DeleteRecords",
             "DeleteRecords moves the log start past the next batch's start under a running query: with "
             "failOnDataLoss=true the query fails with KAFKA_DATA_LOSS, with false it goes on from the new log "
             "start offset and the sink holds the records before the gap and after it.",
             ("spark",)),
    Scenario("spark.subscribe_modes", "Spark assign / subscribe / subscribePattern",
             "assign reads only the partitions named, subscribe several topics, subscribePattern also a matching "
             "topic created while the query runs (from its earliest offset).",
             ("spark",)),
    Scenario("spark.sink", "Spark Kafka sink with key, value, headers, topic and partition columns",
             "df.write and writeStream to format('kafka') write each row to its topic column (or the topic "
             "option) and partition column with its key, value and headers; a real client reads them back.",
             ("spark",)),
    Scenario("spark.sasl_ssl_read_committed", "a batch read over SASL_SSL with SCRAM-SHA-512",
             "kafka.security.protocol=SASL_SSL, kafka.sasl.jaas.config with ScramLoginModule, a PEM truststore: "
             "read_committed reads txn.seed's plain-1, b-1, b-2 at 3, 4, 5; read_uncommitted all five.",
             ("spark",)),
    Scenario("security.sasl_ssl_scram", "SASL_SSL with SCRAM-SHA-512 (compat/test_security.py)",
             "The client's production settings (SASL_SSL, SCRAM-SHA-512, the CA's PEM file, hostname verification) "
             "produce and consume, and run an aborted then a committed transaction read read_committed (Java: "
             "KafkaDriver's produce_consume.none, txn.seed, txn.open_lso_commit and consumer.group_commit, and a "
             "wrong password).",
             (*PY, "java")),
    Scenario("security.sasl_plaintext_plain", "SASL_PLAINTEXT with PLAIN",
             "As security.sasl_ssl_scram, over SASL_PLAINTEXT with PLAIN.", PY),
    Scenario("security.txn_seed", "txn.seed over SASL_SSL with SCRAM-SHA-512",
             "txn.seed's aborted, plain and committed writes (kcat reads what confluent-kafka wrote) over SASL_SSL "
             "with SCRAM-SHA-512: read_committed sees plain-1, b-1, b-2, read_uncommitted all five.",
             (*PY, "kcat")),
    Scenario("security.consumer_group", "a consumer group over SASL_SSL with SCRAM-SHA-512",
             "A member subscribes, reads g-0..g-2 and commits; the next member of the group reads only g-3, g-4.",
             (*PY, "kcat")),
    Scenario("security.wrong_password", "a wrong SASL password",
             "Over SASL_SSL/SCRAM-SHA-512 and SASL_PLAINTEXT/PLAIN, the client reports SASL_AUTHENTICATION_FAILED "
             "with Kafka's message, as it names that error.", (*PY, "kcat")),
    Scenario("security.mutual_tls", "mutual TLS (ssl.client.auth=required)",
             "An SSL listener requiring client certificates: the client with its certificate and key produces and "
             "consumes.", (*PY, "java", "kcat")),
    Scenario("security.oauthbearer", "SASL/OAUTHBEARER (compat/test_oauthbearer.py)",
             "Kafka's unsecured-token validation with a required scope: the client's own token settings produce and "
             "consume (librdkafka's sasl.oauthbearer.config, kafka-python's and aiokafka's token providers, Java's "
             "OAuthBearerLoginModule); tokens signed with a JWKS key (librdkafka's oauth_cb, kafka-python).",
             (*PY, "java")),
    Scenario("security.oauthbearer_refused", "a refused OAUTHBEARER token",
             "An expired, scope-less or signed-when-unsecured token: the client reports SASL_AUTHENTICATION_FAILED with "
             "the error JSON Kafka's OAuthBearerSaslServer sends.", ("confluent-kafka", "kafka-python")),
    Scenario("security.reauthentication", "KIP-368 re-authentication (connections.max.reauth.ms)",
             "With connections.max.reauth.ms=1000 the client re-authenticates on its connection while producing, "
             "and every record arrives.", ("confluent-kafka",)),
    Scenario("compaction.keyed", "log compaction: keyed updates and tombstones (cleanup.policy=compact)",
             "Keyed updates and two tombstones on a compacted topic; after a cleaner round an assign() consumer "
             "reads the latest value of each key at its own offset (the gaps skipped) and the tombstones; after "
             "delete.retention.ms a later round has removed the tombstones.", ("java", "kcat", *PY)),
    Scenario("compaction.transactions", "log compaction of transactions",
             "A transactional producer commits, aborts, commits keyed records; after compaction neither isolation "
             "level sees an aborted record and both see the committed ones; later rounds remove the ABORT marker.",
             ("java", "kcat", *PY)),
    Scenario("compaction.changelog_restore", "a Kafka Streams-like changelog restore",
             "Transactional keyed writes and deletes, some transactions aborted; after compaction a read_committed "
             "restore into a dictionary yields exactly the committed final state.", ("java", *PY)),
    Scenario("spark.compacted", "Spark batch and streaming reads of a compacted topic with gaps",
             "A compacted topic with gaps left by the cleaner (and by aborted transactions): batch and "
             "availableNow streaming reads under both isolation levels, failOnDataLoss true and false, return the "
             "records kept, in offset order, with no data-loss error.", ("spark",)),
    Scenario("cluster.leader_move", "idempotent producer across partition-leader moves (3 brokers)",
             "On a simulated three-broker kafka-shim, an idempotent acks=all producer writes 300 values to one "
             "partition while its leader moves twice; a consumer reads every value once, in order, no gap.",
             ("java", *PY)),
    Scenario("cluster.group_coordinator_move", "consumer group across a coordinator move (3 brokers)",
             "A group member consumes and commits, the group's coordinator moves to another broker, the member "
             "consumes and commits the next records; the committed offset is the log end.", ("java", *PY)),
    Scenario("cluster.parked_join_coordinator_move", "a JoinGroup parked at a moving coordinator (3 brokers)",
             "A second member's JoinGroup waits in a rebalance for the first member when the group's coordinator "
             "moves: the old coordinator answers it NOT_COORDINATOR at once, the member joins the new coordinator "
             "(which knows the group as last written) and both finish the rebalance there with a partition each.",
             ("java", "confluent-kafka", "kafka-python")),
    Scenario("cluster.txn_coordinator_move", "transaction across a coordinator move (3 brokers)",
             "A transactional producer's coordinator moves to another broker half-way through a transaction; the "
             "commit succeeds and a read_committed consumer reads every value once.", ("java", *PY)),
    Scenario("cluster.coordinator_placement", "the group coordinator is where Kafka hashes the group (3 brokers)",
             "DescribeConsumerGroups names as coordinator of a group whose hashCode is negative the leader of the "
             "__consumer_offsets partition Kafka computes, Utils.abs(hashCode) % 50.", ("confluent-kafka",)),
    Scenario("cluster.slow_follower", "consumers stop at the high watermark of a slowed follower (3 brokers)",
             "With a follower slowed, records written by the leader alone stay above the high watermark: a "
             "consumer reads up to it and no further, and reads the rest once the follower catches up.",
             ("java", *PY)),
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

BY_ID = {s.id: s for s in SCENARIOS}

# Tests written without the compat marker, by node id: (regex, client or None, scenario template).
# Named groups fill the template and, when client is None, the group "client" names the client.
NODE_IDS: list[tuple[str, str | None, str]] = [
    (r"compat/test_client_roundtrip\.py::test_client_roundtrip\[(?P<client>kafka-python|aiokafka|confluent-kafka)"
     r"-(?P<codec>none|gzip|snappy|lz4|zstd)\]", None, "produce_consume.{codec}"),
    (r"compat/test_idempotent_retries\.py::test_lost_produce_responses_are_retried_without_duplicates"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka|java)\]", None, "producer.idempotent_retries"),
    (r"compat/test_kill9_recovery\.py::test_kill9_mid_stream_loses_nothing_acknowledged(\[(asyncio|uvloop)\])?",
     "confluent-kafka",
     "broker.kill9_recovery"),
    (r"compat/test_py_group_offsets\.py::test_group_commit_and_resume"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka)\]", None, "consumer.group_commit"),
    (r"compat/test_py_group_offsets\.py::test_send_offsets_to_transaction"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka)\]", None, "eos.send_offsets"),
    (r"compat/test_security\.py::test_(produce_and_consume|transaction_read_committed)"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka)-SASL_SSL-SCRAM-SHA-512\]", None, "security.sasl_ssl_scram"),
    (r"compat/test_security\.py::test_(produce_and_consume|transaction_read_committed)"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka)-SASL_PLAINTEXT-PLAIN\]", None,
     "security.sasl_plaintext_plain"),
    (r"compat/test_security\.py::test_wrong_password_is_sasl_authentication_failed"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka)-.*\]", None, "security.wrong_password"),
    (r"compat/test_security\.py::test_seed_scenario_over_sasl_ssl_scram\[(?P<client>kafka-python|aiokafka|"
     r"confluent-kafka|kcat)\]", None, "security.txn_seed"),
    (r"compat/test_security\.py::test_consumer_group_over_sasl_ssl_scram\[(?P<client>kafka-python|aiokafka|"
     r"confluent-kafka|kcat)\]", None, "security.consumer_group"),
    (r"compat/test_security\.py::test_kcat_wrong_password_is_sasl_authentication_failed", "kcat",
     "security.wrong_password"),
    (r"compat/test_security\.py::test_mutual_tls_names_the_client_by_its_certificate"
     r"\[(?P<client>kafka-python|aiokafka|confluent-kafka|kcat)\]", None, "security.mutual_tls"),
    (r"compat/test_security\.py::test_java_client_over_mutual_tls", "java", "security.mutual_tls"),
    (r"compat/test_security\.py::test_java_client_over_sasl_ssl_scram", "java", "security.sasl_ssl_scram"),
    (r"compat/test_oauthbearer\.py::test_(confluent_kafka_with_sasl_oauthbearer_config|jwks_confluent_kafka_oauth_cb_rs256)",
     "confluent-kafka", "security.oauthbearer"),
    (r"compat/test_oauthbearer\.py::test_(kafka_python_with_a_token_provider_is_named_by_its_sub|jwks_kafka_python_es256)",
     "kafka-python", "security.oauthbearer"),
    (r"compat/test_oauthbearer\.py::test_aiokafka_with_a_token_provider", "aiokafka", "security.oauthbearer"),
    (r"compat/test_oauthbearer\.py::test_java_with_oauthbearer_login_module_unsecured_claims", "java",
     "security.oauthbearer"),
    (r"compat/test_oauthbearer\.py::test_confluent_kafka_without_the_required_scope_gets_insufficient_scope",
     "confluent-kafka", "security.oauthbearer_refused"),
    (r"compat/test_oauthbearer\.py::test_kafka_python_refused_token_reports_kafkas_error_json\[.*\]", "kafka-python",
     "security.oauthbearer_refused"),
    (r"compat/test_security\.py::test_reauthentication_kip368_with_librdkafka", "confluent-kafka",
     "security.reauthentication"),
]


def validate(client: str | None, scenario: str | None, where: str) -> None:
    """Refuses a compat marker naming an unknown client or scenario (a typo would hide a cell)."""
    if client not in CLIENTS:
        raise ValueError(f"{where}: compat marker names unknown client {client!r} (known: {', '.join(CLIENTS)})")
    if scenario not in BY_ID:
        raise ValueError(f"{where}: compat marker names unknown scenario {scenario!r} (see compat/scenarios.py)")


def cell_of_nodeid(nodeid: str) -> tuple[str, str] | None:
    """(client, scenario) for an unmarked test listed in NODE_IDS, else None."""
    for pattern, client, template in NODE_IDS:
        m = re.fullmatch(pattern, nodeid)
        if m:
            groups = m.groupdict()
            return (client or groups["client"]), template.format(**groups)
    return None
