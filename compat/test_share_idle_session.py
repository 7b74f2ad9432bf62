"""A share consumer that stops polling keeps its share session however long it idles, as in Kafka
4.1 (KAFKA-19159 removed the share session cache's time-based eviction): confluent-kafka's
ShareConsumer, in a child process, polls records in explicit mode and then sends nothing but its
heartbeats for longer than ``group.share.session.timeout.ms``; it still holds the records and its
acknowledgements commit. kafka-shim used to drop such a session and release its records.

Synchronised on state: a witness member heartbeats once after the consumer's last fetch, and the
test waits until the broker has timed it out of the group (the session timeout has run from a
moment later than the consumer's last use of its share session)."""

from __future__ import annotations

import select
import subprocess
import sys
import time

import pytest

from compat.share_support import (describe_share_group, outlast_share_session_timeout, produce, share_start_offset,
                                  share_topic)

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="share.groups"),
              pytest.mark.shim_only("sets the broker's share-group timeouts")]

LONG = "300000"  # ms: no acquisition lock times out while the test runs
SESSION = "3000"  # ms: group.share.session.timeout.ms, the idle time kafka-shim used to evict after
SETTINGS = {"group.share.record.lock.duration.ms": LONG, "group.share.max.record.lock.duration.ms": LONG,
            "group.share.session.timeout.ms": SESSION, "group.share.min.session.timeout.ms": SESSION,
            "group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}

# polls the records in explicit mode and names them; on a line from stdin accepts them, commits and
# prints each partition's result
HOLDER = """
import sys, confluent_kafka as ck
c = ck.ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                      "share.acknowledgement.mode": "explicit"})
c.subscribe([sys.argv[3]])
got = []
while not got:
    got = [m for m in c.poll(0.2) if m.error() is None]
print(" ".join("%s:%d" % (m.value().decode(), m.delivery_count()) for m in got), flush=True)
sys.stdin.readline()
for m in got:
    c.acknowledge(m)
result = c.commit_sync(30)
print(" ".join("%s-%d:%s" % (tp.topic, tp.partition, e) for tp, e in result.items()), flush=True)
c.close()
"""


def _line(proc, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while not select.select([proc.stdout], [], [], 0.5)[0]:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "the holder printed nothing"
    return proc.stdout.readline().decode().strip()


def test_an_idle_share_consumer_keeps_its_records_and_acknowledges_them(tmp_path):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path / "share", listen="127.0.0.1:0", kafka_version="4.1",
                      extra=SETTINGS) as b:
        bs = b.bootstrap_servers
        share_topic(bs, "idle", 1, "g-idle")
        produce(bs, "idle", [(0, b"i%d" % i) for i in range(3)])
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, bs, "g-idle", "idle"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            held = dict(v.split(":") for v in _line(holder).split())
            assert held == {"i0": "1", "i1": "1", "i2": "1"}
            outlast_share_session_timeout(bs, "g-idle", "idle")
            assert len(describe_share_group(bs, "g-idle").members) == 1  # the holder heartbeats on
            holder.stdin.write(b"ack\n")
            holder.stdin.flush()
            committed = _line(holder)
            assert committed == "idle-0:None", committed
            assert holder.wait(60) == 0, holder.stderr.read().decode()[-2000:]
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait(30)
            for stream in (holder.stdin, holder.stdout, holder.stderr):
                stream.close()
        assert share_start_offset(bs, "g-idle", "idle") == 3  # all three accepted, none released
