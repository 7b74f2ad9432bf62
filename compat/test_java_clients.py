"""Java kafka-clients 3.9.1 against the broker under test: compat/java/KafkaDriver.java runs every
scenario once per module (one JVM, scenarios in parallel on their own topics) and reports what it
observed; each test below holds one scenario's expectations (see compat/scenarios/)."""

from __future__ import annotations

import pytest

from compat.javarun import module_scenarios, observed_of

pytestmark = pytest.mark.compat(client="java")

FENCED = {"org.apache.kafka.common.errors.ProducerFencedException",
          "org.apache.kafka.common.errors.InvalidProducerEpochException"}
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.fixture(scope="module")
def java_results(request, java_drivers, compat_target):
    from compat.plugin import java_client

    wanted = module_scenarios(request)
    out = java_drivers.run("KafkaDriver", wanted, compat_target.bootstrap_servers, timeout=300,
                           prefix=compat_target.prefix + "-jc", parallel=6, timeout_s=90)
    expected = "4." if java_client(request.config) == "4" else "3.9.1"
    assert out["kafka_clients"].startswith(expected)
    return out["results"]


@pytest.fixture(scope="module")
def uses_transaction_v2(request, compat_target) -> bool:
    """kafka-clients 4.x against a broker that finalizes transaction.version 2 (Kafka 4.x)."""
    from compat.plugin import java_client
    from compat.targets import finalized_features

    return (java_client(request.config) == "4"
            and finalized_features(compat_target.bootstrap_servers).get("transaction.version", 0) >= 2)


@pytest.fixture
def observed(java_results):
    """``observed(name)``: what the scenario saw; fails with the Java error if it could not finish."""
    return observed_of(java_results)


def each(values, scenario: str):
    """Parameters that each fill their own matrix cell: scenario.format(value)."""
    return [pytest.param(v, id=v, marks=pytest.mark.compat(scenario=scenario.format(v))) for v in values]


def offsets_values(records):
    return [(r["o"], r["v"]) for r in records]


def fenced(failure) -> bool:
    return failure is not None and bool(FENCED & set(failure["chain"]))


@pytest.mark.parametrize("codec", each(CODECS, "produce_consume.{}"))
def test_produce_consume(observed, codec):
    obs = observed(f"produce_consume.{codec}")
    base = obs["base_ts"]
    expected = []
    for i in range(5):
        expected.append({
            "p": 0, "o": i, "k": None if i == 3 else f"key-{i}",
            "v": f"{codec}-value-{i}-" + "abcdefgh" * 32, "ts": base + 1000 * i, "tt": "CreateTime",
            "h": [["h1", f"x{i}"], ["h2", None if i == 2 else f"y{i}"]],
        })
    assert obs["offsets"] == [0, 1, 2, 3, 4]
    assert obs["records"] == expected
    assert obs["position"] == 5


@pytest.mark.compat(scenario="producer.idempotent_default")
def test_idempotent_default_producer(observed):
    obs = observed("producer.idempotent_default")
    assert obs["offsets"] == {"0": list(range(10)), "1": list(range(10))}
    assert obs["values"] == {str(p): [f"v{p}-{i}" for i in range(10)] for p in (0, 1)}
    states = obs["producers"]
    assert [len(states["0"]), len(states["1"])] == [1, 1], states
    for s in (states["0"][0], states["1"][0]):
        assert (s["producer_epoch"], s["last_sequence"], s["txn_start_offset"]) == (0, 9, None), s
        assert s["producer_id"] >= 0
    assert states["0"][0]["producer_id"] == states["1"][0]["producer_id"]


@pytest.mark.compat(scenario="txn.seed")
def test_seed_isolation_levels(observed):
    obs = observed("txn.seed")
    assert offsets_values(obs["read_committed"]) == [(3, "plain-1"), (4, "b-1"), (5, "b-2")]
    assert offsets_values(obs["read_uncommitted"]) == [(0, "a-1"), (1, "a-2"), (3, "plain-1"), (4, "b-1"), (5, "b-2")]
    assert obs["read_committed_position"] == obs["read_uncommitted_position"] == 7
    assert obs["read_committed_end_offsets"] == obs["read_uncommitted_end_offsets"] == 7
    assert obs["end_rc"] == obs["end_ru"] == 7


