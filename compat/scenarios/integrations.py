"""Spark's Kafka connector, security (SASL, TLS, OAUTHBEARER), log compaction and the simulated cluster."""

from __future__ import annotations

from .model import PY, Scenario

SCENARIOS: list[Scenario] = [
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
    Scenario("cluster.slowed_follower_restart", "a slowed follower back from node_down has caught up (3 brokers)",
             "A follower slowed and then stopped and started again (node_down, node_up through the HTTP control "
             "plane) rejoins the ISR caught up, as a restarted Kafka broker's replica does: a consumer reads every "
             "record acknowledged while it was down (the high watermark does not move back to where it was "
             "slowed) and an acks=all produce with it in the ISR is answered at once.", ("java", *PY)),
]
