"""Which client exercises transaction version 2 (KIP-890 part 2): kafka-clients 4.x (the ``java4``
extra) turns it on when the broker finalizes ``transaction.version`` 2, i.e. against
``--kafka-version 4.0``/``4.1``, and stays on version 1 against 3.9 -- observed in the broker: the
transaction version each transactional id was driven with, and the producer epoch of consecutive
markers of one producer (a new epoch per transaction under version 2, the same epoch under 1).

Scenarios from compat/java/KafkaDriver.java whose expectations compat/test_java_clients.py holds
(run those with ``--java-client 4 --shim-kafka-version 4.0`` for the full catalogue on version 2).
"""

from __future__ import annotations

import pytest

import shim
from kafka_codecs import parse_header
from shim.coordinators.txn.coordinator import OFFSETS_TOPIC, TXN_TOPIC


pytestmark = pytest.mark.shim_only("starts brokers emulating 3.9, 4.0 and 4.1 and looks at their state")

SCENARIOS = ["txn.seed", "txn.zombie_fencing", "consumer.position_past_markers", "eos.send_offsets"]



def marker_epochs(node) -> dict[tuple[str, int, int], list[int]]:
    """(topic, partition, producer id) -> the producer epochs of its markers, in log order."""
    out: dict[tuple[str, int, int], list[int]] = {}
    for (topic, partition), plog in node.logs.logs.items():
        if topic in (TXN_TOPIC, OFFSETS_TOPIC):
            continue
        for raw in plog.iter_batches():
            h = parse_header(raw)
            if h.is_control:
                out.setdefault((topic, partition, h.producer_id), []).append(h.producer_epoch)
    return out


@pytest.mark.parametrize("release,transaction_version", [("3.9", 0), ("4.0", 2), ("4.1", 2)])
def test_kafka_clients_4_uses_transaction_version_2_where_finalized(tmp_path, java4, release, transaction_version):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release,
                           transaction_abort_check_interval_ms=200) as broker:
        out = java4.run("KafkaDriver", SCENARIOS, broker.bootstrap_servers, timeout=300, prefix="tv2", parallel=4,
                        timeout_s=90)
        versions = broker.call(lambda: {m.client_transaction_version for m in broker.node.txn.txns.values()})
        epochs = broker.call(marker_epochs, broker.node)
    assert out["kafka_clients"].startswith("4.")
    failed = {name: r["error"] for name, r in out["results"].items() if not r["ok"]}
    assert not failed
    assert versions == {transaction_version}
    repeated = [e for e in epochs.values() if len(e) > 1]
    assert repeated, "some producer wrote two markers to one partition"
    if transaction_version == 2:
        assert all(b > a for e in repeated for a, b in zip(e, e[1:]))
    else:
        assert any(b == a for e in repeated for a, b in zip(e, e[1:]))


def test_a_transaction_version_downgrade_turns_kafka_clients_4_back_to_version_1(tmp_path, java4):
    """kafka-clients 4.x's Admin.updateFeatures (UpdateFeatures v2) takes 4.0's transaction.version
    from 2 to 1: describeFeatures says so and new producers drive their transactions on version 1."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.0",
                           transaction_abort_check_interval_ms=200) as broker:
        admin = java4.run("ClusterAdminDriver", ["features.transaction_version_1"], broker.bootstrap_servers,
                          timeout=120, prefix="tv1", parallel=1, timeout_s=60)["results"]["features.transaction_version_1"]
        assert admin["ok"], admin["error"]
        assert (admin["observed"]["before"], admin["observed"]["update"], admin["observed"]["after"]) == (2, None, 1)
        out = java4.run("KafkaDriver", ["txn.seed", "txn.zombie_fencing"], broker.bootstrap_servers, timeout=300,
                        prefix="tv1", parallel=2, timeout_s=90)
        versions = broker.call(lambda: {m.client_transaction_version for m in broker.node.txn.txns.values()})
    assert not {name: r["error"] for name, r in out["results"].items() if not r["ok"]}
    assert versions == {0}