@pytest.mark.parametrize("outcome", each(["commit", "abort"], "txn.open_lso_{}"))
def test_open_transaction_holds_lso(observed, outcome):
    obs = observed(f"txn.open_lso_{outcome}")
    assert offsets_values(obs["ru"]) == [(0, "p-0"), (1, "t-1"), (2, "p-2"), (3, "p-3")]
    assert offsets_values(obs["rc_before"]) == [(0, "p-0")]
    assert obs["rc_position_before"] == 1
    assert (obs["rc_end_offsets_before"], obs["ru_end_offsets_before"]) == (1, 4)
    assert (obs["admin_latest_rc_before"], obs["admin_latest_ru_before"]) == (1, 4)
    after = [(1, "t-1"), (2, "p-2"), (3, "p-3")] if outcome == "commit" else [(2, "p-2"), (3, "p-3")]
    assert offsets_values(obs["rc_after"]) == after
    assert obs["rc_position_after"] == 5
    assert obs["admin_latest_rc_after"] == 5


@pytest.mark.compat(scenario="txn.interleaved")
def test_interleaved_transactions_small_fetches(observed):
    obs = observed("txn.interleaved")
    written = obs["written"]
    assert len(written) == 63
    assert obs["read_committed"] == [v for v in written if not v.startswith("drop-")]
    assert obs["read_uncommitted"] == written
    assert obs["read_committed_position"] == obs["read_uncommitted_position"] == 65


@pytest.mark.compat(scenario="txn.zombie_fencing")
def test_zombie_fencing(observed):
    obs = observed("txn.zombie_fencing")
    assert obs["p2_committed"] is True
    assert fenced(obs["p1_send_error"]), obs["p1_send_error"]
    assert fenced(obs["p1_commit_error"]), obs["p1_commit_error"]
    assert offsets_values(obs["read_committed"]) == [(2, "fencer-1")]
    assert offsets_values(obs["read_uncommitted"]) == [(0, "zombie-1"), (2, "fencer-1")]
    assert obs["read_committed_position"] == obs["read_uncommitted_position"] == 4


@pytest.mark.compat(scenario="txn.timeout")
def test_transaction_timeout(observed):
    obs = observed("txn.timeout")
    assert obs["lso_while_open"] == 0
    assert obs["aborted_by_broker"] is True, obs
    assert (obs["lso_after"], obs["leo_after"]) == (2, 2)
    assert obs["state_after_timeout"] == "COMPLETE_ABORT"
    assert fenced(obs["send_error"]), obs["send_error"]
    assert fenced(obs["commit_error"]), obs["commit_error"]
    assert obs["read_committed"] == []
    assert offsets_values(obs["read_uncommitted"]) == [(0, "expires-1")]
    assert obs["read_committed_position"] == obs["read_uncommitted_position"] == 2


@pytest.mark.compat(scenario="consumer.position_past_markers")
def test_position_advances_past_markers(observed):
    obs = observed("consumer.position_past_markers")
    assert obs["rc_polls"] and all(p["records"] == 0 for p in obs["rc_polls"]), obs["rc_polls"]
    assert obs["rc_position"] == 5
    assert obs["rc_from_marker"] == [] and obs["rc_position_from_marker"] == 5
    assert offsets_values(obs["ru"]) == [(0, "aborted-1"), (1, "aborted-2"), (3, "aborted-3")]
    assert obs["ru_position"] == 5


@pytest.mark.compat(scenario="txn.delete_records_open")
def test_delete_records_past_an_open_transaction(observed):
    obs = observed("txn.delete_records_open")
    assert obs["before"] == {"read_uncommitted_earliest": 0, "read_uncommitted_latest": 5,
                             "read_committed_earliest": 0, "read_committed_latest": 2}
    # the LSO never stays below the log start offset (Kafka: UnifiedLog.maybeIncrementFirstUnstableOffset)
    assert obs["low_watermark_3"] == 3
    assert obs["after_3"] == {"read_uncommitted_earliest": 3, "read_uncommitted_latest": 5,
                              "read_committed_earliest": 3, "read_committed_latest": 3}
    assert obs["low_watermark_hw"] == 5
    assert obs["after_hw"] == {"read_uncommitted_earliest": 5, "read_uncommitted_latest": 5,
                               "read_committed_earliest": 5, "read_committed_latest": 5}
    assert obs["rc_position"] == 5
    assert offsets_values(obs["rc_read"]) == [(5, "p-5")] and obs["rc_position_after"] == 7
    assert obs["committed"]["read_committed_latest"] == obs["committed"]["read_uncommitted_latest"] == 7


@pytest.mark.compat(scenario="consumer.group_commit")
def test_group_commit_and_resume(observed):
    obs = observed("consumer.group_commit")
    assert obs["first_member"] == ["g-0", "g-1", "g-2"]
    assert obs["committed"] == 3
    assert obs["second_member"] == ["g-3", "g-4"]
    assert obs["admin_group_offset"] == 3


