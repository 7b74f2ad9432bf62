"""Scenarios after Apache Kafka's own client integration tests (TransactionsTest,
TransactionsWithMaxInFlightOneTest, PlaintextConsumerFetchTest, PlaintextConsumerCommitTest,
PlaintextAdminIntegrationTest, PlaintextProducerSendTest, BaseProducerSendTest): what a real broker
must do for the Java client, on one broker. compat/java/ReferenceDriver.java runs them in one JVM;
each test holds a scenario's expectations, which are those tests' assertions (and, where a test
leaves an answer open, Apache Kafka's source).

The transaction scenarios' errors depend on the transaction version: kafka-clients 3.9 (or a
broker that does not finalize version 2) against kafka-clients 4.x on Kafka 4.x emulation, which
``test_transaction_version_2_fencing`` runs too."""

from __future__ import annotations

import pytest

import shim
from compat.javarun import module_scenarios, observed_of

pytestmark = pytest.mark.compat(client="java")

E = "org.apache.kafka.common.errors."
FENCED, EPOCH = E + "ProducerFencedException", E + "InvalidProducerEpochException"
CONCURRENT = E + "ConcurrentTransactionsException"
OWN_BROKER = {"consumer.group_max_size", "txn.bump_epoch", "txn.failure_to_fence_epoch",
              "admin.describe_cluster_fenced", "admin.list_transactions_pattern",
              "admin.reassign_keeping_replication_factor"}  # own brokers (and drivers), below


@pytest.fixture(scope="module")
def java_results(request, java_drivers, compat_target):
    wanted = [n for n in module_scenarios(request) if n not in OWN_BROKER]
    out = java_drivers.run("ReferenceDriver", wanted, compat_target.bootstrap_servers,
                           timeout=300, prefix=compat_target.prefix + "-jr", parallel=6, timeout_s=90)
    return out["results"]


@pytest.fixture(scope="module")
def tv2(request, compat_target) -> bool:
    """kafka-clients 4.x against a broker that finalizes transaction.version 2 (Kafka 4.x)."""
    from compat.plugin import java_client
    from compat.targets import finalized_features

    return (java_client(request.config) == "4"
            and finalized_features(compat_target.bootstrap_servers).get("transaction.version", 0) >= 2)


@pytest.fixture
def observed(java_results):
    return observed_of(java_results)


def error(failure) -> str | None:
    """The exception a step failed with, past the ExecutionException of a send's future."""
    if failure is None:
        return None
    chain = [c for c in failure["chain"] if c != "java.util.concurrent.ExecutionException"]
    return chain[0]


COMMITTED_PAIR = ["4/committed", "4/committed"]


# ---------------------------------------------------------------------------------------------- fencing

def check_fencing(obs, step: str, tv2: bool):
    if step == "add_partitions":
        # TransactionsTest (3.9): ProducerFencedException from the client's AddPartitionsToTxn;
        # TransactionsTestHelper (4.x, version 2): InvalidProducerEpochException from the Produce
        assert error(obs["error"]) == (EPOCH if tv2 else FENCED), obs["error"]
    else:
        assert error(obs["error"]) == FENCED, obs["error"]
    assert obs["read_committed"] == COMMITTED_PAIR
    assert obs["read_uncommitted"] == ["1/aborted", "3/aborted", *COMMITTED_PAIR]


def each(values, scenario: str):
    """Parameters that each fill their own matrix cell: scenario.format(value)."""
    return [pytest.param(v, id=v, marks=pytest.mark.compat(scenario=scenario.format(v))) for v in values]


@pytest.mark.parametrize("step", each(["commit", "send_offsets", "add_partitions"], "txn.fencing_on_{}"))
def test_fencing(observed, tv2, step):
    check_fencing(observed(f"txn.fencing_on_{step}"), step, tv2)


def check_expiration(obs, new_partition: bool, tv2: bool):
    assert (obs["first_offset"], obs["aborted_by_broker"]) == (0, True)
    if tv2:  # TransactionsTestHelper.testFencingOnTransactionExpiration
        assert error(obs["error"]) in {EPOCH, CONCURRENT}, obs["error"]
    else:
        # TransactionsTest (3.9) expects ProducerFencedException: the client's AddPartitionsToTxn for a new
        # partition meets the epoch the abort bumped. A partition already in the transaction gets the
        # Produce's answer, INVALID_PRODUCER_EPOCH (Kafka: AddPartitionsToTxnManager turns the verification's
        # PRODUCER_FENCED into it; ProducerAppendInfo.checkProducerEpoch answers it too).
        assert error(obs["error"]) == (FENCED if new_partition else EPOCH), obs["error"]
    assert obs["read_committed"] == []
    assert obs["read_uncommitted"] == ["1/aborted"]


