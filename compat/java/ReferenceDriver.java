import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Scenarios after Apache Kafka's own client integration tests, which say what a real broker must
 * do for the Java client: transactions ({@link TxnReference}, {@link TxnReplay}), the consumer and producer
 * ({@link ClientReference}), the Admin's group and config calls ({@link AdminReference}) and
 * the expiration of transactional and producer ids ({@link ExpirationReference}), more of the Admin's
 * ({@link AdminReplay}, {@link AdminStateReplay}, {@link AdminSurfaceReplay}, {@link ElectionReplay}), consumer's and producer's ({@link ClientReplay}, {@link ConsumerReplay},
 * {@link ConsumerMoreReplay}, {@link ProducerReplay}, {@link GroupReplay}) tests, and producers
 * and consumers refused by ACLs ({@link AuthzReference}, {@link AuthzConsumerReplay}, {@link AuthzAdminReplay}, which
 * compat/test_java_authz_reference.py runs).
 * compat/test_java_reference.py runs them in one JVM and holds the expectations.
 */
public final class ReferenceDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("txn.fencing_on_commit", (s, obs) -> TxnReference.fencing(s, obs, "commit"));
        all.put("txn.fencing_on_send_offsets", (s, obs) -> TxnReference.fencing(s, obs, "send_offsets"));
        all.put("txn.fencing_on_add_partitions", (s, obs) -> TxnReference.fencing(s, obs, "begin_send"));
        all.put("txn.fencing_on_expiration", TxnReference::fencingOnExpiration);
        all.put("txn.offset_metadata", TxnReference::offsetMetadata);
        all.put("txn.send_offsets_rounds", TxnReference::sendOffsetsRounds);
        all.put("txn.send_offsets_group_id", (s, obs) -> TxnReference.sendOffsetsRounds(s, obs, true));
        all.put("txn.basic", TxnReplay::basic);
        all.put("txn.fencing_on_send", TxnReplay::fencingOnSend);
        all.put("txn.consecutive_init", TxnReplay::consecutiveInit);
        all.put("txn.undecided_data", TxnReference::undecidedData);
        all.put("txn.delayed_fetch_aborted", TxnReference::delayedFetchAborted);
        all.put("txn.multiple_markers", TxnReference::multipleMarkers);
        all.put("txn.bump_epoch", TxnReference::bumpEpoch);
        all.put("txn.failure_to_fence_epoch", TxnReference::failureToFenceEpoch);
        all.put("txn.empty_abort_after_commit", TxnReference::emptyAbortAfterCommit);
        all.put("txn.max_in_flight_one", TxnReference::maxInFlightOne);
        all.put("txn.id_expiration", ExpirationReference::bumpAfterInvalidMapping);
        all.put("txn.producer_id_expiration", ExpirationReference::afterProducerIdExpires);
        all.put("txn.id_expiration_producer_id_remains", ExpirationReference::transactionalIdExpiresFirst);
        all.put("producer.id_expiration", ExpirationReference::idempotentExpires);
        all.put("producer.id_expiration_dynamic", ExpirationReference::dynamicExpiration);
        all.put("consumer.invalid_offset", ClientReference::invalidOffset);
        all.put("consumer.out_of_range_reset", ClientReference::outOfRangeReset);
        all.put("consumer.topic_names", ClientReference::topicNames);
        all.put("consumer.group_max_size", ClientReference::groupMaxSize);
        all.put("consumer.large_records", ClientReference::largeRecords);
        all.put("consumer.commit_metadata", ClientReference::commitMetadata);
        all.put("consumer.delete_records", ClientReference::deleteRecords);
        all.put("producer.record_too_large", ClientReference::recordTooLarge);
        all.put("producer.acks0_errors", ClientReference::acksZeroErrors);
        all.put("producer.log_append_time", ClientReference::logAppendTime);
        all.put("producer.partition_expansion", ClientReference::partitionExpansion);
        all.put("admin.group_admin", AdminReference::groupAdmin);
        all.put("admin.incremental_alter_invalid", AdminReference::incrementalAlterInvalid);
        all.put("admin.group_listing", AdminReference::groupListing);
        all.put("admin.list_transactions", AdminReference::listTransactions);
        all.put("admin.topic_edge_cases", AdminReference::topicEdgeCases);
        all.put("admin.create_partitions_errors", AdminReplay::createPartitionsErrors);
        all.put("admin.describe_errors", AdminReplay::describeErrors);
        all.put("admin.describe_alter_configs", AdminReplay::describeAndAlterConfigs);
        all.put("admin.alter_configs_invalid", AdminReplay::invalidAlterConfigs);
        all.put("admin.incremental_alter_valid", AdminReplay::incrementalAlterValid);
        all.put("admin.replica_log_dirs", AdminReplay::logDirs);
        all.put("admin.reassignment_errors", AdminReplay::reassignmentErrors);
        all.put("admin.delete_records_edges", AdminReplay::deleteRecordsEdges);
        all.put("admin.broker_throttle_configs", AdminReplay::brokerThrottleConfigs);
        all.put("admin.describe_producers", AdminStateReplay::describeProducers);
        all.put("admin.describe_transactions", AdminStateReplay::describeTransactions);
        all.put("admin.abort_transaction", AdminStateReplay::abortTransaction);
        all.put("admin.scram_credentials", AdminStateReplay::scramCredentials);
        all.put("admin.cluster_metadata", AdminStateReplay::clusterMetadata);
        all.put("admin.fence_producers", AdminSurfaceReplay::fenceProducers);
        all.put("admin.client_quota_requests", AdminSurfaceReplay::clientQuotas);
        all.put("admin.list_offsets_max_timestamp", AdminSurfaceReplay::listOffsets);
        all.put("admin.surface_misc", AdminSurfaceReplay::misc);
        all.put("admin.create_delete_topics", AdminSurfaceReplay::createDeleteTopics);
        all.put("producer.compression", ProducerReplay::compressions);
        all.put("producer.failure_handling", ProducerReplay::failureHandling);
        all.put("producer.send_while_deletion", ProducerReplay::sendWhileDeletion);
        all.put("consumer.topic_creation", ProducerReplay::consumerTopicCreation);
        all.put("consumer.assign_and_commit", ConsumerMoreReplay::assignAndCommit);
        all.put("consumer.rebalance_callbacks", ConsumerMoreReplay::callbacks);
        all.put("consumer.fetch_more", ConsumerMoreReplay::fetchMore);
        all.put("consumer.lag_lead_metrics", ConsumerMoreReplay::lagAndLead);
        all.put("consumer.basics", ConsumerMoreReplay::basics);
        all.put("admin.elect_preferred", ElectionReplay::preferred);
        all.put("admin.elect_unclean", ElectionReplay::unclean);
        all.put("producer.not_enough_replicas", ElectionReplay::notEnoughReplicas);
        all.put("admin.describe_producers_follower", FollowerReplay::describeProducers);
        all.put("consumer.seek", ClientReplay::seek);
        all.put("consumer.records_and_times", ClientReplay::recordsAndTimes);
        all.put("consumer.pause_and_poll", ClientReplay::pauseAndPoll);
        all.put("consumer.commit_positions", ClientReplay::commits);
        all.put("consumer.group_ids", ClientReplay::groupIds);
        all.put("consumer.subscriptions", ClientReplay::subscriptions);
        all.put("consumer.static_new_partition", ClientReplay::staticNewPartition);
        all.put("producer.timestamp_bounds", ClientReplay::timestampBounds);
        all.put("producer.sends", ClientReplay::sends);
        all.put("consumer.low_fetch_sizes", ConsumerReplay::lowFetchSizes);
        all.put("consumer.commits_more", ConsumerReplay::commits);
        all.put("consumer.log_append_time", ConsumerReplay::logAppendTime);
        all.put("consumer.close_during_rebalance", ConsumerReplay::closeDuringRebalance);
        all.put("consumer.topic_unavailable", ConsumerReplay::topicUnavailable);
        all.put("consumer.max_poll_interval", GroupReplay::maxPollInterval);
        all.put("consumer.slow_revocation", GroupReplay::delayInRevocation);
        all.put("consumer.slow_assignment", GroupReplay::delayInAssignment);
        all.put("consumer.long_poll", GroupReplay::pollTimeoutOverInterval);
        all.put("consumer.unsubscribe_topic", GroupReplay::unsubscribeTopic);
        all.put("consumer.member_stops_polling", (s, obs) -> GroupReplay.sessionTimeout(s, obs, false));
        all.put("consumer.member_closes", (s, obs) -> GroupReplay.sessionTimeout(s, obs, true));
        all.put("consumer.offsets_compression", GroupReplay::offsetsCompression);
        all.put("authz.idempotent_no_idempotent_write", AuthzReference::idempotentWithoutIdempotentWrite);
        all.put("authz.idempotent_loses_write", AuthzReference::idempotentLosesWrite);
        all.put("authz.txn_no_topic_write", AuthzReference::txnWithoutTopicWrite);
        all.put("authz.txn_commit_no_topic_write", AuthzReference::txnCommitWithoutTopicWrite);
        all.put("authz.txn_loses_topic_write", AuthzReference::txnLosesTopicWrite);
        all.put("authz.consume", AuthzConsumerReplay::consume);
        all.put("authz.commit_and_offset_fetch", AuthzConsumerReplay::commitAndFetch);
        all.put("authz.group_admin", AuthzAdminReplay::groups);
        all.put("authz.topic_admin", AuthzAdminReplay::topics);
        all.put("authz.authorized_operations", AuthzAdminReplay::authorizedOperations);
        Support.main("ReferenceDriver", all, args);
    }
}