@pytest.mark.parametrize("scenario", each(["eos.send_offsets", "eos.send_offsets_assign"], "{}"))
def test_send_offsets_to_transaction(observed, scenario):
    obs = observed(scenario)
    assert obs["committed_round"] == {"consumed": ["in-0", "in-1", "in-2"], "offset_sent": 3}
    assert obs["aborted_round"] == {"consumed": ["in-3", "in-4"], "offset_sent": 5}
    assert obs["group_offset"] == 3
    if scenario == "eos.send_offsets":
        assert obs["group_generation"] >= 1
    else:
        assert obs["group_generation"] == -1
    assert offsets_values(obs["out_read_committed"]) == [(0, "out-in-0"), (1, "out-in-1"), (2, "out-in-2")]
    assert offsets_values(obs["out_read_uncommitted"]) == [
        (0, "out-in-0"), (1, "out-in-1"), (2, "out-in-2"), (4, "out-in-3"), (5, "out-in-4")]


@pytest.mark.compat(scenario="admin.topics")
def test_admin_topics(observed, compat_target):
    obs = observed("admin.topics")
    assert "org.apache.kafka.common.errors.TopicExistsException" in obs["create_again_error"]["chain"]
    parts = obs["partitions"]
    assert [p["partition"] for p in parts] == [0, 1, 2]
    brokers = len(compat_target.bootstrap_servers.split(","))  # one, or a simulated cluster's (--shim-brokers)
    # one broker leads them all; on a cluster the leaders spread over the brokers
    assert len({p["leader"] for p in parts}) == min(3, brokers) and None not in {p["leader"] for p in parts}, parts
    assert all((p["replicas"], p["isr"]) == (1, 1) for p in parts), parts
    assert obs["topic_id_set"] is True and obs["internal"] is False
    assert obs["cluster_nodes"] == brokers
    assert obs["listed"] is True
    assert obs["deleted_gone"] is True


@pytest.mark.compat(scenario="admin.list_offsets_isolation")
def test_list_offsets_isolation(observed):
    obs = observed("admin.list_offsets_isolation")
    # p-5 holds the largest timestamp: maxTimestamp, like a timestamp, is not answered at or past the
    # LSO (Kafka: ReplicaManager.fetchOffset drops what is found at or past the last fetchable offset)
    assert obs["open"] == {
        "read_uncommitted_earliest": 0, "read_uncommitted_latest": 6,
        "read_uncommitted_ts_p1": 1, "read_uncommitted_ts_p5": 5, "read_uncommitted_max": 5,
        "read_committed_earliest": 0, "read_committed_latest": 4,
        "read_committed_ts_p1": 1, "read_committed_ts_p5": -1, "read_committed_max": -1,
    }
    assert obs["committed"] == {"read_uncommitted_latest": 7, "read_uncommitted_ts_p5": 5, "read_uncommitted_max": 5,
                                "read_committed_latest": 7, "read_committed_ts_p5": 5, "read_committed_max": 5}


@pytest.mark.compat(scenario="admin.transactions")
def test_admin_transactions(observed, uses_transaction_v2):
    obs = observed("admin.transactions")
    open_, done = obs["open"], obs["committed"]
    assert open_["state"] == "ONGOING"
    assert open_["timeout_ms"] == 45000 and open_["start_time_set"] is True
    topic = open_["partitions"][0].rsplit("-", 1)[0]
    assert topic.endswith("-admin-txn") and open_["partitions"] == [f"{topic}-0", f"{topic}-1"]
    assert open_["listing"] == {"producer_id": open_["producer_id"], "state": "ONGOING"}
    assert obs["listed_ongoing"] is True
    p0, p1 = open_["producers"]["0"], open_["producers"]["1"]
    assert [s["txn_start_offset"] for s in p0] == [1] and [s["txn_start_offset"] for s in p1] == [0]
    assert p0[0]["producer_epoch"] == open_["producer_epoch"]

    assert done["state"] == "COMPLETE_COMMIT"
    assert done["partitions"] == []
    # Transaction version 2 (a 4.x client and broker) ends every transaction with a new epoch.
    bump = 1 if uses_transaction_v2 else 0
    assert (done["producer_id"], done["producer_epoch"]) == (open_["producer_id"], open_["producer_epoch"] + bump)
    assert done["listing"] == {"producer_id": open_["producer_id"], "state": "COMPLETE_COMMIT"}
    assert obs["listed_ongoing_after"] is False
    for part in ("0", "1"):
        [state] = done["producers"][part]
        assert state["txn_start_offset"] is None
        assert state["coordinator_epoch"] is not None and state["coordinator_epoch"] >= 0