@pytest.mark.compat(scenario="txn.fencing_on_expiration")
@pytest.mark.parametrize("next_partition", ["same_partition", "new_partition"])
def test_fencing_on_expiration(observed, tv2, next_partition):
    check_expiration(observed("txn.fencing_on_expiration")[next_partition], next_partition == "new_partition", tv2)


# ------------------------------------------------------------------------------- transactions, offsets

@pytest.mark.compat(scenario="txn.offset_metadata")
def test_offset_metadata_in_send_offsets_to_transaction(observed):
    assert observed("txn.offset_metadata")["committed"] == {"offset": 110, "leader_epoch": 15,
                                                            "metadata": "some metadata"}


@pytest.mark.compat(scenario="txn.send_offsets_rounds")
def test_send_offsets_with_group_metadata_rounds(observed):
    obs = observed("txn.send_offsets_rounds")
    assert obs["processed"] == 120
    assert obs["transactions"]["aborted"] >= 1 and obs["transactions"]["committed"] >= 1, obs["transactions"]
    assert (obs["out_count"], obs["out_distinct"], obs["out_not_committed"]) == (120, 120, 0)
    assert obs["group_offsets_sum"] == 120


@pytest.mark.compat(scenario="txn.send_offsets_group_id")
def test_send_offsets_with_group_id(observed, request):
    """testSendOffsetsWithGroupId: the rounds above through sendOffsetsToTransaction(offsets, groupId),
    whose TxnOffsetCommit has no generation or member id, for a group its consumer is an active member
    of: Kafka's coordinator validates neither then, so every round's offsets are committed with it.
    kafka-clients 4 removed that method."""
    from compat.plugin import java_client

    obs = observed("txn.send_offsets_group_id")
    if java_client(request.config) == "4":
        assert obs == {"absent": True}
        return
    test_send_offsets_with_group_metadata_rounds(lambda name: obs)


@pytest.mark.compat(scenario="txn.basic")
def test_basic_transactions(observed):
    """testBasicTransactions: an aborted then a committed transaction over topic1-1 and topic2-2; the
    log start offsets stay 0; read_committed reads the committed two, read_uncommitted all four."""
    obs = observed("txn.basic")
    assert obs["log_starts"] == [[0, 0]] * 3
    assert obs["read_committed"] == ["1/committed", "3/committed"]
    assert obs["read_uncommitted"] == ["1/committed", "2/aborted", "3/committed", "4/aborted"]


@pytest.mark.compat(scenario="txn.fencing_on_send")
def test_fencing_on_send(observed):
    """testFencingOnSend: the fenced producer's send to a partition of its transaction fails with
    ProducerFencedException or, from the leader's Produce answer, InvalidProducerEpochException (both
    are what Kafka's test accepts); read_committed sees only the new producer's committed records."""
    obs = observed("txn.fencing_on_send")
    assert obs["fenced_send"]["chain"][-1] in (FENCED, EPOCH), obs["fenced_send"]
    assert obs["read_committed"] == ["4/committed", "4/committed"]


@pytest.mark.compat(scenario="txn.consecutive_init")
def test_consecutive_init_transactions(observed):
    """testConsecutivelyRunInitTransactions: the second initTransactions() is refused by the client."""
    assert observed("txn.consecutive_init")["second_init"]["chain"] == ["java.lang.IllegalStateException"]


# ------------------------------------------------------------------------- read_committed and the LSO

@pytest.mark.compat(scenario="txn.undecided_data")
def test_read_committed_does_not_see_undecided_data(observed):
    obs = observed("txn.undecided_data")
    # read_uncommitted finds the open records' timestamp at offset 1, with that timestamp
    assert obs["ru_offsets_for_times"] == [[1, 0], [1, 0]]
    assert obs["rc_seen"] == ["x=1@0", "x=1@0"]
    assert obs["rc_positions_after_seek_to_end"] == [1, 1]
    assert obs["rc_offsets_for_times"] == [None, None]


