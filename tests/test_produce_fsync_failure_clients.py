"""A real producer against a broker whose group-commit fsync fails (shim.storage.group_commit):
its message is never reported delivered, and no consumer can read it."""

from __future__ import annotations

from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from shim.broker import BrokerThread
from shim.storage import fs
from tests.test_produce_group_commit import FailingDisk


def test_librdkafka_never_sees_a_message_whose_fsync_failed_delivered(tmp_path):
    disk = FailingDisk()
    previous = fs.use(disk)
    try:
        with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", fsync="always") as broker:
            admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
            for f in admin.create_topics([NewTopic("t", 1, 1)]).values():
                f.result(30)
            reports = []
            producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                                 "message.timeout.ms": 3000, "retry.backoff.ms": 100})
            producer.produce("t", b"v", partition=0, on_delivery=lambda err, msg: reports.append(err))
            assert producer.flush(30) == 0
            assert disk.failures == 1
            [err] = reports
            # retried (KAFKA_STORAGE_ERROR is retriable) until the message timed out; never delivered
            assert err is not None and err.code() in (KafkaError._MSG_TIMED_OUT, KafkaError.KAFKA_STORAGE_ERROR), err
            plog = broker.call(lambda: broker.node.logs.get("t", 0))
            assert broker.call(lambda: plog.high_watermark) == 0
    finally:
        fs.use(previous)