@pytest.mark.compat(scenario="admin.abort_hanging")
def test_admin_abort_hanging_transaction(observed):
    obs = observed("admin.abort_hanging")
    assert obs["lso_before"] == 1
    assert obs["hanging"]["txn_start_offset"] == 1
    assert (obs["lso_after"], obs["leo_after"]) == (4, 4)
    assert obs["open_after"] == []
    assert offsets_values(obs["read_committed"]) == [(0, "p-0"), (2, "p-2")]
    assert offsets_values(obs["read_uncommitted"]) == [(0, "p-0"), (1, "hang-1"), (2, "p-2")]
    assert obs["read_committed_position"] == obs["read_uncommitted_position"] == 4


@pytest.mark.compat(scenario="admin.topic_configs")
def test_admin_topic_configs(observed):
    obs = observed("admin.topic_configs")
    invalid = "org.apache.kafka.common.errors.InvalidConfigurationException"
    assert invalid in obs["bad_value"]["chain"] and "String must be one of" in obs["bad_value"]["message"]
    assert invalid in obs["unknown_name"]["chain"]
    compression = obs["compression.type"]
    assert (compression["value"], compression["source"], compression["type"]) == ("gzip", "DYNAMIC_TOPIC_CONFIG", "STRING")
    assert compression["documented"] is True and compression["synonyms"][0] == {
        "name": "compression.type", "value": "gzip", "source": "DYNAMIC_TOPIC_CONFIG"}
    assert (obs["retention.ms"]["value"], obs["retention.ms"]["type"]) == ("3600000", "LONG")
    assert (obs["segment.ms"]["value"], obs["segment.ms"]["source"]) == ("604800000", "DEFAULT_CONFIG")
    assert (obs["cleanup.policy"]["value"], obs["cleanup.policy"]["type"]) == ("delete", "LIST")
    assert obs["after_retention.ms"]["value"] == "7200000"
    assert obs["after_compression.type"]["source"] != "DYNAMIC_TOPIC_CONFIG"


@pytest.mark.compat(scenario="admin.broker_configs")
def test_admin_broker_configs(observed, compat_target):
    obs = observed("admin.broker_configs")
    if compat_target.is_shim:
        # the described broker's own listener (one of a cluster's)
        assert obs["listeners"]["value"] in {f"PLAINTEXT://{a}" for a in compat_target.bootstrap_servers.split(",")}
    assert obs["auto.create.topics.enable"]["read_only"] is True
    assert obs["message.max.bytes"]["read_only"] is False and obs["message.max.bytes"]["type"] == "INT"
    password = obs["ssl.keystore.password"]
    assert (password["value"], password["sensitive"], password["type"]) == (None, True, "PASSWORD")
    assert (obs["set_log.retention.ms"]["value"], obs["set_log.retention.ms"]["source"]) == (
        "86400000", "DYNAMIC_BROKER_CONFIG")
    assert obs["deleted_log.retention.ms"]["source"] != "DYNAMIC_BROKER_CONFIG"
    assert "org.apache.kafka.common.errors.InvalidRequestException" in obs["read_only_error"]["chain"]
    unprefixed = obs["unprefixed_keystore"]
    assert "org.apache.kafka.common.errors.InvalidRequestException" in unprefixed["chain"]
    assert unprefixed["message"].endswith("These security configs can be dynamically updated only per-listener using "
                                          "the listener prefix: HashSet(ssl.keystore.location)"), unprefixed["message"]
    assert obs["root_logger"] in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
    assert obs["root_set_same"] is None
    invalid = "org.apache.kafka.common.errors.InvalidRequestException"
    assert obs["root_delete"]["chain"][0] == obs["root_append"]["chain"][0] == invalid
    assert obs["root_delete"]["message"] == "Removing the log level of the root logger is not allowed"


@pytest.mark.compat(scenario="topic.compression_zstd")
def test_zstd_topic_recompresses_what_java_sends(observed, compat_target):
    obs = observed("topic.compression_zstd")
    assert obs["values"] == ["java-none", "java-snappy", "java-gzip"]
    if compat_target.is_shim:
        from kafka_codecs import Compression
        from kafka_codecs.batch import iter_batches

        plog = compat_target.broker.node.logs.get(obs["topic"], 0)
        stored = [h.compression for seg in plog.segments for _, h in iter_batches(seg.log_path.read_bytes())]
        assert stored == [Compression.ZSTD] * 3