@pytest.mark.compat(scenario="txn.delayed_fetch_aborted")
def test_delayed_fetch_includes_aborted_transaction(observed):
    obs = observed("txn.delayed_fetch_aborted")
    assert obs["read_committed"] == ["x=1@0", "x=2@3"]
    assert obs["position"] == 6


@pytest.mark.compat(scenario="txn.multiple_markers")
def test_multiple_markers(observed):
    obs = observed("txn.multiple_markers")
    assert (obs["rc_count"], obs["rc_not_committed"], obs["ru_count"]) == (300, 0, 2300)


@pytest.mark.compat(scenario="txn.empty_abort_after_commit")
def test_empty_abort_after_commit(observed):
    obs = observed("txn.empty_abort_after_commit")
    assert (obs["abort_error"], obs["next_error"]) == (None, None)
    assert obs["read_committed"] == ["4/committed", "5/committed"]


@pytest.mark.compat(scenario="txn.max_in_flight_one")
def test_transactions_with_max_in_flight_one(observed):
    obs = observed("txn.max_in_flight_one")
    assert obs["read_committed"] == ["1/committed", "3/committed"]
    assert obs["read_uncommitted"] == ["1/committed", "2/aborted", "3/committed", "4/aborted"]


# ---------------------------------------------------------------------------------------- consumer

@pytest.mark.compat(scenario="consumer.invalid_offset")
def test_fetch_invalid_offset(observed):
    obs = observed("consumer.invalid_offset")
    assert error(obs["no_offset"]) == "org.apache.kafka.clients.consumer.NoOffsetForPartitionException"
    assert (obs["at_end"], obs["position_at_end"]) == (None, 2)
    assert error(obs["out_of_range"]) == "org.apache.kafka.clients.consumer.OffsetOutOfRangeException"
    assert obs["out_of_range_partitions"] == {obs["topic_partition"]: 3}


@pytest.mark.compat(scenario="consumer.out_of_range_reset")
def test_fetch_out_of_range_offset_reset(observed):
    obs = observed("consumer.out_of_range_reset")
    assert obs["earliest_next"] == 0
    assert (obs["latest_reset_to"], obs["latest_next"]) == (10, 10)


@pytest.mark.compat(scenario="consumer.large_records")
def test_fetch_sizes(observed):
    obs = observed("consumer.large_records")
    for setting in ("fetch_max_bytes", "max_partition_fetch_bytes"):
        assert obs[f"{setting}_alone"] == [[0, "key", 10241]]
        assert obs[f"{setting}_behind"] == [[0, "small", 5]]


@pytest.mark.compat(scenario="consumer.commit_metadata")
def test_commit_metadata(observed):
    obs = observed("consumer.commit_metadata")
    assert obs["sync"] == {"offset": 5, "leader_epoch": 15, "metadata": "foo"}
    assert obs["async_error"] is None
    assert obs["async"] == {"offset": 10, "leader_epoch": -1, "metadata": "bar"}
    assert obs["null_metadata"] == {"offset": 5, "leader_epoch": -1, "metadata": ""}
    assert error(obs["too_large"]) == E + "OffsetMetadataTooLarge"
    assert obs["after_too_large"] == obs["null_metadata"]
    assert obs["at_limit"] is None
    assert obs["many_keys"] == 30
    assert obs["many"] == [None] + [f"{10 * p}:p{p}" for p in range(1, 30)]


@pytest.mark.compat(scenario="consumer.delete_records")
def test_consumer_after_delete_records(observed):
    obs = observed("consumer.delete_records")
    assert (obs["position_start"], obs["ts0_before"]) == (0, 0)
    assert (obs["low_watermark_5"], obs["position_after_5"], obs["ts0_after_5"]) == (5, 5, 5)
    assert obs["read_from_1"] == [5, 6, 7, 8, 9]
    assert error(obs["none_from_1"]) == "org.apache.kafka.clients.consumer.OffsetOutOfRangeException"
    assert obs["position_7"] == 7
    assert error(obs["beyond_hw"]) == E + "OffsetOutOfRangeException"
    assert (obs["low_watermark_hw"], obs["position_after_hw"], obs["ts0_after_hw"]) == (10, 10, None)
    assert obs["beginning_end"] == [10, 10]


