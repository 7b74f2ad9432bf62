"""Share groups (KIP-932) with Java kafka-clients 4.x's KafkaShareConsumer in explicit
acknowledgement mode (compat/java/ShareAckDriver.java): ACCEPT, RELEASE and REJECT and the
delivery-count limit (``share.acks``), and a broker killed with SIGKILL in the middle of consumption
(``share.durable``): nothing acknowledged is delivered again, nothing is lost; a consumer killed
with SIGKILL while holding records (``share.hold``) gives them back when its connection closes; one
idle past ``group.share.session.timeout.ms`` (``share.idle``) keeps them and acknowledges them."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

import shim
from compat.groups_support import create_topic
from compat.share_support import (describe_share_group, outlast_share_session_timeout, produce, share_start_offset,
                                  share_topic)

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


LONG = "300000"  # ms: no acquisition lock or member session times out while the test runs
LONG_TIMEOUTS = {"group.share.record.lock.duration.ms": LONG, "group.share.max.record.lock.duration.ms": LONG,
                 "group.share.session.timeout.ms": LONG, "group.share.max.session.timeout.ms": LONG}


@pytest.mark.compat(client="java", scenario="share.acknowledgements")
def test_a_killed_consumers_records_come_back_when_its_connection_closes(tmp_path, java4):
    """A KafkaShareConsumer holding records is killed (SIGKILL, its JVM): Kafka 4.1's share session
    cache ends its session when its connection closes and releases what it held
    (onMemberLeave), so the next member gets them at once with delivery count 1, while the dead
    member is still in the group and its locks had five minutes to run."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                           extra=LONG_TIMEOUTS) as broker:
        bs = broker.bootstrap_servers
        share_topic(bs, "share-killed", 1, "share-killed-G")
        produce(bs, "share-killed", [(0, b"k%d" % i) for i in range(3)])
        held_file = tmp_path / "held"
        with open(tmp_path / "holder.err", "wb") as err:
            holder = subprocess.Popen(java4.command("ShareAckDriver", "share.hold", bs, held_file=held_file),
                                      stdout=subprocess.DEVNULL, stderr=err)
            try:
                deadline = time.monotonic() + 120
                while not held_file.exists():
                    assert holder.poll() is None, (tmp_path / "holder.err").read_text()[-2000:]
                    assert time.monotonic() < deadline, "the holder polled nothing"
                    time.sleep(0.1)
            finally:
                holder.kill()
                holder.wait(30)
        held = dict(line.split(":") for line in held_file.read_text().split())
        assert held and set(held.values()) == {"1"}
        out = java4.run("ShareAckDriver", ["share.take"], bs, timeout=200, records=3)
        members = describe_share_group(bs, "share-killed-G").members
    result = out["results"]["share.take"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    deliveries = result["observed"]["deliveries"]
    assert {v: deliveries.get(v) for v in held} == {v: [1] for v in held}
    assert len(members) == 1  # the killed member: its group session had not timed out


IDLE_SETTINGS = {"group.share.record.lock.duration.ms": LONG, "group.share.max.record.lock.duration.ms": LONG,
                 "group.share.session.timeout.ms": "3000", "group.share.min.session.timeout.ms": "3000",
                 "group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}


@pytest.mark.compat(client="java", scenario="share.groups")
def test_an_idle_consumer_keeps_its_share_session_and_acknowledges(tmp_path, java4):
    """A KafkaShareConsumer in explicit mode holds records and stops polling for longer than
    group.share.session.timeout.ms (3 s; the wait is on a witness member timing out of the group):
    Kafka 4.1 keeps its share session (KAFKA-19159), so its records stay its own and its commit
    succeeds."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                           extra=IDLE_SETTINGS) as broker:
        bs = broker.bootstrap_servers
        share_topic(bs, "share-idle", 1, "share-idle-G")
        produce(bs, "share-idle", [(0, b"i%d" % i) for i in range(3)])
        held_file, go_file, out = tmp_path / "held", tmp_path / "go", {}
        driver = threading.Thread(target=lambda: out.update(java4.run(
            "ShareAckDriver", ["share.idle"], bs, timeout=240, held_file=held_file, go_file=go_file)))
        driver.start()
        try:
            deadline = time.monotonic() + 120
            while not held_file.exists():
                assert driver.is_alive() and time.monotonic() < deadline, "the driver polled nothing"
                time.sleep(0.1)
            outlast_share_session_timeout(bs, "share-idle-G", "share-idle")
            assert len(describe_share_group(bs, "share-idle-G").members) == 1  # the idle consumer heartbeats on
        finally:
            go_file.touch()
            driver.join(240)
        start = share_start_offset(bs, "share-idle-G", "share-idle")
    result = out["results"]["share.idle"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    assert result["observed"]["deliveries"] == {"i0": [1], "i1": [1], "i2": [1]}
    assert result["observed"]["committed"] == {"share-idle-0": "none"}
    assert start == 3  # all three accepted, none released


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
