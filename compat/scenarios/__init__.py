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

from . import clients, edge_cases, integrations, kafka_tests
from .model import CLIENTS, PY, Scenario

__all__ = ["BY_ID", "CLIENTS", "NODE_IDS", "PY", "SCENARIOS", "Scenario", "cell_of_nodeid", "validate"]

# in the matrix's order
SCENARIOS: list[Scenario] = [*clients.SCENARIOS, *integrations.SCENARIOS, *kafka_tests.SCENARIOS,
                             *edge_cases.SCENARIOS]

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
        raise ValueError(f"{where}: compat marker names unknown scenario {scenario!r} (see compat/scenarios/)")


def cell_of_nodeid(nodeid: str) -> tuple[str, str] | None:
    """(client, scenario) for an unmarked test listed in NODE_IDS, else None."""
    for pattern, client, template in NODE_IDS:
        m = re.fullmatch(pattern, nodeid)
        if m:
            groups = m.groupdict()
            return (client or groups["client"]), template.format(**groups)
    return None