@pytest.mark.compat(scenario="consumer.topic_names")
def test_invalid_topic_names_and_auto_creation(observed):
    obs = observed("consumer.topic_names")
    invalid = E + "InvalidTopicException"
    assert error(obs["partitions_for_invalid"]) == error(obs["poll_invalid"]) == error(obs["send_invalid"]) == invalid
    assert obs["unsubscribe"] is None
    assert obs["auto_created"] is True


# ---------------------------------------------------------------------------------------- producer

@pytest.mark.compat(scenario="producer.record_too_large")
def test_record_too_large(observed):
    obs = observed("producer.record_too_large")
    assert obs["fits"] == [0, 1048588 - 99]
    assert error(obs["one_more"]) == E + "RecordTooLargeException"
    assert error(obs["topic_limit"]) == E + "RecordTooLargeException"
    # Kafka answers MESSAGE_TOO_LARGE without a message of its own: the client's text for the code
    assert obs["topic_limit"]["message"].endswith(
        "The request included a message larger than the max message size the server will accept.")
    assert obs["topic_small_offset"] == 0


@pytest.mark.compat(scenario="producer.acks0_errors")
def test_too_large_record_with_acks_zero(observed):
    obs = observed("producer.acks0_errors")
    assert obs["too_large"] == [False, -1]
    assert obs["connection_closed"] is True  # Kafka closes an acks=0 producer's connection on an error
    assert obs["read"] == ["small-0", "small-1", "small-2"]


@pytest.mark.compat(scenario="producer.log_append_time")
def test_log_append_time(observed):
    obs = observed("producer.log_append_time")
    assert obs["read"] == [["LogAppendTime", True]] * 6
    assert obs["within_send_window"] is True


@pytest.mark.compat(scenario="producer.partition_expansion")
def test_send_before_and_after_partition_expansion(observed):
    obs = observed("producer.partition_expansion")
    assert obs["p0_first"] == [0, 1, 2, 3, 4]
    assert error(obs["p1_missing"]) == E + "TimeoutException"
    assert obs["p1_after"] == [0, 1, 2, 3, 4]
    assert obs["p0_after"] == [5, 6, 7, 8, 9]


# ------------------------------------------------------------------------------------------- Admin

@pytest.mark.compat(scenario="admin.group_admin")
def test_group_admin_calls(observed):
    obs = observed("admin.group_admin")
    unknown_tp, unknown_member, not_found = ("UnknownTopicOrPartitionException", "UnknownMemberIdException",
                                             "GroupIdNotFoundException")
    # all() fails with the first partition's error: the group's topic, then the unknown one
    assert obs["active_delete_offsets"] == ["GroupSubscribedToTopicException", "GroupSubscribedToTopicException",
                                            unknown_tp]
    assert obs["fake_delete_offsets"] == [not_found] * 3
    assert obs["active_alter"] == [unknown_member, unknown_member]  # Kafka: ClassicGroup.validateOffsetCommit
    assert obs["remove_unknown"] == [unknown_member, unknown_member]
    assert obs["delete_active"] == ["GroupNotEmptyException", not_found]
    assert (obs["remove_all"], obs["members_after"]) == (None, 0)
    assert obs["empty_delete_offsets"] == [unknown_tp, None, unknown_tp]
    assert obs["offsets_after_delete"] == []
    assert (obs["empty_alter"], obs["altered_offset"]) == ([None, None], 0)
    assert (obs["delete_empty"], obs["groups_after"]) == (None, 0)


@pytest.mark.compat(scenario="admin.topic_edge_cases")
def test_topic_edge_cases(observed):
    obs = observed("admin.topic_edge_cases")
    assert obs["created"] == {"foo": [2, 1], "bar": [3, 1], "baz": [1, 1]}  # baz: the broker's defaults
    assert obs["config_cleanup.policy"] == ["delete", "DEFAULT_CONFIG", False, False]
    assert obs["config_index.interval.bytes"] == ["9999999", "DYNAMIC_TOPIC_CONFIG", False, False]
    assert obs["name_lengths"] == [249, 250]
    assert obs["long_names"] == [None, "InvalidTopicException"]
    assert obs["create_null_config"] == ["InvalidConfigurationException",
                                         "Null value not supported for topic configs: retention.bytes"]
    assert obs["alter_null_config"] == ["InvalidRequestException", "Null value not supported for : retention.bytes"]
    assert obs["after_null_config"] == {"o": ["producer", "-1"]}  # the refused request changed nothing
    # Kafka's controller finds the topic exists before it looks at the replication factor
    assert obs["exists_validate_only"] == "TopicExistsException"
    assert obs["describe_by_id"] == [True, "UnknownTopicIdException"]
    assert (obs["delete_by_id"], obs["deleted_gone"]) == (None, True)


