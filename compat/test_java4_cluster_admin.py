"""kafka-clients 4.x's Admin against 4.0 and 4.1 emulation: describeMetadataQuorum, describeFeatures
and updateFeatures at their 4.x versions (UpdateFeatures v2: one top-level error for the request),
the delegation-token calls and listClientMetricsResources (ListConfigResources from 4.1) -- the
scenarios of compat/java/ClusterAdminDriver.java whose 3.9 expectations
compat/test_java_cluster_admin.py holds."""

from __future__ import annotations

import pytest

import shim


pytestmark = pytest.mark.shim_only("starts brokers emulating 4.0 and 4.1")

SCENARIOS = ["admin.metadata_quorum", "admin.features", "admin.delegation_tokens", "admin.client_metrics_resources"]



def error(outcome) -> str | None:
    return None if outcome is None else outcome["chain"][0].rsplit(".", 1)[-1]


@pytest.mark.parametrize("release,metadata_version", [("4.0", 25), ("4.1", 27)])
def test_kafka_clients_4_cluster_admin_calls(tmp_path, java4, release, metadata_version):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        out = java4.run("ClusterAdminDriver", SCENARIOS, broker.bootstrap_servers, timeout=200, prefix="j4c",
                        parallel=2, timeout_s=60)
    assert out["kafka_clients"].startswith("4.")
    results = out["results"]
    failed = {n: r["error"] for n, r in results.items() if not r["ok"]}
    assert not failed
    quorum = results["admin.metadata_quorum"]["observed"]
    assert quorum["leader"] == quorum["controller"] and [v["id"] for v in quorum["voters"]] == [quorum["leader"]]
    features = results["admin.features"]["observed"]
    assert features["finalized"]["metadata.version"] == [metadata_version, metadata_version]
    assert features["finalized"]["transaction.version"] == [2, 2]
    assert features["supported"]["metadata.version"] == [7, metadata_version]
    assert error(features["same_level"]) is None
    assert error(features["downgrade_as_upgrade"]) == error(features["unknown_feature"]) == "InvalidUpdateVersionException"
    assert f"only supports versions 7-{metadata_version}" in features["above_supported"]["message"]
    assert features["metadata_version_after"] == metadata_version
    tokens = results["admin.delegation_tokens"]["observed"]
    assert {error(v) for v in tokens.values()} == {"UnsupportedByAuthenticationException"}
    assert results["admin.client_metrics_resources"]["observed"]["listed"] == 0
