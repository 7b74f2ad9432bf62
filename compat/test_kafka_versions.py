"""kafka-python infers the broker's release from the ApiVersions maxima
(kafka.protocol.broker_version_data.infer_broker_version_from_api_versions) and gates behaviour on
it: against ``--kafka-version X.Y`` it must infer X.Y.

kafka-python's markers for the emulated releases are Fetch v16 (3.7), Produce v11 (3.8), Fetch v17
(3.9), ListOffsets v10 (4.0) and Produce v13 (4.1); kafka-shim serves them all.
"""

from __future__ import annotations

import pytest

import shim
from shim.protocol.kafka_releases import RELEASES

pytestmark = pytest.mark.shim_only("starts brokers emulating each Kafka release")

@pytest.mark.parametrize("release", list(RELEASES))
def test_kafka_python_infers_the_emulated_release(tmp_path, release):
    from kafka import KafkaAdminClient

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, request_timeout_ms=10_000)
        try:
            inferred = admin._client.check_version()
        finally:
            admin.close()
    assert inferred == tuple(int(part) for part in release.split("."))