@pytest.fixture(scope="module")
def describe_groups_v6(request, compat_target) -> bool:
    """kafka-clients 4.x against a broker serving DescribeGroups v6 (Kafka 4.x, KIP-1043)."""
    from compat.plugin import java_client
    from compat.targets import max_api_version

    return java_client(request.config) == "4" and max_api_version(compat_target.bootstrap_servers, 15) >= 6


@pytest.mark.compat(scenario="admin.group_listing")
def test_consumer_group_listing_and_description(observed, describe_groups_v6):
    obs = observed("admin.group_listing")
    assert (obs["all_assigned"], obs["listed_stable"]) == (True, True)
    assert (obs["listed_classic_stable"], obs["listed_empty"]) == (["Stable"], [])
    d = obs["described"]
    topic = d["assignment"][0].rsplit("-", 2)[0]
    assert d["assignment"] == [f"{topic}-{t}-{p}" for t in range(3) for p in range(2)]
    assert (d["simple"], d["state"], d["members"], d["assignor"]) == (False, "STABLE", 3, "range")
    assert len(d["clients"]) == 1 and d["clients"][0].endswith("-listing-client")
    assert [i.rsplit("-", 1)[1] for i in d["statics"]] == ["1", "2"]
    group_operations = ["READ", "DELETE", "DESCRIBE"]  # Kafka: AclEntry.supportedOperations(GROUP)
    assert d["operations"] == group_operations
    if describe_groups_v6:  # Kafka 4's PlaintextAdminIntegrationTest.testConsumerGroups
        error, message = obs["fake"]["error"]
        assert error == "GroupIdNotFoundException" and message.endswith("-listing-fake not found."), obs["fake"]
    else:
        assert obs["fake"] == {"state": "DEAD", "members": 0, "assignor": "", "operations": group_operations}
    assert (obs["remove_static"], obs["members_after"]) == (None, 2)


@pytest.mark.compat(scenario="admin.list_transactions")
def test_list_transactions(observed):
    obs = observed("admin.list_transactions")
    assert obs["all"] == ["0:COMPLETE_COMMIT", "1:COMPLETE_ABORT", "2:COMPLETE_COMMIT"]
    assert obs["committed"] == ["0:COMPLETE_COMMIT", "2:COMPLETE_COMMIT"]
    assert obs["aborted"] == ["1:COMPLETE_ABORT"]
    assert obs["by_producer"] == ["0:COMPLETE_COMMIT"]
    # KIP-994: the open transaction, younger than 500 ms, is left out
    assert obs["old_enough"] is True and obs["by_duration"] == obs["all"]
    assert obs["open_by_duration_0"] == ["0:ONGOING"]


@pytest.mark.compat(scenario="admin.incremental_alter_invalid")
def test_invalid_incremental_alter_configs(observed):
    obs = observed("admin.incremental_alter_invalid")
    invalid = "InvalidConfigurationException"
    assert obs["duplicate"] == [["InvalidRequestException", "Error due to duplicate config keys"], None]
    assert obs["after_duplicate"] == obs["after_invalid"] == {"1": ["0.5", "producer"], "2": ["0.9", "producer"]}
    assert obs["not_list"] == [[invalid, "Can't APPEND to key compression.type because its type is not LIST."],
                               [invalid, "Can't SUBTRACT to key compression.type because its type is not LIST."]]
    assert obs["out_of_range"] == [invalid, "Invalid value 1.1 for configuration min.cleanable.dirty.ratio: "
                                            "Value must be no more than 1"]
    assert (obs["append_present"], obs["subtract_absent"]) == (None, None)
    assert obs["appended"] == {"1": ["0:1", "delete"], "2": ["", "delete,compact"]}
    assert obs["subtracted"] == {"2": ["compact"]}


# ------------------------------------------------------------------- kafka-clients 4.x, version 2

TV2_SCENARIOS = ["txn.fencing_on_commit", "txn.fencing_on_send_offsets", "txn.fencing_on_add_partitions",
                 "txn.fencing_on_expiration", "txn.empty_abort_after_commit"]


