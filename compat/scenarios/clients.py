"""The scenarios each client library runs: produce and consume, idempotence, transactions, classic,
consumer and share groups, the Admin calls, quotas, old message formats and metadata."""

from __future__ import annotations

from .model import PY, Scenario

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
             "it. Pinned to (0, 8, 1), committed() asks OffsetFetch v0, which read ZooKeeper: a KRaft Kafka 3.9 "
             "answers UNSUPPORTED_VERSION.", ("kafka-python",)),
    Scenario("admin.pinned_old_api_version", "an admin client pinned to an old broker version",
             "kafka-python's admin client with api_version=(0, 10, 1) creates and deletes a topic with "
             "CreateTopics v0 and DeleteTopics v0; with (0, 10, 2) validate_only=True (CreateTopics v1) creates "
             "nothing; with (0, 11) describe_configs (DescribeConfigs v0) gives a topic's override and default "
             "values, each with is_default false as Kafka 3.9 answers v0 (4.0 removed these versions, KIP-896).",
             ("kafka-python",)),
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
             "(group.share.delivery.count.limit) and archived, while one a consumer closes on without acknowledging "
             "comes back with the delivery count it had, and so do the records a consumer killed with SIGKILL held, "
             "as soon as its connection closes (it is still a member), and a consumer that stops polling for longer "
             "than group.share.session.timeout.ms keeps its share session and the records it holds and "
             "acknowledges them (Kafka 4.1 evicts no idle share session); a read_committed and a "
             "read_uncommitted share group (share.isolation.level set through IncrementalAlterConfigs on the GROUP) read a topic a "
             "transactional producer commits, aborts and leaves open: the first never sees an aborted or open "
             "record, the second sees them all. The Admin side: a share group's start offsets are listed, altered "
             "and deleted (the next member receives from the altered offset, then from share.auto.offset.reset), "
             "refused while a member is in, and the empty group is deleted; an assigned partition is listed (with no "
             "start offset) before its first fetch; a classic consumer of a share group's "
             "id is refused (INCONSISTENT_GROUP_PROTOCOL). Acknowledgements whose share-state write the broker's "
             "disk fails (kafka-shim only) are rolled back and commit_sync reports COORDINATOR_NOT_AVAILABLE for "
             "their partition.",
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
             "archived; a record the consumer closes on without acknowledging comes back with the delivery count "
             "it had (Kafka 4.1, KAFKA-17541).",
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
    Scenario("broker.coordinator_load", "clients started while the coordinators load get through",
             "A broker restarted over a data directory with committed offsets and transactions opens its "
             "listeners before loading its coordinators: a group consumer and a transactional producer started "
             "then are answered COORDINATOR_LOAD_IN_PROGRESS and keep asking, while a plain producer and an "
             "assigned consumer are served; once the load ends the consumer resumes at the loaded committed "
             "offset and the producer commits a transaction a read_committed consumer reads.",
             ("confluent-kafka", "kafka-python", "java")),
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
    Scenario("admin.bootstrap_controllers", "Admin with bootstrap.controllers (KIP-919)",
             "On a combined node's controller listener (controller.listener.names), with an authorizer and the "
             "client a super user: describeCluster gives the voter at its controller address and it as the "
             "controller; describeMetadataQuorum the voter as leader, no observers, its CONTROLLER endpoint; "
             "describeFeatures the finalized levels; a topic ACL created is described; message.max.bytes set on "
             "the broker is described as DYNAMIC_BROKER_CONFIG.",
             ("java",)),
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
]
