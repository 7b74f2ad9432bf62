"""A share partition left initializing by a crash is initialized again only after
``group.share.initialize.retry.interval.ms`` (Kafka 4.1: 30 s from the time the group coordinator
replayed the record), and then assigned and consumed.

The broker stops at the ``share.initializing`` crash point as the first member joins: the key-15
record says the partition is initializing, its share state was never written. After the restart
the member heartbeats on (every 500 ms) without an assignment, as Kafka's members do until the
interval has passed; ``advance_clock`` brings the retry forward, the next heartbeat initializes the
partition, a later one assigns it, and the consumer receives the records produced before the crash
(the group reads from earliest). Synchronised on the broker's request log and on the records.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.request

import pytest

from compat.share_support import describe_share_group, poll, produce, share_topic
from compat.support import wait_for
from compat.test_share_initialize import start_offsets
from shim.control import CRASH_EXIT_CODE

pytest.importorskip("confluent_kafka")

ARGS = ("--kafka-version", "4.1", "--override", "group.share.heartbeat.interval.ms=500",
        "--override", "group.share.min.heartbeat.interval.ms=500", "--control-listen", "127.0.0.1:0")
CONTROL = re.compile(r" control=(http://\S+)")
TOPIC = "share-init-retry"
VALUES = [b"before-%d" % i for i in range(3)]


def control(url: str, operation: str, **args) -> dict:
    request = urllib.request.Request(f"{url}/v1/ops/{operation}", data=json.dumps(args).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def assigned(bootstrap: str, group: str) -> bool:
    g = describe_share_group(bootstrap, group)
    return any(t.partitions for m in g.members for t in m.assignment.topic_partitions)


def heartbeats(url: str, client_id: str | None = None) -> int:
    args = {"api": "ShareGroupHeartbeat"} | ({"client_id": client_id} if client_id else {})
    return sum(1 for e in control(url, "requests", **args)["requests"] if e["error"] in (None, "NONE"))


def crash_while_initializing(shim_process, port, data_dir, group, join) -> None:
    """Start a broker, have ``join()`` make the first member join, and see the broker stop at the
    crash point."""
    broker = shim_process(data_dir, port=port, args=ARGS)
    bs = broker.wait_ready()
    share_topic(bs, TOPIC, 1, group)  # share groups on, the group reading from earliest
    produce(bs, TOPIC, [(0, v) for v in VALUES])
    control(CONTROL.search(broker.ready_line).group(1), "crash", point="share.initializing")
    join(bs)
    assert broker.wait(60) == CRASH_EXIT_CODE
    assert "crash point reached: stopped at share.initializing" in broker.stderr


def restart(shim_process, port, data_dir) -> tuple[str, str]:
    broker = shim_process(data_dir, port=port, args=ARGS)
    bs = broker.wait_ready()
    url = CONTROL.search(broker.ready_line).group(1)
    control(url, "log_requests")
    return bs, url


def held_back_then_retried(bs: str, url: str, group: str, client_id: str | None = None) -> dict:
    """Four heartbeats of the member leave the partition uninitialized and unassigned; then the
    clock moves on past the interval."""
    wait_for(lambda: heartbeats(url, client_id) >= 4, timeout=60, message="four heartbeats after the restart")
    assert start_offsets(bs, group) == {}  # not initialized: DescribeShareGroupOffsets lists nothing
    assert not assigned(bs, group)
    assert control(url, "advance_clock", ms=15_000, clock="groups")["share_initializations_due"] == []
    return control(url, "advance_clock", ms=30_000, clock="groups")


@pytest.mark.compat(client="confluent-kafka", scenario="share.durability")
@pytest.mark.shim_only("stops the broker process at a crash point")
def test_confluent_share_consumer_consumes_after_the_retry_interval(shim_process, free_port, tmp_path):
    import confluent_kafka as ck

    port, data_dir, group = free_port(), tmp_path / "broker", "g-init-retry"
    consumers = []

    def join(bs):
        c = ck.ShareConsumer({"bootstrap.servers": bs, "group.id": group, "reconnect.backoff.max.ms": 500})
        consumers.append(c)
        c.subscribe([TOPIC])  # librdkafka joins at once; the heartbeat stops the broker

    try:
        crash_while_initializing(shim_process, port, data_dir, group, join)
        bs, url = restart(shim_process, port, data_dir)
        due = held_back_then_retried(bs, url, group)
        assert due["share_initializations_due"] == [group]
        wait_for(lambda: assigned(bs, group), timeout=30, message="the assignment after the retry")
        assert start_offsets(bs, group) == {(TOPIC, 0): -1}
        got: list[bytes] = []
        wait_for(lambda: got.extend(m.value() for m in poll(consumers[0], 0.3)) or len(got) >= len(VALUES),
                 timeout=60, message="the records")
        assert got == VALUES
    finally:
        for c in consumers:
            c.close()


@pytest.mark.compat(client="java", scenario="share.durability")
@pytest.mark.shim_only("stops the broker process at a crash point")
def test_kafka_clients_4_share_consumer_consumes_after_the_retry_interval(shim_process, free_port, tmp_path, java4):
    """The member that waits out the interval is kafka-clients 4.x's KafkaShareConsumer
    (compat/java/ShareDriver.java), joining after the restart; the crash came with a librdkafka member."""
    import confluent_kafka as ck

    port, data_dir, group = free_port(), tmp_path / "broker", "share-init-retry-G"
    first = []

    def join(bs):
        c = ck.ShareConsumer({"bootstrap.servers": bs, "group.id": group})
        first.append(c)
        c.subscribe([TOPIC])

    crash_while_initializing(shim_process, port, data_dir, group, join)
    bs, url = restart(shim_process, port, data_dir)
    first[0].close()  # the librdkafka member leaves
    out: dict = {}
    runner = threading.Thread(target=lambda: out.update(java4.run(
        "ShareDriver", ["share.initialized.consume"], bs, timeout=300, timeout_s=120, topic=TOPIC, group=group)))
    runner.start()
    try:
        wait_for(lambda: any(e["client_id"] != "rdkafka" for e in control(url, "requests", api="ShareGroupHeartbeat")
                             ["requests"]), timeout=120, message="the Java member's heartbeat")
        java_client = next(e["client_id"] for e in control(url, "requests", api="ShareGroupHeartbeat")["requests"]
                           if e["client_id"] != "rdkafka")
        due = held_back_then_retried(bs, url, group, java_client)
        assert due["share_initializations_due"] == [group]
    finally:
        runner.join(200)
    result = out["results"]["share.initialized.consume"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    o = result["observed"]
    before = [v.decode() for v in VALUES]
    assert o["received"] and o["received"][:len(before)] == before[:len(o["received"])], o  # earliest: from the start
    assert o["offsets"][f"{TOPIC}-0"] >= len(VALUES), o