@pytest.mark.shim_only("starts a broker emulating Kafka 4.0")
@pytest.mark.compat(scenario="txn.fencing_on_add_partitions")
def test_transaction_version_2_fencing(tmp_path, java4):
    """kafka-clients 4.x on Kafka 4.0 emulation (transaction.version 2): the fencing errors of
    TransactionsTestHelper, where a fenced or expired producer's Produce is refused by the leader."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.0",
                           transaction_abort_check_interval_ms=200) as broker:
        out = java4.run("ReferenceDriver", TV2_SCENARIOS, broker.bootstrap_servers, timeout=300, prefix="tv2ref",
                        parallel=6, timeout_s=90)
    assert out["kafka_clients"].startswith("4.")
    observed = observed_of(out["results"])
    for step in ("commit", "send_offsets", "add_partitions"):
        check_fencing(observed(f"txn.fencing_on_{step}"), step, True)
    expiration = observed("txn.fencing_on_expiration")
    check_expiration(expiration["same_partition"], False, True)
    check_expiration(expiration["new_partition"], True, True)
    assert observed("txn.empty_abort_after_commit")["read_committed"] == ["4/committed", "5/committed"]


@pytest.mark.shim_only("starts a broker with group.max.size=2")
@pytest.mark.compat(scenario="consumer.group_max_size")
def test_group_max_size(tmp_path, java_drivers):
    """ConsumerBounceTest.testConsumerReceivesFatalExceptionWhenGroupPassesMaxSize on one broker."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", group_initial_rebalance_delay_ms=0,
                           extra={"group.max.size": "2"}) as broker:
        out = java_drivers.run("ReferenceDriver", ["consumer.group_max_size"], broker.bootstrap_servers, timeout=300,
                               prefix="maxsize", parallel=1, timeout_s=120)
    obs = observed_of(out["results"])("consumer.group_max_size")
    assert obs["two_assigned"] is True
    assert error(obs["third_error"]) == E + "GroupMaxSizeReachedException"
    assert (obs["both_consumed"], obs["received"]) == (True, [100, 100])
    assert obs["poller_errors"] == {}


@pytest.mark.shim_only("takes a broker of a simulated cluster down through the control plane")
@pytest.mark.compat(scenario="txn.bump_epoch")
def test_bump_transactional_epoch(tmp_path, java_drivers, request):
    """TransactionsTestHelper.testBumpTransactionalEpochWithTV2Disabled (and Enabled, with
    kafka-clients 4 on 4.x emulation): a batch for a partition whose only replica is down times out;
    the producer aborts, its epoch moves on, and its next transaction commits."""
    from compat.plugin import java_client
    from compat.targets import shim_version

    release = shim_version(request.config)
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", control_listen="127.0.0.1:0", brokers=3,
                           transaction_abort_check_interval_ms=200, group_initial_rebalance_delay_ms=0,
                           **({"kafka_version": release} if release else {})) as broker:
        out = java_drivers.run("ReferenceDriver", ["txn.bump_epoch"], broker.bootstrap_servers, timeout=300,
                               prefix="bump", parallel=1, timeout_s=120, control=broker.broker.control_url)
    obs = observed_of(out["results"])("txn.bump_epoch")
    assert error(obs["timed_out"]) == E + "TimeoutException"
    assert (obs["abort_error"], obs["next_error"]) == (None, None)
    assert obs["same_producer_id"] is True
    assert obs["epoch_after"] > obs["epoch_before"], obs
    if java_client(request.config) != "4":  # version 1: one bump, by InitProducerId (KIP-360)
        assert (obs["epoch_before"], obs["epoch_after"]) == (0, 1)
    assert obs["read_committed"] == ["1/committed", "2/committed", "3/committed", "4/committed", "4/committed"]


