"""Java Admin (kafka-clients 3.9.1) cluster-level calls: compat/java/ClusterAdminDriver.java runs
the scenarios once per module and reports what it observed; each test holds one scenario's
expectations (see compat/scenarios/), which are Apache Kafka 3.9's answers on one combined node."""

from __future__ import annotations

import pytest

from compat.javarun import module_scenarios, observed_of

pytestmark = pytest.mark.compat(client="java")

E = "org.apache.kafka.common.errors."


@pytest.fixture(scope="module")
def java_results(request, java_drivers, compat_target):
    wanted = module_scenarios(request)
    out = java_drivers.run("ClusterAdminDriver", wanted, compat_target.bootstrap_servers, timeout=200,
                           prefix=compat_target.prefix + "-jc", parallel=4, timeout_s=60)
    return out["results"]


@pytest.fixture
def observed(java_results):
    return observed_of(java_results)


def error(outcome) -> str | None:
    return None if outcome is None else outcome["chain"][0].removeprefix(E)


@pytest.mark.compat(scenario="admin.metadata_quorum")
def test_metadata_quorum(observed, compat_target):
    obs = observed("admin.metadata_quorum")
    assert obs["leader"] == obs["controller"]
    assert obs["epoch_positive"] and obs["high_watermark_positive"] and obs["observers"] == 0
    [voter] = obs["voters"]
    assert {k: v for k, v in voter.items() if k != "directory_id_set"} == {
        "id": obs["leader"], "leo_at_least_hw": True, "fetch_time": True, "caught_up_time": True}
    # a quorum formatted --standalone (kraft.version 1) knows its voter's directory; one of static
    # controller.quorum.voters (docker-compose.yml's Apache Kafka) does not
    assert voter["directory_id_set"] or not compat_target.is_shim
    assert obs["nodes"] == [{"id": obs["leader"], "endpoints": 1}]


@pytest.mark.compat(scenario="admin.features")
def test_features(observed):
    obs = observed("admin.features")
    # kraft.version 1 where the quorum was formatted --standalone (kafka-shim), absent (level 0) with
    # static controller.quorum.voters
    assert obs["finalized"]["metadata.version"] == [21, 21]
    assert obs["finalized"].get("kraft.version", [1, 1]) == [1, 1] and len(obs["finalized"]) <= 2
    assert obs["supported"]["metadata.version"] == [1, 21] and obs["epoch_present"]
    assert error(obs["same_level"]) is None
    assert error(obs["downgrade_as_upgrade"]) == error(obs["unknown_feature"]) == "InvalidUpdateVersionException"
    assert error(obs["above_supported"]) == "InvalidUpdateVersionException"
    assert "only supports versions 1-21" in obs["above_supported"]["message"]
    assert obs["metadata_version_after"] == 21


@pytest.mark.compat(scenario="admin.delegation_tokens")
def test_delegation_tokens_over_plaintext(observed):
    obs = observed("admin.delegation_tokens")
    # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: tokens are never given out over PLAINTEXT
    assert {k: error(v) for k, v in obs.items()} == dict.fromkeys(
        ("create", "describe", "renew", "expire"), "UnsupportedByAuthenticationException")


@pytest.mark.compat(scenario="admin.unregister_broker")
def test_unregister_unknown_broker(observed):
    obs = observed("admin.unregister_broker")
    assert error(obs["unknown"]) == "BrokerIdNotRegisteredException"


@pytest.mark.compat(scenario="admin.client_metrics_resources")
def test_list_client_metrics_resources(observed):
    assert observed("admin.client_metrics_resources")["listed"] == 0  # no CLIENT_METRICS configs exist
