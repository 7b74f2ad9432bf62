"""A share consumer that dies (SIGKILL) gives its records back when its connection closes, as Kafka
4.1's share session cache does (its disconnect listener, SharePartitionManager.onMemberLeave): the
next member gets them at once with the delivery count they had, long before the acquisition lock
or the dead member's group session would time out (both five minutes here). confluent-kafka's
ShareConsumer in a child process holds the records; synchronised on its output and on the
records the other member polls."""

from __future__ import annotations

import select
import subprocess
import sys
import time

import pytest

from compat.share_support import describe_share_group, poll_until, produce, share_consumer, share_topic

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="share.groups"),
              pytest.mark.shim_only("sets the broker's share-group timeouts")]

LONG = "300000"  # ms: no lock or member session times out while the test runs
TIMEOUTS = {"group.share.record.lock.duration.ms": LONG, "group.share.max.record.lock.duration.ms": LONG,
            "group.share.session.timeout.ms": LONG, "group.share.max.session.timeout.ms": LONG,
            "group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}

# polls the records in explicit mode, names them on stdout, never acknowledges, waits to be killed
HOLDER = """
import sys, confluent_kafka as ck
c = ck.ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                      "share.acknowledgement.mode": "explicit"})
c.subscribe([sys.argv[3]])
while True:
    got = [m for m in c.poll(0.2) if m.error() is None]
    if got:
        print(" ".join("%s:%d" % (m.value().decode(), m.delivery_count()) for m in got), flush=True)
        sys.stdin.read()
"""


def _first_line(proc, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while not select.select([proc.stdout], [], [], 0.5)[0]:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the holder polled nothing"
    return proc.stdout.readline().decode().strip()


def test_a_killed_consumers_records_come_back_when_its_connection_closes(tmp_path):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path / "share", listen="127.0.0.1:0", kafka_version="4.1", extra=TIMEOUTS) as b:
        bs = b.bootstrap_servers
        share_topic(bs, "killed", 1, "g-killed")
        produce(bs, "killed", [(0, b"k%d" % i) for i in range(3)])
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, bs, "g-killed", "killed"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            held = dict(v.split(":") for v in _first_line(holder).split())
        finally:
            holder.kill()
            holder.wait(30)
            for stream in (holder.stdin, holder.stdout, holder.stderr):
                stream.close()
        assert held and set(held.values()) == {"1"}
        other, again = share_consumer(bs, "g-killed", explicit=True), {}

        def take(i, c, m):
            again[m.value().decode()] = m.delivery_count()
            c.acknowledge(m)

        try:
            other.subscribe(["killed"])
            poll_until([other], lambda: set(held) <= set(again), take)
            other.commit_sync()
            # the dead member is still in the group: its records came back with its connection
            assert len(describe_share_group(bs, "g-killed").members) == 2
        finally:
            other.close()
        assert {v: again[v] for v in held} == {v: 1 for v in held}