@pytest.mark.shim_only("takes brokers of a simulated cluster down through the control plane")
@pytest.mark.compat(scenario="txn.failure_to_fence_epoch")
def test_failure_to_fence_epoch(tmp_path, java_drivers, request):
    """TransactionsTest.testFailureToFenceEpoch, with its broker settings (three __transaction_state
    partitions of two replicas, transaction.state.log.min.isr=2): two brokers down leave the
    coordinator's partition under its min ISR, or without a leader; the InitProducerIds refused
    meanwhile bump no epoch (Kafka 4's version of the test: at least one with transaction version 2,
    whose EndTxn bumps the epoch too)."""
    from compat.plugin import java_client
    from compat.targets import shim_version

    release = shim_version(request.config)
    tv2 = java_client(request.config) == "4" and (release or "").startswith("4")
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", control_listen="127.0.0.1:0", brokers=3,
                           transaction_state_num_partitions=3, transaction_abort_check_interval_ms=200,
                           group_initial_rebalance_delay_ms=0, extra={"transaction.state.log.min.isr": "2",
                                                                   "transaction.state.log.replication.factor": "2"},
                           **({"kafka_version": release} if release else {})) as broker:
        out = java_drivers.run("ReferenceDriver", ["txn.failure_to_fence_epoch"], broker.bootstrap_servers,
                               timeout=300, prefix="fencefail", parallel=1, timeout_s=120,
                               control=broker.broker.control_url)
    obs = observed_of(out["results"])("txn.failure_to_fence_epoch")
    assert error(obs["init_error"]) == E + "TimeoutException"
    assert obs["begin_error"] is None or error(obs["begin_error"]) == FENCED, obs["begin_error"]
    if tv2:
        assert obs["epoch_after"] >= obs["epoch_before"] + 1, obs
    else:
        assert obs["epoch_after"] == obs["epoch_before"] + 1, obs
    assert obs["read_committed"] == ["4/committed", "4/committed"]


@pytest.mark.shim_only("takes a broker of a simulated cluster down through the control plane")
@pytest.mark.compat(scenario="admin.describe_cluster_fenced")
def test_describe_cluster_includes_fenced_brokers(tmp_path, java4):
    """kafka-clients 4's describeCluster(includeFencedBrokers) against 4.0 emulation: DescribeCluster
    v2 (KIP-1073) lists a broker that is down as fenced, and only when asked."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", control_listen="127.0.0.1:0", brokers=3,
                           kafka_version="4.0") as broker:
        out = java4.run("Admin4Driver", ["admin.describe_cluster_fenced"], broker.bootstrap_servers, timeout=120,
                        prefix="fenced", parallel=1, timeout_s=60, control=broker.broker.control_url, node=2)
    obs = observed_of(out["results"])("admin.describe_cluster_fenced")
    assert obs == {"before": ["0", "1", "2"], "down": ["0", "1"], "down_with_fenced": ["0", "1", "2:fenced"]}


@pytest.mark.shim_only("starts a broker emulating Kafka 4.1")
@pytest.mark.compat(scenario="admin.list_transactions_pattern")
def test_list_transactions_by_pattern(tmp_path, java4):
    """kafka-clients 4's listTransactions(filterOnTransactionalIdPattern) against 4.1 emulation:
    ListTransactions v2 (KIP-1152) lists the ids the whole pattern matches; a pattern that does not
    compile fails the call with InvalidRegularExpression."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        out = java4.run("Admin4Driver", ["admin.list_transactions_pattern"], broker.bootstrap_servers, timeout=120,
                        prefix="ltp", parallel=1, timeout_s=60)
    obs = observed_of(out["results"])("admin.list_transactions_pattern")
    assert obs["a"] == ["ltp-a1:Empty", "ltp-a2:Empty"]
    assert obs["run"] == ["ltp-a1:Empty", "ltp-a2:Empty", "ltp-b1:Empty"]
    assert obs["whole_match_only"] == []
    assert obs["invalid"]["chain"][0].endswith(".InvalidRegularExpression"), obs["invalid"]


@pytest.mark.shim_only("starts a simulated three-broker cluster emulating Kafka 4.1")
@pytest.mark.compat(scenario="admin.reassign_keeping_replication_factor")
def test_reassign_keeping_replication_factor(tmp_path, java4):
    """kafka-clients 4's alterPartitionReassignments(allowReplicationFactorChange(false)): v1 of
    AlterPartitionReassignments refuses a target that changes the replication factor."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", brokers=3, kafka_version="4.1") as broker:
        out = java4.run("Admin4Driver", ["admin.reassign_keeping_replication_factor"], broker.bootstrap_servers,
                        timeout=120, prefix="rrf", parallel=1, timeout_s=60)
    obs = observed_of(out["results"])("admin.reassign_keeping_replication_factor")
    assert obs["grow"]["chain"][0].endswith(".InvalidReplicationFactorException"), obs
    assert obs["grow"]["message"] == "The replication factor is changed from 2 to 3", obs
    assert obs["same"] is None, obs
