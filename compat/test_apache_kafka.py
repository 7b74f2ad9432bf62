"""The reference broker: Apache Kafka 3.9.1 in Docker via testcontainers (skipped when no Docker
engine answers). A few scenarios run here on every machine that has an engine; to run every
compat suite against it instead of kafka-shim use ``KAFKA_SHIM_TARGET=testcontainers``."""

from __future__ import annotations


def test_apache_kafka_matches_the_seed_and_lso_scenarios(apache_kafka, java_drivers):
    out = java_drivers.run("KafkaDriver", ["txn.seed", "txn.open_lso_commit", "consumer.position_past_markers"],
                           apache_kafka.bootstrap_servers, prefix=apache_kafka.prefix + "-ak", timeout=300)
    results = out["results"]
    for name, result in results.items():
        assert result["ok"], f"{name}: {result.get('error')}"
    seed = results["txn.seed"]["observed"]
    assert [(r["o"], r["v"]) for r in seed["read_committed"]] == [(3, "plain-1"), (4, "b-1"), (5, "b-2")]
    lso = results["txn.open_lso_commit"]["observed"]
    assert (lso["rc_position_before"], lso["admin_latest_rc_before"], lso["rc_position_after"]) == (1, 1, 5)
    markers = results["consumer.position_past_markers"]["observed"]
    assert markers["rc_position"] == 5

