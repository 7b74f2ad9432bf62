"""confluent-kafka's ShareConsumer committing acknowledgements whose share-state write a failed
--fsync always job lost (the group commit's fsync got EIO): the broker rolls them back and answers
the partition COORDINATOR_NOT_AVAILABLE, the request NONE, as Kafka 4.1's share partition answers a
failed WriteShareGroupState (SharePartition.rollbackOrProcessStateUpdates, fetchPersisterError);
commit_sync reports the partition's error, and the records stay acquired by the consumer."""

from __future__ import annotations

import pytest

from compat.share_support import poll_until, produce, share_consumer, share_topic
from compat.test_offline_log_dir import FailAfterArming
from compat.test_share_groups import FAST_HEARTBEATS
from shim.storage import fs

ck = pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="share.groups"),
              pytest.mark.shim_only("fails the broker's own disk")]


def test_commit_sync_reports_a_lost_acknowledgement_per_partition(tmp_path):
    from shim import BrokerThread

    disk = FailAfterArming()
    previous = fs.use(disk)
    try:
        with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", kafka_version="4.1", fsync="always",
                          extra=FAST_HEARTBEATS) as broker:
            bs = broker.bootstrap_servers
            share_topic(bs, "acks", 1, "g-acks")
            produce(bs, "acks", [(0, b"a"), (0, b"b")])
            consumer = share_consumer(bs, "g-acks", explicit=True)
            try:
                consumer.subscribe(["acks"])
                seen = []
                poll_until([consumer], lambda: len(seen) >= 2, lambda i, c, m: seen.append(m))
                for m in seen:
                    consumer.acknowledge(m, ck.AcknowledgeType.ACCEPT)
                disk.armed = True  # the job with the acknowledgement's state write fails
                results = consumer.commit_sync(30)
                assert disk.failures == 1 and broker.call(lambda: broker.node.logs.offline)
                assert [(tp.topic, tp.partition) for tp in results] == [("acks", 0)]
                error = next(iter(results.values()))
                assert error is not None and error.args[0].code() == ck.KafkaError.COORDINATOR_NOT_AVAILABLE, error

                def held():
                    sp = next(sp for (g, t, p), sp in broker.node.share.partitions.items() if g == "g-acks")
                    return sorted((o, r.state.name) for o, r in sp.records.items())
                assert broker.call(held) == [(0, "ACQUIRED"), (1, "ACQUIRED")]  # rolled back, not accepted
            finally:
                consumer.close()
    finally:
        fs.use(previous)
