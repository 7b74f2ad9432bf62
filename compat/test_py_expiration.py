"""Transactional id and producer id expiration with the Python clients, on brokers started with
short expirations as Apache Kafka's TransactionsExpirationTest and ProducerIdExpirationTest start
theirs: confluent-kafka (librdkafka) recovers from INVALID_PRODUCER_ID_MAPPING after its
transactional id expired; kafka-python's idempotent producer goes on after the partition forgot it.
Each waits on what ListTransactions, DescribeTransactions and DescribeProducers report."""

from __future__ import annotations

import struct
import time

import pytest

import shim
from compat.support import recv_frame
from compat.txn_clients import wait_for
from compat.wire import Wire
from shim.configs.properties import config_from_properties
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, encode_request, make, request_class

INTERVALS = {"transaction.remove.expired.transaction.cleanup.interval.ms": "200",
             "producer.id.expiration.check.interval.ms": "200"}


def broker(tmp_path, **props):
    config = config_from_properties({**INTERVALS, **props}, shim.BrokerConfig(
        data_dir=tmp_path / "data", listen="127.0.0.1:0", group_initial_rebalance_delay_ms=0))
    return shim.BrokerThread(config)


def listed(wire, tid) -> bool:
    r = wire.call(66, 0, state_filters=(), producer_id_filters=())
    return tid in {s.transactional_id for s in r.transaction_states}


def describe(wire, tid):
    """DescribeTransactions of ``tid``, decoded with kafka-python's classes (kio refuses the -1 start
    time Kafka sends with an error or an Empty state)."""
    from kafka.protocol.admin.transactions import DescribeTransactionsResponse

    request = make(request_class(65, 0), transactional_ids=(tid,))
    payload = encode_request(RequestHeader(65, 0, 1, "expiration"), request)
    wire.sock.sendall(struct.pack(">i", len(payload)) + payload)
    (state,) = DescribeTransactionsResponse.decode(recv_frame(wire.sock), version=0, header=True).transaction_states
    return state


@pytest.mark.shim_only("starts a broker with short expirations")
@pytest.mark.compat(client="confluent-kafka", scenario="txn.id_expiration")
def test_confluent_kafka_recovers_from_an_expired_transactional_id(tmp_path):
    import confluent_kafka as ck

    with broker(tmp_path, **{"transactional.id.expiration.ms": "2000"}) as b:
        wire = Wire(b.bootstrap_servers)
        wire.create_topic("t", 2)
        p = ck.Producer({"bootstrap.servers": b.bootstrap_servers, "transactional.id": "ck-exp"})
        try:
            p.init_transactions(20)
            p.begin_transaction()
            p.produce("t", b"aborted", partition=0)
            p.flush(20)
            p.abort_transaction(20)
            aborted = describe(wire, "ck-exp")
            assert aborted.transaction_state == "CompleteAbort"
            wait_for(lambda: not listed(wire, "ck-exp"), 30, 0.05, "ck-exp expired")
            assert describe(wire, "ck-exp").error_code == ErrorCode.transactional_id_not_found

            p.begin_transaction()  # AddPartitionsToTxn: INVALID_PRODUCER_ID_MAPPING, abortable
            p.produce("t", b"refused", partition=1)
            with pytest.raises(ck.KafkaException) as info:
                p.commit_transaction(20)
            error = info.value.args[0]
            assert error.code() == ck.KafkaError.INVALID_PRODUCER_ID_MAPPING and error.txn_requires_abort(), error
            p.abort_transaction(20)  # InitProducerId with its old id and epoch: a new producer id

            p.begin_transaction()
            for i in range(3):
                p.produce("t", b"committed-%d" % i, partition=i % 2)
            p.commit_transaction(20)
        finally:
            p.flush(5)
        after = describe(wire, "ck-exp")
        assert (after.transaction_state, after.producer_epoch) == ("CompleteCommit", 0)
        assert after.producer_id != aborted.producer_id
        c = ck.Consumer({"bootstrap.servers": b.bootstrap_servers, "group.id": "ck-exp-read",
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
        try:
            c.subscribe(["t"])
            values: list[bytes] = []
            deadline = time.monotonic() + 30
            while len(values) < 3 and time.monotonic() < deadline:
                m = c.poll(0.5)
                if m is not None and m.error() is None:
                    values.append(m.value())
        finally:
            c.close()
        assert sorted(values) == [b"committed-0", b"committed-1", b"committed-2"]
        wire.close()


@pytest.mark.shim_only("starts a broker with short expirations")
@pytest.mark.compat(client="kafka-python", scenario="producer.id_expiration")
def test_kafka_python_idempotent_producer_after_its_state_expired(tmp_path):
    from kafka import KafkaProducer

    with broker(tmp_path, **{"producer.id.expiration.ms": "1000"}) as b:
        wire = Wire(b.bootstrap_servers)
        wire.create_topic("t", 1)
        p = KafkaProducer(bootstrap_servers=b.bootstrap_servers, request_timeout_ms=10_000)  # idempotent
        try:
            assert p.send("t", b"one", partition=0).get(20).offset == 0
            (state,) = wire.describe_producers("t", 0)
            assert state.last_sequence == 0
            wait_for(lambda: wire.describe_producers("t", 0) == [], 30, 0.05, "the producer expired")
            # its next sequence, 1, from a producer the partition no longer knows: taken
            assert p.send("t", b"two", partition=0).get(20).offset == 1
        finally:
            p.close(5)
        (again,) = wire.describe_producers("t", 0)
        assert (again.producer_id, again.producer_epoch, again.last_sequence) == (state.producer_id, 0, 1)
        wire.close()
