"""Stock clients against a broker whose log directory failed (a group-commit fsync got EIO,
shim.storage.group_commit): librdkafka's metadata shows every partition leaderless, its consumer
finds no leader to read from and its producer delivers nothing; Java's Admin
describes the directory as failed (KafkaStorageException) and the partitions without a leader, as a
Kafka broker answers once the controller handled the directory's failure."""

from __future__ import annotations

import errno
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from shim.broker import BrokerThread
from shim.storage import fs
from tests.test_produce_group_commit import RecordingDisk

pytestmark = pytest.mark.shim_only("fails the broker's own disk")


class FailAfterArming(RecordingDisk):
    """The real disk until armed; then the next fsync of a segment file fails (EIO)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.failures = 0

    def fsync(self, fd):
        if self.armed and not self.failures and str(self.names.get(fd, "")).endswith(".log"):
            self.failures += 1
            raise OSError(errno.EIO, "Input/output error")
        super().fsync(fd)


@pytest.fixture
def failed(tmp_path):
    """A broker with topic "t" (2 partitions, one record in partition 0) whose directory then failed."""
    disk = FailAfterArming()
    previous = fs.use(disk)
    try:
        with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", fsync="always") as broker:
            bootstrap = broker.bootstrap_servers
            admin = AdminClient({"bootstrap.servers": bootstrap})
            for f in admin.create_topics([NewTopic("t", 2, 1)]).values():
                f.result(30)
            producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 3000})
            reports = []
            producer.produce("t", b"kept", partition=0, on_delivery=lambda err, msg: reports.append(err))
            assert producer.flush(30) == 0 and reports == [None]
            disk.armed = True
            producer.produce("t", b"lost", partition=1, on_delivery=lambda err, msg: reports.append(err))
            assert producer.flush(30) == 0 and reports[1] is not None
            assert disk.failures == 1 and broker.call(lambda: broker.node.logs.offline)
            yield broker, reports[1]
    finally:
        fs.use(previous)


def test_librdkafka_sees_every_partition_leaderless_and_reads_nothing(failed):
    broker, lost = failed
    assert lost.code() in (KafkaError._MSG_TIMED_OUT, KafkaError.KAFKA_STORAGE_ERROR), lost
    md = AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics("t", timeout=10)
    assert [p.leader for p in md.topics["t"].partitions.values()] == [-1, -1]
    assert {p.error.code() for p in md.topics["t"].partitions.values()} == {KafkaError.LEADER_NOT_AVAILABLE}
    assert len(md.brokers) == 1  # the broker is up: only its directory failed
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"g-{uuid.uuid4()}",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition("t", 0, 0)])
        # the watermarks need a leader, and there is none (a broker with the directory online answers 0..1)
        with pytest.raises(KafkaException) as raised:
            consumer.get_watermark_offsets(TopicPartition("t", 0), timeout=10)
        assert raised.value.args[0].code() == KafkaError._UNKNOWN_PARTITION
    finally:
        consumer.close()


def test_java_admin_describes_the_directory_failed(failed, java_drivers):
    broker, _ = failed
    out = java_drivers.run("AdminDriver", "admin.log_dirs_offline", broker.bootstrap_servers, timeout=300,
                           timeout_s=120, topic="t")
    assert out["kafka_clients"] == "3.9.1"
    result = out["results"]["admin.log_dirs_offline"]
    assert result["ok"], result
    observed = result["observed"]
    data_dir = broker.call(lambda: str(broker.node.logs.data_dir.absolute()))
    assert observed["dirs"] == {data_dir: {"error": "org.apache.kafka.common.errors.KafkaStorageException",
                                           "replicas": 0, "total_bytes_present": False}}
    assert observed["leaders"] == [None, None]
