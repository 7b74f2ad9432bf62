"""SIGKILL a serving broker while its log cleaner is writing a cleaned segment, five times over one
data directory: the cleaner is slowed (log.cleaner.io.max.bytes.per.second, small chunks) so the
test can see a ``.cleaned`` file appear -- a round under way -- and kill the broker then. Every
restart must serve the partition with the latest acknowledged value of every key (acks=all,
fsync always) and no leftover of the interrupted swap; at least one kill must leave its ``.cleaned``
file behind, i.e. land before the round swapped it in. (tests/storage/test_cleaner_kill9.py kills
a partition at 20 chosen points of a round; this is the same through the server and a client.)"""

from __future__ import annotations



import pytest

from compat.compaction_clients import ck_consume, ck_produce
from compat.support import wait_for

pytestmark = pytest.mark.shim_only("kills the broker with SIGKILL while it cleans")

TOPIC = "kill9-compacted"
ARGS = ("--fsync", "always", "--override", "log.cleaner.backoff.ms=20",
        "--override", "log.cleaner.io.max.bytes.per.second=12000", "--override", "log.cleaner.io.buffer.size=1024")
CONFIGS = {"cleanup.policy": "compact", "segment.bytes": "1000", "min.cleanable.dirty.ratio": "0.01",
           "delete.retention.ms": "0"}


def _create(bootstrap):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1, config=CONFIGS)])[TOPIC].result(20)


def _end(bootstrap):
    import confluent_kafka as ck

    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "kill9-compacted-end"})
    try:
        return c.get_watermark_offsets(ck.TopicPartition(TOPIC, 0), 10)[1]
    finally:
        c.close()


def test_kill9_while_cleaning_loses_nothing_acknowledged(shim_process, tmp_path):
    data = tmp_path / "data"
    expected: dict[bytes, bytes | None] = {}
    kills = mid_round = 0
    for round_no in range(5):
        broker = shim_process(data, args=ARGS)
        bootstrap = broker.wait_ready()
        if round_no == 0:
            _create(bootstrap)
        else:  # what the last broker acknowledged is there, at its latest value
            got = {k: v for _, k, v in ck_consume(bootstrap, TOPIC, "read_uncommitted", _end(bootstrap))}
            for key, value in expected.items():
                assert got.get(key) == value, (round_no, key)
        writes = [(b"k%d" % ((i * 5 + round_no) % 17), None if i % 13 == 12 else b"r%d-%d" % (round_no, i))
                  for i in range(120)]
        ck_produce(bootstrap, TOPIC, writes)  # each flushed: acknowledged (acks=all, fsynced)
        expected.update(writes)
        partition = data / f"{TOPIC}-0"
        try:
            wait_for(lambda: any(partition.glob("*.log.cleaned")), 60, 0.002, "a cleaned segment being written")
            broker.kill9()
            kills += 1
            mid_round += any(partition.glob("*.log.cleaned"))  # the round had not swapped its segments in
        finally:
            broker.cleanup()
    broker = shim_process(data, args=ARGS)
    bootstrap = broker.wait_ready()
    assert not any((data / f"{TOPIC}-0").glob("*.cleaned"))
    got = {k: v for _, k, v in ck_consume(bootstrap, TOPIC, "read_uncommitted", _end(bootstrap))}
    for key, value in expected.items():
        assert got.get(key) == value, key  # tombstones: present as None, or gone (delete.retention.ms=0)
    print(f"{mid_round} of {kills} kills left a .cleaned segment behind")
    assert kills == 5 and mid_round >= 1
    broker.cleanup()

