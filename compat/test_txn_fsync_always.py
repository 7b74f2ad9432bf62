"""Stock clients against a broker serving --fsync always, where the transactions the coordinator
ends by itself and WriteTxnMarkers' markers are fsynced by the group commit off the event loop
(shim.txn_steps, shim.apis.k27_write_txn_markers): librdkafka's transaction that outlives its
transaction.timeout.ms, and one a second producer's init_transactions fences, are aborted with
each step written once the one before is on disk (PrepareAbort, ABORT marker, CompleteAbort);
Java's transactional producer (3.9.1) is fenced by the broker's abort of its timed-out transaction
and its Admin.abortTransaction (WriteTxnMarkers) succeeds. No segment file is fsynced on the loop."""

from __future__ import annotations

import threading
import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.support import wait_for
from shim.broker import BrokerThread
from shim.coordinators.txn.state import TxnState
from shim.storage import fs
from tests.test_produce_group_commit import RecordingDisk

pytestmark = pytest.mark.shim_only("watches the broker's own disk")
TXN_LOG = "__transaction_state-"
FENCED = {"org.apache.kafka.common.errors.ProducerFencedException",
          "org.apache.kafka.common.errors.InvalidProducerEpochException"}


@pytest.fixture
def broker(tmp_path):
    """A broker under --fsync always whose disk records every write and fsync, the loop's thread known."""
    disk = RecordingDisk()
    previous = fs.use(disk)
    try:
        with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", fsync="always",
                          transaction_abort_check_interval_ms=200) as b:
            disk.loop_thread = b.call(threading.get_ident)
            disk.on_loop.clear()
            b.disk = disk
            yield b
    finally:
        fs.use(previous)


def _topic(broker) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for f in admin.create_topics([NewTopic(name, 1, 1)]).values():
        f.result(30)
    return name


def _producer(broker, txn_id, **extra) -> Producer:
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": txn_id, **extra})
    p.init_transactions(30)
    return p


def _open(broker, txn_id, topic, **extra) -> Producer:
    p = _producer(broker, txn_id, **extra)
    p.begin_transaction()
    p.produce(topic, b"t-1", partition=0)
    assert p.flush(30) == 0
    return p


def _state(broker, txn_id):
    return broker.call(lambda: broker.node.txn.txns[txn_id].state)


def _aborted_in_order(broker, topic, start):
    """PrepareAbort, the ABORT marker and CompleteAbort written after ``start``, each once the one
    before was fsynced, and nothing fsynced on the loop."""
    events = list(broker.disk.events)
    writes = [(i, str(e[1])) for i, e in enumerate(events) if i >= start and e[0] == "write"]
    prepare = next(i for i, name in writes if TXN_LOG in name)
    marker = next(i for i, name in writes if i > prepare and f"/{topic}-0/" in name)
    complete = next(i for i, name in writes if i > marker and TXN_LOG in name)

    def synced(part, after, before):
        return any(e[0] == "fsync-end" and part in str(e[1]) and after < e[2] and i < before
                   for i, e in enumerate(events))
    assert synced(TXN_LOG, prepare, marker)
    assert synced(f"/{topic}-0/", marker, complete)
    assert broker.disk.on_loop == []


def _end(broker, topic) -> int:
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"g-{uuid.uuid4()}"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()


def test_librdkafka_transaction_timed_out_is_aborted_off_the_loop(broker):
    topic = _topic(broker)
    p = _open(broker, "timeout", topic, **{"transaction.timeout.ms": 1000})
    start = len(broker.disk.events)
    wait_for(lambda: _state(broker, "timeout") is TxnState.COMPLETE_ABORT, 20, 0.05, "the broker's abort")
    _aborted_in_order(broker, topic, start)
    assert _end(broker, topic) == 2  # t-1 and the ABORT marker
    with pytest.raises(KafkaException):  # fenced by the abort's epoch bump
        p.commit_transaction(10)


def test_librdkafka_fencing_init_transactions_aborts_off_the_loop(broker):
    topic = _topic(broker)
    _open(broker, "fenced", topic)
    start = len(broker.disk.events)
    fencer = _producer(broker, "fenced")  # retried on CONCURRENT_TRANSACTIONS until the abort completed
    assert _state(broker, "fenced") is TxnState.EMPTY  # the fencer's epoch, after the CompleteAbort
    _aborted_in_order(broker, topic, start)
    fencer.begin_transaction()
    fencer.produce(topic, b"fencer-1", partition=0)
    fencer.commit_transaction(30)
    assert _end(broker, topic) == 4


def test_java_admin_abort_transaction_writes_its_marker_off_the_loop(broker, java_drivers):
    out = java_drivers.run("ReferenceDriver", "admin.abort_transaction", broker.bootstrap_servers, timeout=300,
                           prefix="fsync", parallel=1, timeout_s=120)
    result = out["results"]["admin.abort_transaction"]
    assert result["ok"], result
    obs = result["observed"]
    assert (obs["after_commit"], obs["while_open"], obs["abort"], obs["after_abort"]) == (1, 1, None, 2)
    assert obs["end"] == 5 and obs["abort_again"] is None  # the Admin's two WriteTxnMarkers both answered
    assert broker.disk.on_loop == []


def test_java_transaction_timed_out_is_aborted_off_the_loop(broker, java_drivers):
    """KafkaDriver's txn.timeout (kafka-clients 3.9.1, transaction.timeout.ms=2000): the broker's
    abort of the open transaction, as compat/test_java_clients.py expects it, under --fsync always."""
    out = java_drivers.run("KafkaDriver", "txn.timeout", broker.bootstrap_servers, timeout=300, prefix="fsync",
                           parallel=1, timeout_s=90)
    result = out["results"]["txn.timeout"]
    assert result["ok"], result
    obs = result["observed"]
    assert obs["aborted_by_broker"] is True and obs["state_after_timeout"] == "COMPLETE_ABORT", obs
    assert (obs["lso_after"], obs["leo_after"]) == (2, 2) and obs["read_committed"] == []
    for failure in (obs["send_error"], obs["commit_error"]):  # fenced by the abort's epoch bump
        assert failure is not None and FENCED & set(failure["chain"]), failure
    assert broker.disk.on_loop == []
