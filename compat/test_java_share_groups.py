"""Share groups (KIP-932) with Java kafka-clients 4.x's KafkaShareConsumer (the ``java4`` extra)
against Kafka 4.1 emulation: compat/java/ShareDriver.java's ``share.queue`` (two members of a
share group read a 3-partition topic; every record arrives once)."""

from __future__ import annotations

import pytest

import shim
from compat.groups_support import create_topic
from compat.share_support import enable_share_groups, share_topic

pytestmark = [pytest.mark.compat(client="java", scenario="share.groups"),
              pytest.mark.shim_only("starts a broker emulating Kafka 4.1")]



def test_kafka_clients_4_share_consumers_share_a_topic(tmp_path, java4):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        share_topic(bs, "share-queue", 3, "share-queue-G")
        out = java4.run("ShareDriver", ["share.queue"], bs, timeout=300, timeout_s=120)
    assert out["kafka_clients"].startswith("4.")
    result = out["results"]["share.queue"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    observed = result["observed"]
    assert (observed["distinct"], observed["duplicates"]) == (60, 0)
    assert sum(observed["per_member"]) == 60


def test_kafka_clients_4_admin_lists_alters_and_deletes_share_group_offsets(tmp_path, java4):
    """ShareDriver.java's ``share.admin``: Admin.listShareGroupOffsets, alterShareGroupOffsets,
    deleteShareGroupOffsets, describeShareGroups, deleteShareGroups and listGroups for share
    groups, each checked against what KafkaShareConsumers then receive."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        share_topic(bs, "share-admin", 2, "share-admin-G")
        out = java4.run("ShareDriver", ["share.admin"], bs, timeout=300, timeout_s=180)
    result = out["results"]["share.admin"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    o = result["observed"]
    assert o["first"] == list(range(10))
    assert "share-admin-G:Share:Empty" in o["listed"] and o["state"] == "Empty", o
    assert o["offsets"]["share-admin-0"] == 10
    assert o["altered"]["share-admin-0"] == 4
    assert o["after_alter"] == list(range(4, 10))
    assert "share-admin-0" not in o["deleted"]
    assert o["after_delete"] == list(range(10))
    assert (o["alter_with_member"], o["delete_with_member"]) == ("GroupNotEmptyException", "GroupNotEmptyException")
    assert o["delete_group"] == "none" and not any(g.startswith("share-admin-G:") for g in o["listed_after"])
    assert o["delete_again"] == "GroupIdNotFoundException"


def test_kafka_clients_4_share_consumer_starts_by_duration(tmp_path, java4):
    """compat/java/ShareDurationDriver.java: share.auto.offset.reset=by_duration:PT1H through the
    Admin (a negative duration refused with Kafka's message) over records stamped hours apart."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        enable_share_groups(bs)
        create_topic(bs, "aged", 1)
        create_topic(bs, "stale", 1)
        out = java4.run("ShareDurationDriver", ["share.by_duration"], bs, timeout=300, timeout_s=120)
    result = out["results"]["share.by_duration"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    o = result["observed"]
    assert o["refused"] == (
        "InvalidConfigurationException: Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: "
        "Invalid value `by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either "
        "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")
    assert o["described"] == "by_duration:PT1H DYNAMIC_GROUP_CONFIG"
    assert (o["aged"], o["aged_offsets"]) == ([2, 3], {"aged-0": 4})
    assert (o["stale_before"], o["stale"], o["stale_offsets"]) == ([], [2], {"stale-0": 3})
