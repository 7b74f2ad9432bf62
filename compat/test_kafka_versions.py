"""kafka-python infers the broker's release from the ApiVersions maxima
(kafka.protocol.broker_version_data.infer_broker_version_from_api_versions) and gates behaviour on
it: against ``--kafka-version X.Y`` it must infer X.Y.

kafka-python's markers for the emulated releases are Fetch v16 (3.7), Produce v11 (3.8), Fetch v17
(3.9), ListOffsets v10 (4.0) and Produce v13 (4.1). Where kafka-shim does not serve the marker
version yet the case is an expected failure that names the missing version, and turns into a
failure (strict) the day it is served, so the expectation cannot go stale.
"""

from __future__ import annotations

import pytest

import shim
from shim.apis import REGISTRY
from shim.protocol.kafka_releases import RELEASES

pytestmark = pytest.mark.shim_only("starts brokers emulating each Kafka release")

# kafka-python's inference table: release -> (API key, name, version that must be advertised)
MARKERS = {"3.7": (1, "Fetch", 16), "3.8": (0, "Produce", 11), "3.9": (1, "Fetch", 17),
           "4.0": (2, "ListOffsets", 10), "4.1": (0, "Produce", 13)}


def _case(release: str):
    key, name, version = MARKERS[release]
    if REGISTRY[key].max_version >= version:
        return release
    return pytest.param(release, marks=pytest.mark.xfail(
        strict=True, reason=f"kafka-shim does not serve {name} v{version}, kafka-python's marker of {release}"))


@pytest.mark.parametrize("release", [_case(r) for r in RELEASES])
def test_kafka_python_infers_the_emulated_release(tmp_path, release):
    from kafka import KafkaAdminClient

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, request_timeout_ms=10_000)
        try:
            inferred = admin._client.check_version()
        finally:
            admin.close()
    assert inferred == tuple(int(part) for part in release.split("."))
