"""Share groups (KIP-932) with Java kafka-clients 4.x's KafkaShareConsumer in explicit
acknowledgement mode (compat/java/ShareAckDriver.java): ACCEPT, RELEASE and REJECT and the
delivery-count limit (``share.acks``), and a broker killed with SIGKILL in the middle of consumption
(``share.durable``): nothing acknowledged is delivered again, nothing is lost."""

from __future__ import annotations

import threading
import time

import pytest

import shim
from compat.groups_support import create_topic
from compat.share_support import produce, share_start_offset, share_topic

pytestmark = [pytest.mark.shim_only("starts a broker emulating Kafka 4.1")]

RECORDS = 60



@pytest.mark.compat(client="java", scenario="share.acknowledgements")
def test_accept_release_reject_and_the_delivery_limit(tmp_path, java4):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        share_topic(bs, "share-acks", 1, "share-acks-G")
        out = java4.run("ShareAckDriver", ["share.acks"], bs, timeout=300, timeout_s=150)
    result = out["results"]["share.acks"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    assert result["observed"]["deliveries"] == {
        "a0": [1], "a1": [1], "a2": [1, 2], "a3": [1], "a4": [1], "a5": [1, 2], "a6": [1], "a7": [1],
        "a8": [1, 2, 3, 4, 5], "end": [1]}


@pytest.mark.compat(client="java", scenario="share.acknowledgements")
def test_records_a_closing_consumer_held_come_back_with_their_delivery_count(tmp_path, java4):
    """Kafka 4.1's ShareConsumerTest.testDeliveryCountDifferentBehaviorWhenClosingSessionWithExplicitAcknowledgement
    with KafkaShareConsumer: the record acknowledged RELEASE comes back with delivery count 2, the
    one the consumer closed on without acknowledging with 1 (releaseAcquiredRecords'
    DeliveryCountOps.DECREASE, KAFKA-17541)."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        bs = broker.bootstrap_servers
        share_topic(bs, "share-close-count", 1, "share-close-count-G")
        out = java4.run("ShareAckDriver", ["share.close_count"], bs, timeout=300, timeout_s=150)
    result = out["results"]["share.close_count"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    assert result["observed"]["deliveries"] == {"held": [1, 1], "released": [1, 2]}


@pytest.mark.compat(client="java", scenario="share.durability")
def test_kill_9_mid_consumption_loses_nothing_and_redelivers_nothing_acknowledged(shim_process, free_port, tmp_path,
                                                                                   java4):
    port, data_dir = free_port(), tmp_path / "broker"
    args = ("--kafka-version", "4.1")
    broker = shim_process(data_dir, port=port, args=args)
    bs = broker.wait_ready()
    share_topic(bs, "share-durable", 1, "share-durable-G")
    produce(bs, "share-durable", [(0, b"d%02d" % i) for i in range(RECORDS)])
    out: dict = {}
    driver = threading.Thread(target=lambda: out.update(java4.run(
        "ShareAckDriver", ["share.durable"], bs, timeout=300, timeout_s=200, records=RECORDS, max_poll_records=5)))
    driver.start()
    try:
        deadline = time.monotonic() + 120
        while (start := share_start_offset(bs, "share-durable-G", "share-durable")) < 20:
            assert time.monotonic() < deadline and driver.is_alive(), "the driver acknowledged too little"
        killed_at = time.time() * 1000
        broker.kill9()
        assert start < RECORDS, "everything was acknowledged before the kill"
        broker = shim_process(data_dir, port=port, args=args)
        assert broker.wait_ready() == bs
        create_topic(bs, "share-durable-go", 1)  # the driver goes on
    finally:
        driver.join(300)
    result = out["results"]["share.durable"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    acknowledged = result["observed"]["acknowledged"]
    # below the share-partition start offset read just before the kill, every record was acknowledged
    before = {"d%02d" % i for i in range(start)} | {v for v, at in acknowledged.items() if at < killed_at}
    after = {v for v, _, at in result["observed"]["delivered"] if at > killed_at}
    assert after and not before & after, sorted(before & after)
    assert sorted(acknowledged) == ["d%02d" % i for i in range(RECORDS)]
